"""What a planned run will take here: its launches and cell-launches per variant, priced at
what earlier runs on this machine stored of their harness time (runs.harness)."""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass

from ..base.records import HarnessTime, RunRecord
from ..platform.plan import Plan


@dataclass(frozen=True)
class Planned:
    """One variant's share of a plan: its launches (start-up ones included) and cell-launches
    (a cell measured in one launch)."""

    variant: str
    launches: int
    cells: int


@dataclass(frozen=True)
class Rate:
    """What a variant cost here: seconds per launch (starting, reading its configuration,
    quitting) and per cell-launch (the cell as the harness saw it, then stored)."""

    per_launch: float
    per_cell: float


@dataclass(frozen=True)
class TimeEstimate:
    """The plan's launches in seconds (None: no earlier run here to go by), the earlier runs it
    rests on, and the variants none of them measured (priced at the others' median)."""

    seconds: float | None
    runs: int
    unmeasured: tuple[str, ...]


def planned(plan: Plan) -> list[Planned]:
    """Each variant's launches and cell-launches, in the plan's variant order."""
    launches = {v.id: 0 for v in plan.variants}
    cells = dict.fromkeys(launches, 0)
    for rnd in plan.rounds:
        for v in rnd.startups:
            launches[v.id] += 1
        for session in rnd.sessions:
            for v in session.variants:
                launches[v.id] += 1
            for _, v in session.turns:
                cells[v.id] += 1
    return [Planned(v, launches[v], cells[v]) for v in launches]


def _rates(runs: Iterable[RunRecord], host: str) -> tuple[dict[str, Rate], list[float], int]:
    """Per variant the median rate over the runs on `host` that stored harness times; each
    run's wall over the parts it attributed (daemons, load reads, kills: the rest); how many
    runs."""
    per_launch: dict[str, list[float]] = {}
    per_cell: dict[str, list[float]] = {}
    overheads, used = [], 0
    for run in runs:
        if run.host != host or not run.harness or not run.harness.get("variants"):
            continue
        used += 1
        parts = 0.0
        for variant, fields in run.harness["variants"].items():
            h = HarnessTime(**fields)
            start = h.launching + h.configuring + h.quitting
            cell = h.cell_wall + h.storing
            parts += start + cell
            if h.launches:
                per_launch.setdefault(variant, []).append(start / h.launches)
            if h.cells:
                per_cell.setdefault(variant, []).append(cell / h.cells)
        if parts > 0:
            overheads.append(run.harness["wall"] / parts)
    rates = {v: Rate(statistics.median(per_launch[v]),
                     statistics.median(per_cell.get(v, [0.0])))
             for v in per_launch}
    return rates, overheads, used


def estimate(plan: Plan, runs: Iterable[RunRecord], host: str) -> TimeEstimate:
    """The plan's launches priced at the earlier runs on `host`; a variant none measured at
    its implementation's rate (mpich-4.0.2 for mpich-4.0.2:win-create), else at the median
    rate of those that were measured."""
    rates, overheads, used = _rates(runs, host)
    if not rates:
        return TimeEstimate(None, used, ())
    typical = Rate(statistics.median(r.per_launch for r in rates.values()),
                   statistics.median(r.per_cell for r in rates.values()))
    impl = {v.id: v.impl.id for v in plan.variants}
    shares = planned(plan)
    priced = {p.variant: rates.get(p.variant) or rates.get(impl[p.variant]) for p in shares}
    seconds = sum(p.launches * (priced[p.variant] or typical).per_launch
                  + p.cells * (priced[p.variant] or typical).per_cell for p in shares)
    return TimeEstimate(seconds * statistics.median(overheads or [1.0]), used,
                        tuple(v for v, rate in priced.items() if rate is None))
