"""A program's launches judged: per figure (wall time and each metric) who is faster and by how
much, by the one verdict rule of `stats`; where a wall-time difference comes from, per MPI
function of the profiled launches; what the profiler itself cost."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

import numpy as np

from ..base.records import RunRecord
from ..base.status import LaunchStatus
from ..model.programs import WALL, LaunchKind, Metric, ProgramLaunch, RankCalls
from ..model.runs import program_settings
from ..store import Store
from ..system.machine_load import BUSY, Interference
from .stats import Sample, Verdict, verdicts
from .verdicts import Speed


@dataclass(frozen=True)
class ProgramFigure:
    """One figure of every timed launch that ended well, per variant, and its verdicts (the
    fastest against each other)."""

    name: str
    higher: bool  # higher is better: verdicts judge its inverse
    values: dict[str, list[float]]  # variant -> one value per launch, in launch order
    verdicts: list[Verdict]
    missing: dict[str, int]  # variant -> good launches whose output the pattern never matched

    def center(self, variant: str) -> float:
        return statistics.median(self.values[variant]) if self.values.get(variant) else math.nan


@dataclass(frozen=True)
class FunctionDelta:
    """Seconds one MPI function took per rank (mean over ranks) in each side's profiled launch."""

    function: str
    fast: float
    slow: float

    @property
    def delta(self) -> float:
        return self.slow - self.fast


@dataclass(frozen=True)
class Decomposition:
    """Where the slower variant's extra wall time goes: the timed launches' median difference,
    the MPI functions that account for it (the profiled launches, per rank), and the rest."""

    fast: str
    slow: str
    wall_delta: float  # median wall of slow minus fast (timed launches)
    functions: list[FunctionDelta]  # the largest |delta| first
    decided: bool  # the wall-time verdict says "faster"

    @property
    def mpi_delta(self) -> float:
        return sum(f.delta for f in self.functions)

    @property
    def outside(self) -> float:
        """The difference outside the profiled MPI functions: compute, start-up, unwrapped
        calls."""
        return self.wall_delta - self.mpi_delta


@dataclass(frozen=True)
class Overhead:
    """The profiled launch's wall time against the median of the timed ones."""

    variant: str
    profiled: float
    timed: float

    @property
    def share(self) -> float:
        return self.profiled / self.timed - 1


@dataclass(frozen=True)
class ProgramResult:
    run: RunRecord
    np: int
    variants: list[str]
    launches: list[ProgramLaunch]
    figures: list[ProgramFigure]  # wall first, then each metric in the order given
    decompositions: list[Decomposition]  # the fastest by wall against each other
    overheads: list[Overhead]
    profiles: dict[str, list[RankCalls]]  # variant -> its profiled launch's calls
    busy: dict[str, int]  # variant -> timed launches where others took over BUSY of the machine

    def failed(self) -> dict[str, list[ProgramLaunch]]:
        """variant -> its launches that failed or timed out (all kinds)."""
        out: dict[str, list[ProgramLaunch]] = {}
        for x in self.launches:
            if x.status != LaunchStatus.OK:
                out.setdefault(x.variant, []).append(x)
        return out

    def figure(self, name: str) -> ProgramFigure:
        return next(f for f in self.figures if f.name == name)


def is_program_run(run: RunRecord) -> bool:
    """A program's run (tuned or not)."""
    return run.kind.runs_a_program


def launch_sample(values: list[float], higher: bool) -> Sample:
    """One launch, one value: the statistics' unit; a rate is judged by its inverse."""
    return [np.asarray([1 / v if higher else v]) for v in values if v > 0 or not higher]


def _figures(variants: list[str], timed: list[ProgramLaunch],
             metrics: list[Metric]) -> list[ProgramFigure]:
    named = [(WALL, False), *((m.name, m.higher) for m in metrics)]
    values = {name: {v: [x.wall if name == WALL else x.metrics[name] for x in timed
                         if x.variant == v and (name == WALL or name in x.metrics)]
                     for v in variants} for name, _ in named}
    judged_names = [(n, h) for n, h in named if sum(1 for v in values[n].values() if v) >= 2]
    samples = [{v: launch_sample(x, h) for v, x in values[n].items() if x} for n, h in judged_names]
    judged = dict(zip((n for n, _ in judged_names), verdicts(samples), strict=True))
    return [ProgramFigure(n, h, values[n], judged.get(n, []),
                      {v: sum(1 for x in timed if x.variant == v) - len(values[n][v])
                       for v in variants})
            for n, h in named]


def _per_rank(calls: list[RankCalls], np_: int) -> dict[str, float]:
    out: dict[str, float] = {}
    for c in calls:
        out[c.function] = out.get(c.function, 0.0) + c.seconds / max(np_, 1)
    return out


def _decompositions(wall: ProgramFigure, profiles: dict[str, list[RankCalls]],
                    np_: int) -> list[Decomposition]:
    out = []
    for v in wall.verdicts:
        if v.fast not in profiles or v.slow not in profiles:
            continue
        a, b = _per_rank(profiles[v.fast], np_), _per_rank(profiles[v.slow], np_)
        deltas = [FunctionDelta(f, a.get(f, 0.0), b.get(f, 0.0)) for f in sorted({*a, *b})]
        out.append(Decomposition(v.fast, v.slow, wall.center(v.slow) - wall.center(v.fast),
                                 sorted(deltas, key=lambda d: -abs(d.delta)),
                                 v.outcome == Speed.FASTER))
    return out


def analyze(store: Store, run_id: int) -> ProgramResult:
    """The program run as judged from the store alone."""
    run = store.run(run_id)
    settings = program_settings(run)
    metrics = list(settings.metrics)
    variants = [v.variant for v in store.variants(run_id)]
    launches = store.program_launches(run_id)
    timed = [x for x in launches if x.kind == LaunchKind.TIMED and x.status == LaunchStatus.OK]
    calls = store.program_calls(run_id)
    profiles = {x.variant: calls.get(x.id, []) for x in launches
                if x.kind == LaunchKind.PROFILED and x.status == LaunchStatus.OK}
    figures = _figures(variants, timed, metrics)
    wall = figures[0]
    overheads = [Overhead(x.variant, x.wall, wall.center(x.variant)) for x in launches
                 if x.kind == LaunchKind.PROFILED and x.status == LaunchStatus.OK
                 and wall.values.get(x.variant)]
    busy = {v: sum(1 for x in timed if x.variant == v and x.interference
                   and Interference(**x.interference).share > BUSY) for v in variants}
    return ProgramResult(run, settings.np, variants, launches, figures,
                     _decompositions(wall, profiles, settings.np or 1), overheads,
                     profiles, busy)


def function_seconds(r: ProgramResult, variant: str) -> dict[str, float]:
    """MPI function -> seconds per rank (mean over ranks) in the variant's profiled launch."""
    return _per_rank(r.profiles.get(variant, []), r.np)


def function_calls(r: ProgramResult, variant: str) -> dict[str, int]:
    """MPI function -> calls summed over the ranks of the variant's profiled launch."""
    out: dict[str, int] = {}
    for c in r.profiles.get(variant, []):
        out[c.function] = out.get(c.function, 0) + c.calls
    return out
