"""Read one run back from the store as observations grouped per cell, ready for statistics.

An observation is reduced over its ranks (benchmarks.py) with numpy over whole cells, once: each
cell's figures are cached in the store under ANALYSIS_VERSION. Every rank's figure is read only
where a report asks for it (Group.per_rank, Group.extras), so thousands of ranks stay cheap.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, NamedTuple, TypeVar, overload

import numpy as np

from ..base.records import (
    Cell,
    CellRecord,
    ImplementationRecord,
    JobRecord,
    RunRecord,
    RunSettings,
    Timing,
    VariantRecord,
)
from ..base.status import CellStatus, LaunchShape, RunStatus
from ..model.benchmarks import BENCHMARKS, Benchmark
from ..model.runs import cells_settings
from ..model.whatran import WhatRan
from . import CellFigures, Store, Vector

ANALYSIS_VERSION = 1  # bump when an observation's reduction changes: cached summaries are redone
T = TypeVar("T")
Part = tuple[int, np.ndarray]  # a cell's id, which of its observations have a finite figure


class Stratified(list[np.ndarray]):
    """A cell's observations per launch with each launch's shape: a budget's partial launches
    may read at another level than whole ones, so the statistics compare within shapes."""

    def __init__(self, arrays: Sequence[np.ndarray], shapes: Sequence[LaunchShape]):
        super().__init__(arrays)
        self.shapes = tuple(shapes)


def nest(values: Sequence[float] | np.ndarray, launches: Sequence[int]) -> list[np.ndarray]:
    """Observations grouped by their launch, in launch order."""
    x = np.asarray(values, dtype=float)
    ids = np.asarray(launches)
    return [x[ids == i] for i in np.unique(ids)]


class Lazy(Sequence[T]):
    """Rows read from the store the first time they are used."""

    def __init__(self, n: int, fetch: Callable[[], Sequence[T]]):
        self._n, self._fetch = n, fetch
        self._rows: Sequence[T] | None = None

    def _got(self) -> Sequence[T]:
        if self._rows is None:
            self._rows = self._fetch()
        return self._rows

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> T: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[T]: ...

    def __getitem__(self, i: int | slice) -> T | Sequence[T]:
        return self._got()[i]

    def __iter__(self) -> Iterator[T]:
        return iter(self._got())


class Raw:
    """Every rank's figures of a run, read on demand through a connection of its own (the
    caller's may be closed by then)."""

    def __init__(self, where: str):
        self.where = where
        self._store: Store | None = None

    def store(self) -> Store:
        if self._store is None:
            self._store = Store(self.where)
        return self._store

    def per_rank(self, parts: list[Part]) -> list[Vector]:
        got = dict(self.store().rank_seconds([c for c, _ in parts]))
        return [v for c, keep in parts for v, k in zip(got.get(c, []), keep, strict=True) if k]

    def extras(self, parts: list[Part]) -> list[dict[str, list[float]]]:
        ids = [c for c, _ in parts]
        seconds, extras = dict(self.store().rank_seconds(ids)), self.store().rank_extras(ids)
        return [{n: _padded(x, len(v)) for n, x in e.items()} for c, keep in parts
                for v, e, k in zip(seconds.get(c, []), extras.get(c, []), keep, strict=True)
                if k]


def _padded(x: Vector, n: int) -> list[float]:
    """A rank vector as a list of at least n values, NaN for the ranks it lacks."""
    values: list[float] = x.tolist()
    return values + [float("nan")] * (n - len(x))


def reduce(bench: Benchmark, vectors: list[Vector],
           extras: list[dict[str, Vector]] | None = None) -> np.ndarray:
    """Each observation of a cell reduced over its ranks as the benchmark says (NaN where it
    gives no finite figure; Benchmark.timed, the rule the runner's budget takes too): all
    observations at once, unless the figure needs extras."""
    if bench.figure is not None:
        extras = extras or [{}] * len(vectors)
        return np.array([bench.observation(v.tolist(), {n: _padded(x, len(v))
                                                        for n, x in e.items()})
                         for v, e in zip(vectors, extras, strict=True)], dtype=float)
    if not vectors:
        return np.empty(0)
    width = max(len(v) for v in vectors)
    m = np.full((len(vectors), width), np.nan)
    for i, v in enumerate(vectors):
        m[i, :len(v)] = v
    return bench.timed(m)


