"""Every run of a cell in time order: its figure per run with the interval, and each change
between consecutive runs (and the first against the last) judged exactly as `compare` judges
that pair of runs: `compare.compare_runs` over every cell the two runs share, so the Holm family
of a change is that pair's, whatever cells a history shows."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..benchmarks import BENCHMARKS
from ..results import Key, RunData
from .compare import Change, Outcome, compare_runs
from .groups import measured
from .stats import THRESHOLD, summarize


@dataclass(frozen=True)
class Cell:
    """What a history follows: one variant of one implementation in one cell."""

    bench: str
    size: int
    np: int
    variant: str
    impl: str

    @property
    def key(self) -> Key:
        return Key(self.bench, self.size, self.np)


@dataclass(frozen=True)
class Point:
    """A cell's figure in one run (the median of launch medians) with its 95% interval."""

    run: int  # index into History.runs
    figure: float
    ci_low: float
    ci_high: float
    launches: int
    timing: str


@dataclass(frozen=True)
class Step:
    """From the cell's figure in run `before` to run `after` (indices into History.runs); no
    change where the two runs timed the cell by different methods (not compared)."""

    before: int
    after: int
    change: Change | None

    @property
    def outcome(self) -> Outcome | None:
        return self.change.outcome if self.change else None


@dataclass
class Series:
    """One cell across the runs that measured it."""

    cell: Cell
    points: list[Point] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)  # between consecutive points
    overall: Step | None = None  # first point against the last, from three points on

    def judged(self) -> list[Step]:
        """Every step, the overall one last."""
        return self.steps + ([self.overall] if self.overall else [])

    def regressions(self) -> list[Step]:
        return [s for s in self.judged() if s.outcome == "regression"]


@dataclass(frozen=True)
class Filter:
    """Which cells a history shows (None: all)."""

    impls: tuple[str, ...] = ()  # an implementation id or a variant id
    benches: tuple[str, ...] | None = None
    sizes: tuple[int, ...] | None = None
    nps: tuple[int, ...] | None = None

    def __call__(self, cell: Cell) -> bool:
        return ((not self.impls or cell.impl in self.impls or cell.variant in self.impls)
                and (self.benches is None or cell.bench in self.benches)
                and (self.sizes is None or cell.size in self.sizes)
                and (self.nps is None or cell.np in self.nps))


@dataclass
class History:
    runs: list[RunData]  # in time order
    series: list[Series]
    threshold: float

    def regressions(self) -> list[tuple[Series, Step]]:
        return [(s, step) for s in self.series for step in s.regressions()]


def _cells(run: RunData) -> dict[Cell, Point]:
    """Every timed cell the run measured, with its figure (its run index filled in later)."""
    impl_of = {v.variant: v.impl_id for v in run.variant_rows}
    out = {}
    for key, groups in run.cells.items():
        if BENCHMARKS[key.bench].unit != "s":
            continue
        for variant, group in groups.items():
            if measured(group):
                s = summarize(group.nested)
                cell = Cell(key.bench, key.size, key.np, variant,
                            impl_of.get(variant, variant.split(":")[0]))
                out[cell] = Point(-1, s.median, s.ci_low, s.ci_high, s.launches, group.timing)
    return out


def history(runs: Sequence[RunData], keep: Callable[[Cell], bool] = Filter(),
            threshold: float = THRESHOLD) -> History:
    """The runs (in time order) as one series per cell that `keep` selects. A step is what
    `compare_runs(before, after)` says of that cell: the same launches, interval, test, Holm
    family (every cell the pair shares) and rule."""
    series: dict[Cell, Series] = {}
    for index, run in enumerate(runs):
        for cell, point in _cells(run).items():
            if keep(cell):
                series.setdefault(cell, Series(cell)).points.append(
                    Point(index, point.figure, point.ci_low, point.ci_high, point.launches,
                          point.timing))
    judged: dict[tuple[int, int], dict[tuple[Key, str], Change]] = {}

    def step(before: int, after: int, cell: Cell) -> Step:
        if (before, after) not in judged:
            judged[before, after] = {(c.key, c.variant): c for c in compare_runs(
                runs[before], runs[after], threshold=threshold)}
        return Step(before, after, judged[before, after].get((cell.key, cell.variant)))

    ordered = sorted(series.values(), key=lambda s: (s.cell.bench, s.cell.np, s.cell.size,
                                                     s.cell.variant))
    for s in ordered:
        runs_of = [p.run for p in s.points]
        s.steps = [step(a, b, s.cell) for a, b in itertools.pairwise(runs_of)]
        if len(runs_of) >= 3:
            s.overall = step(runs_of[0], runs_of[-1], s.cell)
    return History(list(runs), ordered, threshold)
