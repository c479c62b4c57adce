"""Every run of a cell in time order: its figure per run with the interval, and each change
between consecutive runs (and the first against the last) judged by `compare`'s rule on the two
runs' launches (`compare.judged`, through `stats.judge`). Every change a history shows is one
family, as every verdict of one report is: the correction (stats.CORRECTION) spans them all, so
a long history with many cells calls fewer changes than `compare` of one pair (narrow it with
--since, --bench);
every change is held against the drift between runs that all steps of all series show together
(`compare.Drift`); a history of two runs over the same cells is `compare` of those runs."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..base.records import Cell
from ..model.benchmarks import BENCHMARKS
from ..store.results import Group, RunData
from .compare import Change, Drift, Shared, drift_of, judged, same_sums
from .groups import measured
from .interference import finding
from .stats import THRESHOLD, summarize
from .verdicts import Movement


@dataclass(frozen=True)
class TrackedCell:
    """What a history follows: one variant of one implementation in one cell."""

    bench: str
    size: int
    np: int
    variant: str
    impl: str

    @property
    def key(self) -> Cell:
        return Cell(self.bench, self.size, self.np)


@dataclass(frozen=True)
class Point:
    """A cell's figure in one run (the median of launch medians) with its 95% interval."""

    run: int  # index into History.runs
    figure: float
    ci_low: float
    ci_high: float
    launches: int
    variant: str  # what ran: the series' variant, or one that --follow continues it with


@dataclass(frozen=True)
class Step:
    """From the cell's figure in run `before` to run `after` (indices into History.runs); no
    change where the two runs timed the cell by different methods (not compared)."""

    before: int
    after: int
    change: Change | None

    @property
    def outcome(self) -> Movement | None:
        return self.change.outcome if self.change else None


@dataclass
class Series:
    """One cell across the runs that measured it."""

    cell: TrackedCell
    points: list[Point] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)  # between consecutive points
    overall: Step | None = None  # first point against the last, from three points on

    def judged(self) -> list[Step]:
        """Every step, the overall one last."""
        return self.steps + ([self.overall] if self.overall else [])

    def regressions(self) -> list[Step]:
        return [s for s in self.judged() if s.outcome == Movement.REGRESSION]


@dataclass(frozen=True)
class Filter:
    """Which cells a history shows (None: all)."""

    impls: tuple[str, ...] = ()  # an implementation id or a variant id
    benches: tuple[str, ...] | None = None
    sizes: tuple[int, ...] | None = None
    nps: tuple[int, ...] | None = None

    def __call__(self, cell: TrackedCell) -> bool:
        return ((not self.impls or cell.impl in self.impls or cell.variant in self.impls)
                and (self.benches is None or cell.bench in self.benches)
                and (self.sizes is None or cell.size in self.sizes)
                and (self.nps is None or cell.np in self.nps))


@dataclass(frozen=True)
class Busy:
    """A run whose launches shared the machine: drift between runs that its launches saw."""

    run: int  # index into History.runs
    above: int  # launches where other work took more than BUSY of the machine
    launches: int  # launches that recorded what ran beside them
    worst: float


@dataclass
class History:
    runs: list[RunData]  # in time order
    series: list[Series]
    threshold: float
    drift: Drift  # between consecutive runs, from every step of every series
    busy: list[Busy] = field(default_factory=list)

    def regressions(self) -> list[tuple[Series, Step]]:
        return [(s, step) for s in self.series for step in s.regressions()]


def _cells(run: RunData, follow: dict[str, str]) -> dict[TrackedCell, tuple[str, Group]]:
    """Every timed cell the run measured, as the series it belongs to (a variant that `follow`
    maps to another continues that one's series where the run did not measure that one too),
    with the variant that ran."""
    impl_of = {v.variant: v.impl_id for v in run.variant_rows}
    out = {}
    for key, groups in run.cells.items():
        for variant, group in groups.items():
            if BENCHMARKS[key.bench].unit == "s" and measured(group):
                name = follow.get(variant, variant)
                if name != variant and measured(groups.get(name)):
                    name = variant  # the run has the series' own variant: this one stays apart
                out[TrackedCell(key.bench, key.size, key.np, name,
                                impl_of.get(name, name.split(":")[0]))] = variant, group
    return out