def summarize(store: Store, cells: list[CellRecord]) -> dict[int, CellFigures]:
    """Each cell's figure per observation and the share of calls dropped (window timing,
    rank 0's figure, per observation that has one), from every rank's figures."""
    bench_of = {c.id: BENCHMARKS[c.bench] for c in cells}
    extras = store.rank_extras([c for c, b in bench_of.items() if b.figure is not None])
    late = store.rank_extras([c.id for c in cells if c.timing == Timing.WINDOW], "late")
    out = {c: (np.empty(0), np.empty(0)) for c in bench_of}
    for cell_id, vectors in store.rank_seconds(list(bench_of)):
        out[cell_id] = (reduce(bench_of[cell_id], vectors, extras.get(cell_id)),
                        np.array([x["late"][0] for x in late.get(cell_id, []) if "late" in x]))
    return out


class Lost(NamedTuple):
    """A launch that did not measure a cell: how it ended, and why."""

    status: CellStatus
    reason: str


@dataclass
class Group:
    """Everything measured for one variant in one cell (benchmark x size x ranks)."""

    status: CellStatus = CellStatus.OK  # ok when any launch measured it, else the worst status
    reason: str = ""
    values: list[float] = field(default_factory=list)  # reduced observations, in bench.unit
    launches: list[int] = field(default_factory=list)  # each value's launch
    per_rank: Sequence[Sequence[float] | Vector] = field(default_factory=list)  # per observation
    extras: Sequence[dict[str, list[float]]] = field(default_factory=list)  # per observation
    iterations: int | None = None
    lost: dict[int, Lost] = field(default_factory=dict)  # launch -> how it lost the cell
    timing: str = "loop"  # how its calls were timed: loop, barrier or window (plan.timing)
    late: list[float] = field(default_factory=list)  # window: share of calls dropped, per obs.
    partial: set[int] = field(default_factory=set)  # launches of LaunchShape.PARTIAL

    @property
    def array(self) -> np.ndarray:
        """Every observation, all launches together."""
        return np.asarray(self.values, dtype=float)

    @property
    def nested(self) -> list[np.ndarray]:
        """The observations of each launch, in launch order: the unit of every statistic
        (a group built without launches is one launch)."""
        if len(self.launches) != len(self.values):
            return [self.array] if self.values else []
        nested = nest(self.values, self.launches)
        if not self.partial:
            return nested
        return Stratified(nested, [LaunchShape.PARTIAL if i in self.partial else LaunchShape.WHOLE
                                 for i in np.unique(self.launches).tolist()])


@dataclass(kw_only=True)
class RunData:
    """A run as the analysis reads it: its records, variants, settings and groups by cell."""

    run_id: int
    run: RunRecord
    status: RunStatus
    implementations: list[ImplementationRecord]
    variants: list[str]
    jobs: list[JobRecord]
    settings: RunSettings
    cells: dict[Cell, dict[str, Group]]
    variant_rows: list[VariantRecord] = field(default_factory=list)  # each variant's settings
    reported: dict[int, WhatRan] = field(default_factory=dict)  # job id -> what the library said
    earlier: Sequence[Levels] = ()  # the host's earlier runs (`earlier`), read when used

    def __post_init__(self) -> None:
        self.cells = {Cell(*k): cell for k, cell in self.cells.items()}

    @property
    def machine(self) -> dict[str, Any]:
        return self.run.machine

    def benches(self) -> list[str]:
        present = {k.bench for k in self.cells}
        return [b for b in BENCHMARKS if b in present]


_SEVERITY: dict[CellStatus, int] = {status: rank for rank, status in enumerate(CellStatus)}


def _figures(store: Store, run_id: int, rows: list[CellRecord]) -> dict[int, CellFigures]:
    """Each stored cell's figures, summarised once and cached under ANALYSIS_VERSION."""
    summaries = store.summaries(run_id, ANALYSIS_VERSION)
    missing = [r for r in rows if r.id not in summaries]
    if missing:
        fresh = summarize(store, missing)
        store.save_summaries(ANALYSIS_VERSION, fresh)
        summaries |= fresh
    return summaries


