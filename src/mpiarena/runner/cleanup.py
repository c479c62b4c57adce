"""Leave nothing behind: every process a job started carries a token in its environment."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

TOKEN_VAR = "MPIARENA_JOB"


def tagged_pids(token: str) -> list[int]:
    """Processes whose environment carries MPIARENA_JOB=token."""
    needle = f"{TOKEN_VAR}={token}".encode()
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


def kill_tagged(token: str, grace: float = 1.0) -> None:
    """SIGTERM then SIGKILL every process tagged with token, until none is left."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 2.0)):
        pids = tagged_pids(token)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + wait
        while pids and time.monotonic() < deadline:
            time.sleep(0.02)
            pids = tagged_pids(token)
        if not pids:
            return
