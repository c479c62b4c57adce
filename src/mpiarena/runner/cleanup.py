"""Leave nothing behind: every process a job started carries a token in its environment."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
from pathlib import Path

from ..base import paths
from ..base.tags import OWNER_VAR, TOKEN_VAR
from ..cluster import emulated
from ..impls.registry import families
from ..system.owners import Owner
from ..system.procs import alive, wait_until
from . import presence


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


def kill_tagged(token: str, grace: float = 1.0, var: str = TOKEN_VAR) -> list[int]:
    """SIGTERM, then SIGKILL, every process tagged with token; once all are gone, return the
    pids that were found."""
    seen: set[int] = set()
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        pids = tagged_pids(token, var)
        if not pids and not seen:
            break  # none: a job that exited on its own (every launch's end) needs no second look
        seen.update(pids)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        wait_until(lambda: not any(alive(p) for p in seen), within=wait)
        if not any(alive(p) for p in seen) and not tagged_pids(token, var):
            break
    return sorted(seen)


def _environ(pid_dir: Path) -> dict[str, str]:
    try:
        raw = (pid_dir / "environ").read_bytes().split(b"\0")
    except OSError:
        return {}
    pairs = (item.decode(errors="replace").partition("=") for item in raw if b"=" in item)
    return {k: v for k, _, v in pairs}


def _orphaned(owner: Owner | None) -> bool:
    """The mpiarena process named provably died (None, an unreadable name: not proven)."""
    return owner is not None and not owner.alive()


def owned_scratch(kind: str) -> Path:
    """A scratch directory named after this process, `run-OWNER-KIND-XXXX`: sweep_stale removes
    it once its owner is gone, however that one ended."""
    return Path(tempfile.mkdtemp(prefix=f"run-{Owner.me()}-{kind}-", dir=paths.scratch_dir()))


def scratch_owner(directory: Path) -> Owner | None:
    """The process an owned_scratch directory is named after (None: not one)."""
    name, _, rest = directory.name.partition("-")
    return Owner.parse(rest.partition("-")[0]) if name == "run" else None


def sweep_stale(scratch: Path, every_group: bool = False) -> int:
    """Kill what an earlier mpiarena left when it crashed (daemons, launchers, ranks), remove
    its scratch directory and what each family's daemons leave; return how many processes were
    killed. What belongs to an mpiarena that still runs, another user's or CI job's included,
    is left alone; in a presence group, so are the processes of other groups' crashed runs
    (another test session's is that session's to sweep), unless every_group."""
    mine = "" if every_group else presence.group()
    stale = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        env = _environ(entry)
        if _orphaned(Owner.parse(env.get(OWNER_VAR, ""))) and (
                not mine or env.get(presence.GROUP_VAR, "") == mine):
            stale.append(int(entry.name))
    for pid in stale:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    # the families' sweeps below look for live daemons
    wait_until(lambda: not any(alive(p) for p in stale), within=5.0)
    for run_dir in scratch.glob("run-*-*"):
        if _orphaned(scratch_owner(run_dir)):
            shutil.rmtree(run_dir, ignore_errors=True)
    if os.geteuid() == 0:  # emulated clusters of crashed runs: namespaces, sshd, ranks
        emulated.sweep_orphans()
    for family in families():  # what their daemons leave besides processes
        family.sweep_stale()
    presence.forget_stale()
    return len(stale)
