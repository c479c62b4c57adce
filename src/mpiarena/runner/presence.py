"""Which mpiarena runs measure on this machine now. A run registers while it measures (a file
per run in the machine's folder, paths.machine_dir, whatever its MPIARENA_HOME; removed when it
ends, or by its watchdog's sweep if the run was killed), so that another run can warn that its
figures share the machine with someone else's load.

A run started with MPIARENA_PRESENCE_GROUP set registers in that group and counts only the runs
of its group (two test sessions on one machine, say, each checking what its own runs record);
every run still counts it, as one without the variable counts every run. Its sweep likewise
takes only what crashed runs of its group left (runner.cleanup.sweep_stale)."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from ..base import paths
from ..system.owners import Owner

GROUP_VAR = "MPIARENA_PRESENCE_GROUP"


@dataclass(frozen=True)
class Measuring:
    """A run that is measuring."""

    owner: Owner
    since: float  # when it began, seconds since the epoch
    command: str  # its command line
    where: str  # its topology: local, an emulated cluster's label, a hosts file
    group: str = ""  # its MPIARENA_PRESENCE_GROUP ("": none)


def group() -> str:
    """This process's presence group ("": none)."""
    return os.environ.get(GROUP_VAR, "")


def _dir() -> Path:
    return paths.shared_dir(paths.machine_dir() / "measuring")


@contextlib.contextmanager
def measuring(command: str, where: str) -> Iterator[Measuring]:
    """Registered as measuring for the life of the block."""
    me = Measuring(Owner.me(), time.time(), command, where, group())
    path = _dir() / f"{me.owner}.json"
    partial = path.with_suffix(".partial")
    fields = {**asdict(me), "owner": str(me.owner)}
    if not me.group:  # as earlier versions, which refuse a field they do not know, wrote it
        del fields["group"]
    partial.write_text(json.dumps(fields))
    os.replace(partial, path)
    try:
        yield me
    finally:
        path.unlink(missing_ok=True)


def _registered() -> Iterator[tuple[Path, Measuring]]:
    """Every registration on file, live or not (unreadable ones skipped)."""
    for path in _dir().glob("*.json"):
        try:
            fields = json.loads(path.read_text())
            owner = Owner.parse(fields.pop("owner"))
            if owner is not None:
                yield path, Measuring(owner, **fields)
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            continue


def others_measuring() -> list[Measuring]:
    """The other mpiarena runs measuring now on this machine, earliest first (in a group: those
    of the group only); those whose process is gone (killed, or its pid reused) are not
    counted."""
    mine = group()
    found = [m for _, m in _registered() if m.owner.pid != os.getpid() and m.owner.alive()
             and (not mine or m.group == mine)]
    return sorted(found, key=lambda m: m.since)


def forget_stale() -> None:
    """Remove the registrations of runs that died without removing their own."""
    for path, measuring in _registered():
        if not measuring.owner.alive():
            path.unlink(missing_ok=True)
