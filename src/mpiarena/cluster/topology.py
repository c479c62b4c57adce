"""Choose where a run's ranks go from --cluster / --hosts, and make sure it is undone."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..base.errors import ArenaError
from ..base.machine import cores
from ..base.records import LOCAL
from . import emulated, hosts, slurm
from .placement import Placement
from .spec import parse


class Topology(Protocol):
    @property
    def label(self) -> str: ...

    @property
    def cores(self) -> int:
        """Ranks it runs without oversubscribing a processor."""
        ...

    def placement(self, np: int) -> Placement | None: ...

    def prepare(self, binary: Path) -> None: ...

    def reap(self) -> int: ...


class Local:
    """This machine, ranks started by each launcher's local mode."""

    label = LOCAL

    @property
    def cores(self) -> int:
        return cores()

    def placement(self, np: int) -> Placement | None:
        return None

    def prepare(self, binary: Path) -> None:
        """The core is already here."""

    def reap(self) -> int:
        return 0


@dataclass(frozen=True)
class Where:
    """Where ranks run, as --cluster, --hosts and --slurm say; all empty: this machine."""

    cluster: str | None = None  # an emulated spec or the name of a cluster kept up
    hosts: str | None = None  # a hosts file
    slurm: bool = False  # inside a Slurm allocation

    def __post_init__(self) -> None:
        if sum(map(bool, (self.cluster, self.hosts, self.slurm))) > 1:
            raise ArenaError("choose one of --cluster, --hosts and --slurm")

    def __str__(self) -> str:
        if self.hosts:
            return f"hosts file {self.hosts}"
        return "the Slurm allocation" if self.slurm else self.cluster or "this machine"


@contextlib.contextmanager
def opened(where: Where) -> Iterator[Topology]:
    """The topology of a run; an emulated cluster made for it is torn down however it ends."""
    if where.slurm:
        yield slurm.open_allocation()
        return
    if where.hosts:
        yield hosts.open_hosts(Path(where.hosts))
        return
    cluster = where.cluster
    if not cluster:
        yield Local()
        return
    kept = emulated.load(cluster) if ":" not in cluster else None
    if ":" not in cluster and kept is None:
        raise ArenaError(f"no emulated cluster named '{cluster}' is up (see 'mpiarena cluster "
                         "status'); or give a spec such as emulated:nodes=4,link=100mbit")
    if kept is not None:
        try:
            yield kept
        finally:
            kept.reap()
        return
    made = emulated.up(parse(cluster), emulated.run_name(os.getpid()))
    try:
        yield made
    finally:
        emulated.teardown(made.name)
