#!/usr/bin/env python3
"""How long a 10-launch, 2-library `mpiarena program` comparison takes, against the programs' own
time (issue 26: <= 1.2x).

bench/app_program.c does a fixed amount of work (ROUNDS of COMPUTE multiply-adds each, then a
small MPI_Sendrecv and MPI_Allreduce) that lasts about --seconds (COMPUTE chosen from a bare
launch first). Then `mpiarena program --launches 10` (its default profiled launch per library
included) compares the libraries on it, in a fresh process as a user runs it, the source file
its PROGRAM (built per library by the command, from its cache when this bench ran before).
Prints the command's wall time against the sum of the timed launches' stored wall times (the
programs' own time), the ratio with PASS/MISS against --target, and where the rest goes:
interpreter start, build, cores, the profiled launches, the harness around each launch, the
runner's set-up, analysis, rendering. The phases are timed inside the command's process by
wrapping the functions it calls (this file run with --driver). Exit status 1 on a miss.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app_common import (
    DEFAULT_IMPLS,
    NP,
    SOURCE,
    bare,
    built,
    implementations,
    load_line,
    scratch,
    verdict,
)
from common import impl_option

from mpiarena.store import Store

ROUNDS = 2000  # app_program's rounds; the computation per round is calibrated


def driver(phases_file: Path, app_args: list[str]) -> None:
    """Run `mpiarena app_args` in this process, the time of its phases written to
    phases_file as JSON: {phase: [seconds, calls]} and when main() began (epoch seconds)."""
    from mpiarena.analysis import program as analysis
    from mpiarena.commands import main
    from mpiarena.platform import build
    from mpiarena.platform import program_build as app_build
    from mpiarena.report import program as report
    from mpiarena.runner import program as app

    spent: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])

    def timed(phase: str, owner: Any, name: str) -> None:
        fn: Callable[..., Any] = getattr(owner, name)

        def wrapper(*args: Any, **kw: Any) -> Any:
            began = time.monotonic()
            try:
                return fn(*args, **kw)
            finally:
                spent[phase][0] += time.monotonic() - began
                spent[phase][1] += 1
        setattr(owner, name, wrapper)

    timed("build", app_build, "build_programs")
    timed("cores", build, "build_core")
    timed("runner", app, "measure_app")
    timed("launches", app.ProgramRunner, "_launch")
    timed("analysis", analysis, "analyze")
    timed("rendering", report, "render")
    began = time.time()
    sys.argv = ["mpiarena", *app_args]
    try:
        main()
    finally:
        phases_file.write_text(json.dumps({"main_began": began, "phases": spent}))


def calibrate(impl_ids: list[str], seconds: float, work: Path) -> int:
    """COMPUTE for app_program ROUNDS COMPUTE to last about `seconds` with the first library."""
    impl = implementations(impl_ids)[0]
    probe = 200_000
    argv = built([impl], [str(ROUNDS), str(probe)])[impl.id].argv
    empty = built([impl], ["0"])[impl.id].argv
    bare(impl, argv, work)  # the first launch after a build is slow: not the one measured
    work_s = min(bare(impl, argv, work) for _ in range(2)) - \
        min(bare(impl, empty, work) for _ in range(2))  # the least disturbed of each
    return max(1, int(probe * (seconds - 0.1) / max(work_s, 1e-3)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    impl_option(parser, DEFAULT_IMPLS)
    parser.add_argument("--launches", type=int, default=10, help="mpiarena program --launches")
    parser.add_argument("--seconds", type=float, default=2.0, help="one launch, about")
    parser.add_argument("--target", type=float, default=1.2, help="allowed wall/program ratio")
    parser.add_argument("--driver", type=Path, help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args()
    if args.driver:
        driver(args.driver, rest[1:] if rest[:1] == ["--"] else rest)
        return 0

    ids = list(args.impl or DEFAULT_IMPLS)
    print(f"{len(ids)} libraries, {args.launches} launches each on {NP} ranks; {load_line()}")
    with scratch() as work:
        compute = calibrate(ids, args.seconds, work)
        built(implementations(ids), [str(ROUNDS), str(compute)])  # as when a user runs it again
        db, phases_file = work / "app.db", work / "phases.json"
        command = ["program", *(f"--impl={i}" for i in ids), "--np", str(NP), "--launches",
                   str(args.launches), "--db", str(db), "--", str(SOURCE), str(ROUNDS),
                   str(compute)]
        print(f"mpiarena {' '.join(command)}")
        began = time.time()
        done = subprocess.run([sys.executable, __file__, "--driver", str(phases_file), "--",
                               *command], capture_output=True, text=True)
        total = time.time() - began
        if done.returncode != 0:
            raise SystemExit(f"error: mpiarena program exited {done.returncode}:\n"
                             f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
        got = json.loads(phases_file.read_text())
        store = Store(db)
        try:
            launches = store.program_launches(store.resolve("latest"))
        finally:
            store.close()
    spent = {k: v[0] for k, v in got["phases"].items()}
    timed = [x.wall for x in launches if x.kind == "timed"]
    profiled = [x.wall for x in launches if x.kind == "profiled"]
    if len(timed) != len(ids) * args.launches or any(x.status != "ok" for x in launches):
        raise SystemExit("error: not every launch succeeded")
    own = sum(timed)
    ratio = total / own
    ok = ratio <= args.target
    startup = got["main_began"] - began
    harness = spent["launches"] - own - sum(profiled)
    setup = spent["runner"] - spent["launches"]
    parts = {"interpreter start and imports": startup, "build (cached)": spent["build"],
             "cores (cached)": spent["cores"],
             f"profiled launches ({len(profiled)})": sum(profiled),
             f"harness around the {len(launches)} launches": harness,
             "runner set-up and clean-up": setup, "analysis": spent["analysis"],
             "rendering": spent["rendering"]}
    parts["the rest (store, options, exit)"] = total - own - sum(parts.values())
    print(f"\ncommand wall {total:.2f} s; the {len(timed)} timed launches' own wall "
          f"{own:.2f} s (median {sorted(timed)[len(timed) // 2]:.2f} s per launch)")
    print(f"wall / programs' own time = {ratio:.3f}: {verdict(ok)} (target <= {args.target:g})")
    print(f"where the other {total - own:.2f} s went:")
    for what, t in parts.items():
        print(f"  {what:<36} {t:7.2f} s  ({100 * t / own:5.1f}% of the programs' time)")
    print(f"\n{load_line()} at the end")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
