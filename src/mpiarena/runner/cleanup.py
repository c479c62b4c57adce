"""Leave nothing behind: every process a job started carries a token in its environment."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

TOKEN_VAR = "MPIARENA_JOB"  # one per job
RUN_VAR = "MPIARENA_RUN"  # one per run: the final sweep


def tagged_pids(token: str, var: str = TOKEN_VAR) -> list[int]:
    """Processes whose environment carries var=token."""
    needle = f"{var}={token}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


def alive(pid: int) -> bool:
    """True while pid exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def kill_tagged(token: str, grace: float = 1.0, var: str = TOKEN_VAR) -> None:
    """SIGTERM, then SIGKILL, every process tagged with token; return once all are gone."""
    seen: set[int] = set()
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        pids = tagged_pids(token, var)
        seen.update(pids)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and any(alive(p) for p in seen):
            time.sleep(0.01)
        if not any(alive(p) for p in seen) and not tagged_pids(token, var):
            return