def history(runs: Sequence[RunData], keep: Callable[[TrackedCell], bool] = Filter(),
            threshold: float = THRESHOLD, follow: dict[str, str] | None = None) -> History:
    """The runs (in time order) as one series per cell that `keep` selects, every change
    judged in one family: the launches, interval, test and rule of `compare`, held against the
    drift that every step between consecutive runs of every series shows. `follow` maps a
    variant to an earlier one whose series it continues (mpich-5.0.2 -> mpich-4.0.2 after an
    upgrade), as `compare --pair` does. A change between runs that timed the cell by different
    methods is not judged (the method changes the figure), nor one between runs that summed
    different datatypes (compare.same_sums)."""
    series: dict[TrackedCell, Series] = {}
    groups: dict[tuple[TrackedCell, int], tuple[str, Group]] = {}
    for index, run in enumerate(runs):
        for cell, (variant, group) in _cells(run, follow or {}).items():
            if keep(cell):
                f = summarize(group.nested)
                series.setdefault(cell, Series(cell)).points.append(
                    Point(index, f.median, f.ci_low, f.ci_high, f.launches, variant))
                groups[cell, index] = variant, group
    ordered = sorted(series.values(), key=lambda s: (list(BENCHMARKS).index(s.cell.bench),
                                                     s.cell.np, s.cell.size, s.cell.variant))
    wanted = [Wanted(s, a, b, False) for s in ordered
              for a, b in itertools.pairwise(p.run for p in s.points)]
    wanted += [Wanted(s, s.points[0].run, s.points[-1].run, True) for s in ordered
               if len(s.points) >= 3]
    drift = _judge(wanted, groups, threshold, runs)
    shown = {p.run for s in ordered for p in s.points}
    return History(list(runs), ordered, threshold, drift,
                   [b for b in map(_busy, range(len(runs)), runs) if b and b.run in shown])


@dataclass(frozen=True, eq=False)  # each one its own key
class Wanted:
    """A change a history judges: a series from run `before` to run `after`."""

    series: Series
    before: int
    after: int
    overall: bool  # its first run against its last


def _judge(wanted: list[Wanted], groups: dict[tuple[TrackedCell, int], tuple[str, Group]],
           threshold: float, runs: Sequence[RunData]) -> Drift:
    """Every wanted change judged as one family and put in its series (none where the two runs
    timed the cell differently or summed different datatypes), held against the drift that
    the changes between consecutive runs show; that drift."""
    shared: dict[Wanted, Shared] = {}
    for w in wanted:
        (va, ga), (vb, gb) = groups[w.series.cell, w.before], groups[w.series.cell, w.after]
        if ga.timing == gb.timing and same_sums(runs[w.before], runs[w.after],
                                                w.series.cell.bench):
            shared[w] = w.series.cell.key, va, vb, ga, gb
    judgements = judged(list(shared.values()), threshold=threshold,
                        gauges=[not w.overall for w in shared])
    changes = dict(zip(shared, judgements, strict=True))
    for w in wanted:
        step = Step(w.before, w.after, changes.get(w))
        if w.overall:
            w.series.overall = step
        else:
            w.series.steps.append(step)
    return judgements[0].drift if judgements else drift_of([])


def _busy(index: int, run: RunData) -> Busy | None:
    """The run's launches that other work shared the machine with, if any."""
    seen = finding(run.jobs)
    if not seen.above:
        return None
    return Busy(index, len(seen.above), len(seen.launches), max(x.share for x in seen.above))
