"""The run's answer to "which MPI library should I use here?", by the verdict rule: in a cell,
the fastest MPI library is one whose verdict against every other MPI library there is
"faster" or "indistinguishable" (within the threshold). The cells of each kind (point-to-point,
collectives) are read size by size, neighbouring sizes that say the same joined, at most four
statements in all. The geometric-mean ranking, the systems that are not MPI beside it, the
run's scope and how long it took come along; they do not decide the answer. `report.summary`
words it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from enum import Enum, auto

from ..base.records import Cell, impl_of
from ..impls.registry import families
from ..model.benchmarks import BENCHMARKS, Kind
from ..store.results import RunData
from .groups import comparable
from .run import Analysis, Standing, standings
from .stats import Verdict
from .verdicts import SPEED_OF_A, SPEED_OF_B, Speed

KINDS = {Kind.P2P: "point-to-point", Kind.COLL: "collectives"}
LINES = 4  # statements of the answer, at most
LEADS = (Speed.FASTER, Speed.INDISTINGUISHABLE)  # what a fastest library is against each other


class Leading(Enum):
    """What the verdicts say of a stretch of cells: one library faster than every other; one
    faster than or within the threshold of every other, some within it; the cells name
    different fastest libraries; no cell names one."""

    ONE = auto()
    LEVEL = auto()
    SPLIT = auto()
    OPEN = auto()


@dataclass(frozen=True)
class Lead:
    """How far the fastest library is ahead of the next: the verdict's ratio (the next's time
    over its own) and that ratio's interval, the smallest over the cells it stands for."""

    over: str
    ratio: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class CellLead:
    """One cell by the verdict rule, among its MPI libraries."""

    key: Cell
    leaders: tuple[str, ...]  # faster than or within the threshold of every other; best first
    level: tuple[str, ...]  # the first leader and those within the threshold of it
    lead: Lead | None  # the first leader's smallest lead, where it is faster than every other

    @property
    def best(self) -> str | None:
        return self.leaders[0] if self.leaders else None


def speed(verdicts: Sequence[Verdict], a: str, b: str) -> tuple[Speed, Verdict | None]:
    """a's speed against b by the cell's verdict on the pair, stated either way round
    (undecided where the cell has none)."""
    for v in verdicts:
        if (v.fast, v.slow) == (a, b):
            return SPEED_OF_A[v.comparison.outcome], v
        if (v.fast, v.slow) == (b, a):
            return SPEED_OF_B[v.comparison.outcome], v
    return Speed.UNDECIDED, None


def verdicts(a: Analysis, key: Cell) -> list[Verdict]:
    """The cell's verdicts: every pair of its variants where the run judged them so, else its
    fastest against each other."""
    return a.pairs[key].pairs if key in a.pairs else a.judged.get(key, [])


def _lead(verdict: Verdict, leader: str) -> Lead:
    """The leader's lead over the other side of the verdict."""
    if verdict.fast == leader:
        return Lead(verdict.slow, verdict.ratio, verdict.ci_low, verdict.ci_high)
    return Lead(verdict.fast, 1 / verdict.ratio, 1 / verdict.ci_high, 1 / verdict.ci_low)


def cell_lead(a: Analysis, key: Cell, mpi: Sequence[str]) -> CellLead | None:
    """The cell's fastest MPI libraries by the verdict rule (None: fewer than two measured)."""
    here = comparable(a.data.cells.get(key, {}))
    names = sorted((v for v in mpi if v in here), key=lambda v: a.summaries[key][v].median)
    if len(names) < 2:
        return None
    said = {(x, y): speed(verdicts(a, key), x, y) for x in names for y in names if x != y}
    leaders = tuple(x for x in names if all(said[x, y][0] in LEADS for y in names if y != x))
    if not leaders:
        return CellLead(key, (), (), None)
    best = leaders[0]
    level = (best, *(y for y in names if y != best and said[best, y][0] ==
                     Speed.INDISTINGUISHABLE))
    leads = [_lead(v, best) for y in names if y != best and (v := said[best, y][1]) is not None]
    lead = min(leads, key=lambda x: x.ratio) if len(level) == 1 and leads else None
    return CellLead(key, leaders, level, lead)


@dataclass(frozen=True)
class SizeRange:
    """One statement of the answer: over a kind's sizes from `first` to `last` (every size it
    measured: `every`), what the verdicts say; `kinds` holds two where both kinds say the same
    of every size."""

    kinds: tuple[Kind, ...]
    first: int
    last: int
    every: bool
    leading: Leading
    names: tuple[str, ...]  # ONE: the library; LEVEL: those within, by name; SPLIT: leaders
    lead: Lead | None  # ONE: its smallest lead over the next
    cells: int
    open: int  # of those, cells where no library is the fastest


