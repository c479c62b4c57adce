"""The scripted core: a stand-in for the C core that speaks its line protocol (runner/job.py,
kernels/driver.c and cell.c) from a script of levels, recorded observations and faults, with no
library and no second process. platform/build.py copies it, as `arena`, beside its script,
`script.toml`, where the rank user runs it; it imports nothing of mpiarena.

The script (a TOML file; docs/scripted.md):
  version = "scripted 1.0"     what the library says it is
  latency = 1e-6               seconds per iteration at size 0
  per_byte = 1e-10             seconds per byte more
  spread = 0.02                relative spread between launches (seeded: a rerun reads the same)
  init = 0.02                  seconds from launch to each rank's init
  [scale]                      a benchmark's time, times this (default 1)
  [[recorded]]                 observations replayed: launch i reads seconds[i % len]
  bench = "pingpong", size = 0, seconds = [...]
  [[faults]]                   at = start | cell | quit; bench, size, launch narrow a cell fault
  do = crash | killed | exit | hang | garbage | na | invalid
"""

from __future__ import annotations

import os
import random
import signal
import socket
import sys
import time
import tomllib
from pathlib import Path
from typing import Any, NoReturn

Script = dict[str, Any]


def _escaped(text: str) -> str:
    """A field as driver.c's escape_put writes it."""
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _say(*fields: object) -> None:
    print("\t".join(str(f) for f in fields), flush=True)


def _launch_number(name: str) -> int:
    """Which launch of this library in the run this is (0 first): one byte appended per launch
    to a file in the run's scratch directory (ARENA_IO_DIR)."""
    folder = os.environ.get("ARENA_IO_DIR")
    if not folder:
        return 0
    fd = os.open(Path(folder, f"{name}.launches"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, b".")
        return os.fstat(fd).st_size - 1
    finally:
        os.close(fd)


def _fault(script: Script, at: str, launch: int, cell: dict[str, str] | None = None) -> str:
    """What the script plants here ("" for nothing)."""
    for fault in script.get("faults", []):
        if fault.get("at", "cell") != at or fault.get("launch", launch) != launch:
            continue
        if cell is not None and (fault.get("bench", cell["bench"]) != cell["bench"]
                                 or int(fault.get("size", cell["size"])) != int(cell["size"])):
            continue
        return str(fault["do"])
    return ""


def _die(how: str, where: str) -> NoReturn:
    """End as a core that fails there does: a signal, an abort's exit status, or a hang."""
    if how == "hang":
        while True:
            time.sleep(3600)
    print(f"scripted core: {how} {where}", file=sys.stderr, flush=True)
    if how in ("crash", "killed"):
        os.kill(os.getpid(), signal.SIGSEGV if how == "crash" else signal.SIGKILL)
    os._exit(1)


def _seconds(script: Script, cell: dict[str, str], launch: int, i: int) -> float:
    """The cell's seconds per iteration in observation i of this launch (the noise seeded by
    the library's name too: two libraries of one level draw apart)."""
    bench, size = cell["bench"], int(cell["size"])
    for rec in script.get("recorded", []):
        if rec["bench"] == bench and int(rec["size"]) == size:
            return float(rec["seconds"][launch % len(rec["seconds"])])
    base = float(script.get("latency", 1e-6)) + size * float(script.get("per_byte", 1e-10))
    noise = random.Random(f"{script['name']} {launch} {bench} {size} {i}").gauss(0.0, 1.0)
    factor = max(0.5, 1.0 + float(script.get("spread", 0.02)) * noise)
    return base * float(script.get("scale", {}).get(bench, 1.0)) * factor


def _cell(script: Script, words: list[str], np: int, launch: int) -> None:
    """One `cell` command answered: observations, spent seconds, done (or the planted fault)."""
    cell = dict(w.split("=", 1) for w in words if "=" in w)
    cid = cell["id"]
    fault = _fault(script, "cell", launch, cell)
    if fault in ("crash", "killed", "exit", "hang"):
        _die(fault, f"in {cell['bench']}")
    if fault == "garbage":
        _say("obs", cid, "#garbage#")
        _die("hang", "after garbage")
    if fault == "na":
        _say("done", cid, "na", "not offered by this library")
        return
    k = int(cell.get("k", 0)) or 100
    times = [_seconds(script, cell, launch, i) for i in range(int(cell["obs"]))]
    for i, t in enumerate(times):
        _say("obs", cid, i, k, *(f"{t * (1 + 0.001 * r):.9e}" for r in range(np)))
    timed = sum(times) * k
    _say("spent", cid, f"{timed * 0.1:.6e}", f"{timed * 1.05:.6e}", f"{timed:.6e}")
    if fault == "invalid":
        _say("done", cid, "invalid", "rank 1 received data that differ from what was sent")
    else:
        _say("done", cid, "ok", "")


def serve(script: Script, name: str) -> None:
    """Start as the core does (hello, version, ranks), answer commands until quit."""
    launch = _launch_number(name)
    np = int(os.environ.get("ARENA_NP", "2"))
    started = os.environ.get("ARENA_T0")
    if fault := _fault(script, "start", launch):
        if fault == "garbage":
            _say("hello", "scripted", "two", "?")
        _die("hang" if fault == "garbage" else fault, "at start-up")
    init = float(script.get("init", 0.02))
    since = init if started is None else max(init, time.time() - float(started))
    _say("hello", "scripted", np, "1.000000000e-09", "single", "2.000000000e-08")
    _say("version", _escaped(str(script.get("version", "scripted 1.0"))))
    for r in range(np):
        _say("rank", r, socket.gethostname(), os.getpid(), r, f"{init / 2:.9e}",
             f"{since:.9e}", 0)
    for line in sys.stdin:
        words = line.split()
        if not words or words[0] == "quit":
            break
        if words[0] == "config":
            _say("config", "unavailable", "the scripted core has no tool interface")
        elif words[0] == "cell":
            _cell(script, words[1:], np, launch)
        else:
            _say("error", f"bad command: {line.strip()}")
    if fault := _fault(script, "quit", launch):
        _die(fault, "in finalize")
    for r in range(np):
        _say("finalize", r, f"{1e-4 * (1 + r):.9e}")


def main() -> None:
    here = Path(__file__).resolve().parent
    script = tomllib.loads((here / "script.toml").read_text())
    serve({**script, "name": here.name.rsplit("-", 1)[0]}, here.name)


if __name__ == "__main__":
    main()
