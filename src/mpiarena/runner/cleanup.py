"""Leave nothing behind: every process a job started carries a token in its environment."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from .. import users
from ..cluster import emulated

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


def kill_tagged(token: str, grace: float = 1.0, var: str = TOKEN_VAR) -> list[int]:
    """SIGTERM, then SIGKILL, every process tagged with token; once all are gone, return the
    pids that were found."""
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
            break
    return sorted(seen)


OWNER_VAR = "MPIARENA_OWNER"  # pid of the mpiarena process that started a job or daemon


def _environ(pid_dir: Path) -> dict[str, str]:
    try:
        raw = (pid_dir / "environ").read_bytes().split(b"\0")
    except OSError:
        return {}
    pairs = (item.decode(errors="replace").partition("=") for item in raw if b"=" in item)
    return {k: v for k, _, v in pairs}


def sweep_stale(scratch: Path) -> int:
    """Kill what an earlier mpiarena left when it crashed (daemons, launchers, ranks) and remove
    its scratch directory and LAM session directories; return how many processes were killed."""
    stale = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            owner = _environ(entry).get(OWNER_VAR, "")
            if owner.isdigit() and not alive(int(owner)):
                stale.append(int(entry.name))
    for pid in stale:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    for run_dir in scratch.glob("run-*-*"):
        owner = run_dir.name.split("-")[1]
        if owner.isdigit() and not alive(int(owner)):
            shutil.rmtree(run_dir, ignore_errors=True)
    _stale_ipc()
    if os.geteuid() == 0:  # emulated clusters of crashed runs: namespaces, sshd, ranks
        for name in emulated.orphaned():
            emulated.teardown(name)
    live = _lam_suffixes()
    for session in Path("/tmp").glob("lam-*-arena*"):
        if session.name.rsplit("-", 1)[-1] not in live:
            shutil.rmtree(session, ignore_errors=True)
    return len(stale)


def _lam_suffixes() -> set[str]:
    """Session suffixes of the lamd daemons running now."""
    found = set()
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if b"-sessionsuffix" in args[:-1]:
            found.add(args[args.index(b"-sessionsuffix") + 1].decode(errors="replace"))
    return found


def _stale_ipc() -> None:
    """System V objects of the rank user (LAM's usysv) when none of its processes is alive:
    ranks killed outright leave them, and stale ones made LAM's shared-memory RPI hang."""
    user = users.lookup()
    if user is None or os.geteuid() != 0:
        return
    for entry in Path("/proc").glob("[0-9]*/status"):
        try:
            if f"Uid:\t{user.uid}\t" in entry.read_text():
                return
        except OSError:
            continue
    for kind, table, column in (("m", "/proc/sysvipc/shm", 7), ("s", "/proc/sysvipc/sem", 4)):
        try:
            rows = [ln.split() for ln in Path(table).read_text().splitlines()[1:]]
        except OSError:
            continue
        for row in rows:
            if int(row[column]) == user.uid:
                subprocess.run(["ipcrm", f"-{kind}", row[1]], capture_output=True, check=False)