@dataclass(frozen=True)
class Sizes:
    """A library and the sizes of a kind where it alone is the fastest, as spans."""

    variant: str
    spans: tuple[tuple[int, int], ...]
    count: int


@dataclass(frozen=True)
class BySize:
    """A kind whose fastest library changes with size more often than the answer has lines
    for: the libraries that are the fastest at some size, most sizes first, and how many sizes
    no single library is."""

    kind: Kind
    fastest: tuple[Sizes, ...]
    rest: int
    sizes: int


Statement = SizeRange | BySize


def _size(key: Cell) -> int:
    """The size a cell counts at: an unsized benchmark (barrier) moves no data, as 0 B."""
    return key.size if BENCHMARKS[key.bench].sized else 0


def _at_size(kind: Kind, size: int, cells: list[CellLead]) -> SizeRange:
    """What the cells of one size say together."""
    decided = [c for c in cells if c.leaders]
    part = SizeRange((kind,), size, size, False, Leading.OPEN, (), None, len(cells),
                len(cells) - len(decided))
    if not decided:
        return part
    common = set(decided[0].leaders).intersection(*(c.leaders for c in decided[1:]))
    if not common:
        names = tuple(dict.fromkeys(c.best for c in decided if c.best))
        return replace(part, leading=Leading.SPLIT, names=names)
    best = max(sorted(common), key=lambda v: sum(c.best == v for c in decided))
    level = {best, *common, *(y for c in decided for y in c.level if best in c.level)}
    if len(level) > 1:
        return replace(part, leading=Leading.LEVEL, names=tuple(sorted(level)))
    leads = [c.lead for c in decided if c.lead is not None]
    return replace(part, leading=Leading.ONE, names=(best,),
                   lead=min(leads, key=lambda x: x.ratio) if leads else None)


def _joined(parts: list[SizeRange]) -> list[SizeRange]:
    """Neighbouring sizes that say the same, as one part."""
    out: list[SizeRange] = []
    for p in parts:
        last = out[-1] if out else None
        if last is not None and (last.leading, last.names) == (p.leading, p.names):
            leads = [x for x in (last.lead, p.lead) if x is not None]
            out[-1] = replace(last, last=p.last, cells=last.cells + p.cells,
                              open=last.open + p.open,
                              lead=min(leads, key=lambda x: x.ratio) if leads else None)
        else:
            out.append(p)
    if len(out) == 1:
        out[0] = replace(out[0], every=True)
    return out


def _by_size(kind: Kind, parts: list[SizeRange], sizes: list[int]) -> BySize:
    """A kind's parts as the sizes each library alone is the fastest at."""
    spans: dict[str, list[tuple[int, int]]] = {}
    for p in parts:
        if p.leading == Leading.ONE:
            spans.setdefault(p.names[0], []).append((p.first, p.last))
    counts = {v: len({s for s in sizes for lo, hi in got if lo <= s <= hi})
              for v, got in spans.items()}
    ranked = sorted(spans, key=lambda v: (-counts[v], v))
    return BySize(kind, tuple(Sizes(v, tuple(spans[v]), counts[v]) for v in ranked),
                  len(sizes) - sum(counts.values()), len(sizes))


def _kind_cells(a: Analysis, kind: Kind, mpi: Sequence[str]) -> dict[int, list[CellLead]]:
    """A kind's cells by the verdict rule, by size, smallest first."""
    keys = [k for ks in a.tables.values() for k in ks if BENCHMARKS[k.bench].kind == kind]
    by: dict[int, list[CellLead]] = {}
    for key in keys:
        if (c := cell_lead(a, key, mpi)) is not None:
            by.setdefault(_size(key), []).append(c)
    return {size: by[size] for size in sorted(by)}


