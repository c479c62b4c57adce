"""Which launches shared their machine with other work, and how much of it that work took."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..base.records import JobRecord
from ..system.machine_load import BUSY, Interference


@dataclass(frozen=True)
class LaunchShare:
    """One launch (a job) and what ran beside it."""

    job_id: int
    variant: str
    np: int
    beside: Interference

    @property
    def share(self) -> float:
        return self.beside.share


@dataclass(frozen=True)
class VariantShare:
    """A variant's launches above the threshold: how many, and the largest share among them."""

    variant: str
    launches: int
    worst: float


@dataclass(frozen=True)
class Finding:
    """A run's launches that recorded what ran beside them, those where others took more than
    `busy` of the machine, how many --wait-quiet gave up on, and those that began while
    another mpiarena run was measuring here."""

    busy: float
    launches: list[LaunchShare]
    above: list[LaunchShare]
    gave_up: int
    shared: list[LaunchShare]  # launches that began while another mpiarena run measured

    def variants(self) -> list[VariantShare]:
        """The variants with launches above the threshold, the worst first."""
        by: dict[str, list[float]] = {}
        for launch in self.above:
            by.setdefault(launch.variant, []).append(launch.share)
        found = [VariantShare(v, len(s), max(s)) for v, s in by.items()]
        return sorted(found, key=lambda v: -v.worst)


def launch_shares(jobs: Sequence[JobRecord]) -> list[LaunchShare]:
    """Every job that recorded what ran beside it (stores before schema 5 recorded nothing)."""
    return [LaunchShare(j.id, j.variant, j.np, Interference(**j.interference))
            for j in jobs if j.interference]


def finding(jobs: Sequence[JobRecord], busy: float = BUSY) -> Finding:
    launches = launch_shares(jobs)
    return Finding(busy, launches, [x for x in launches if x.share > busy],
                   sum(x.beside.gave_up for x in launches),
                   [x for x in launches if x.beside.runs_beside])