EARLIER_RUNS = 5  # a machine's earlier runs that a run's run-to-run spread is learned from


@dataclass(frozen=True)
class Levels:
    """A run's launch medians of each measured (cell, variant) with the cell's timing method:
    what the run-to-run spread is learned from (analysis/run_spread.py)."""

    run_id: int
    medians: dict[tuple[Cell, str], np.ndarray]
    timing: dict[tuple[Cell, str], str]


def levels(store: Store, run_id: int) -> Levels:
    """The run's launch medians per (cell, variant), its measured cells only."""
    rows = store.measured(run_id)
    figures = store.summaries(run_id, ANALYSIS_VERSION)
    if any(row.id not in figures for row in rows):  # a run no report has read yet
        figures = _figures(store, run_id, [r for r in store.cells(run_id)
                                           if r.status == CellStatus.OK])
    launches: dict[tuple[Cell, str], dict[int, list[float]]] = {}
    timing: dict[tuple[Cell, str], str] = {}
    for row in rows:
        kept = [x for x in figures[row.id][0].tolist() if math.isfinite(x)]
        if kept:
            key = (Cell(row.bench, row.size, row.np), row.variant)
            launches.setdefault(key, {}).setdefault(row.launch, []).extend(kept)
            timing[key] = row.timing
    # statistics.median: a launch holds a few figures, whose median np.median took 20 us to
    # give here and statistics.median 0.4 us (a quick run: 17,000 launch medians)
    return Levels(run_id, {k: np.array([statistics.median(v) for v in by.values()])
                           for k, by in launches.items()}, timing)


def earlier(store: Store, run: RunRecord, most: int = EARLIER_RUNS) -> Lazy[Levels]:
    """The levels of the newest `most` complete runs of the same kind that ran before `run`
    on its host (a run's report never depends on the runs after it), read from the store only
    when an analysis asks (a command that renders no verdict, such as `export`, reads none)."""
    ids = [r.id for r, cells in store.runs() if r.id < run.id and r.host == run.host
           and r.kind == run.kind and r.status == RunStatus.COMPLETE and cells][::-1][:most]
    return Lazy(len(ids), lambda: [levels(store, i) for i in ids])


def load(store: Store, run_id: int) -> RunData:
    rows = store.cells(run_id)
    summaries = _figures(store, run_id, rows)
    raw = Raw(store.where)
    jobs = store.jobs(run_id)
    partial_jobs = {j.id for j in jobs if j.shape == LaunchShape.PARTIAL}
    parts: dict[int, tuple[Group, list[Part]]] = {}
    cells: dict[Cell, dict[str, Group]] = {}
    for row in rows:
        group = cells.setdefault(Cell(row.bench, row.size, row.np), {}).setdefault(
            row.variant, Group())
        if row.status != CellStatus.OK:
            if row.status != CellStatus.NA:
                group.lost[row.launch] = Lost(row.status, row.reason or "")
            if not group.values and _SEVERITY[row.status] > _SEVERITY[group.status]:
                group.status, group.reason = row.status, row.reason or ""
        elif group.status != CellStatus.OK:  # a launch measured what an earlier one could not
            group.status, group.reason = CellStatus.OK, ""
        group.iterations = row.iterations or group.iterations
        group.timing = row.timing
        figures, late = summaries[row.id]
        group.late += late.tolist()  # kept even where every call was dropped
        keep = np.isfinite(figures)
        group.values += figures[keep].tolist()
        group.launches += [row.launch] * int(keep.sum())
        if row.job_id in partial_jobs:
            group.partial.add(row.launch)
        parts.setdefault(id(group), (group, []))[1].append((row.id, keep))
    for group, part in parts.values():
        group.per_rank = Lazy(len(group.values), partial(raw.per_rank, part))
        group.extras = Lazy(len(group.values), partial(raw.extras, part))
    run = store.run(run_id)
    rows_v = store.variants(run_id)
    return RunData(run_id=run_id, run=run, status=store.status(run),
                   implementations=store.implementations(run_id),
                   variants=[v.variant for v in rows_v], jobs=jobs, settings=cells_settings(run),
                   cells=cells, variant_rows=rows_v, reported=store.what_ran(run_id),
                   earlier=earlier(store, run))