def statements(a: Analysis, mpi: Sequence[str]) -> list[Statement]:
    """The answer's statements, at most `LINES`: a kind whose fastest changes with size more
    often than its share of the lines says so in one; two kinds that say the same of every
    size, one statement."""
    cells = {k: by for k in KINDS if (by := _kind_cells(a, k, mpi))}
    kinds = {k: _joined([_at_size(k, size, c) for size, c in by.items()])
             for k, by in cells.items()}
    if len(kinds) == 2:
        p2p, coll = kinds.values()
        if len(p2p) == len(coll) == 1 and (p2p[0].leading, p2p[0].names) == \
                (coll[0].leading, coll[0].names):
            leads = [x for x in (p2p[0].lead, coll[0].lead) if x is not None]
            return [replace(p2p[0], kinds=tuple(kinds), cells=p2p[0].cells + coll[0].cells,
                            open=p2p[0].open + coll[0].open,
                            lead=min(leads, key=lambda x: x.ratio) if leads else None)]
    out: list[Statement] = []
    for kind, parts in kinds.items():
        others = sum(min(len(p), LINES // 2) for k, p in kinds.items() if k != kind)
        out += parts if len(parts) <= LINES - others else \
            [_by_size(kind, parts, list(cells[kind]))]
    return out


@dataclass(frozen=True)
class Beside:
    """A system that is not an MPI library (raw TCP, PVM) against the MPI leader, over the cells
    both measured."""

    variant: str
    standing: Standing | None  # None: no cell in common


@dataclass(frozen=True)
class Scope:
    """Where the figures hold: rank counts, hosts, topology."""

    nps: tuple[int, ...]
    hosts: int
    topology: str


@dataclass(frozen=True)
class Decisions:
    """The verdicts between two MPI libraries: how many, and how many said faster or within
    the threshold."""

    faster: int
    level: int
    compared: int

    @property
    def decided(self) -> int:
        return self.faster + self.level


@dataclass(frozen=True)
class Answer:
    statements: list[Statement]  # the answer, by the verdict rule
    ranked: list[Standing]  # by geometric mean over the cells all measured, best first
    beside: list[Beside]
    unranked: list[str]  # MPI libraries that measured under half of the cells
    decisions: Decisions
    scope: Scope


def mpi_variants(data: RunData) -> list[str]:
    """The run's variants of MPI libraries, in the run's order (a family mpiarena does not know,
    an imported suite's, counts as MPI)."""
    not_mpi = {f.name for f in families() if not f.mpi}
    family = {i.impl_id: i.family for i in data.implementations}
    return [v for v in data.variants if family.get(impl_of(v)) not in not_mpi]


def _timed_keys(a: Analysis, kinds: tuple[Kind, ...]) -> list[Cell]:
    return [k for ks in a.tables.values() for k in ks if BENCHMARKS[k.bench].kind in kinds]


def _beside(a: Analysis, variant: str, leader: str) -> Beside:
    keys = [k for k in _timed_keys(a, tuple(KINDS)) if variant in comparable(a.data.cells[k])]
    found = [s for s in standings(a, [leader, variant], keys, leader) if s.variant == variant]
    return Beside(variant, found[0] if found else None)


def _scope(a: Analysis) -> Scope:
    nps = tuple(sorted({k.np for k in _timed_keys(a, tuple(KINDS))}))
    hosts = {r["host"] for job in a.data.jobs for r in job.ranks if r.get("host")}
    return Scope(nps, max(len(hosts), 1), a.data.settings.topology)


def decisions(a: Analysis, mpi: Sequence[str]) -> Decisions:
    """The run's verdicts between two of `mpi`."""
    outcomes = [SPEED_OF_A[v.comparison.outcome] for key in a.judged for v in verdicts(a, key)
                if v.fast in mpi and v.slow in mpi]
    level = outcomes.count(Speed.INDISTINGUISHABLE)
    faster = outcomes.count(Speed.FASTER) + outcomes.count(Speed.SLOWER)
    return Decisions(faster, level, len(outcomes))


def wall_seconds(data: RunData) -> float | None:
    """How long the run took, from its start to its end as stored."""
    run = data.run
    if not run.finished:
        return None
    try:
        took = datetime.fromisoformat(run.finished) - datetime.fromisoformat(run.started)
    except ValueError:
        return None
    return took.total_seconds()


def answer(a: Analysis) -> Answer | None:
    """The answer, where the run holds two MPI libraries that measured cells in common."""
    mpi = mpi_variants(a.data)
    ranked = standings(a, mpi)
    if not ranked:
        return None
    names = {s.variant for s in ranked}
    others = [v for v in a.data.variants if v not in mpi and
              any(v in a.data.cells[k] for k in _timed_keys(a, tuple(KINDS)))]
    return Answer(statements(a, mpi), ranked,
                  [_beside(a, v, ranked[0].variant) for v in others],
                  [v for v in mpi if v not in names], decisions(a, mpi), _scope(a))
