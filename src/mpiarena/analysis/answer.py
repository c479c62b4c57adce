"""The run's answer to "which MPI library should I use here?": the MPI libraries ranked over
the point-to-point and collective cells, the fastest for each of the two kinds (and where a
size range decidedly goes to another), the systems that are not MPI held beside the leader,
what the ranking left out, the run's scope and how long it took. `report.summary` words it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ..base.records import impl_of
from ..impls.registry import families
from ..model.benchmarks import BENCHMARKS, Kind
from ..store.results import Key, RunData
from .groups import comparable
from .run import Analysis, Standing, standings, stretches
from .stats import THRESHOLD
from .verdicts import Speed, Sureness

KINDS = {Kind.P2P: "point-to-point", Kind.COLL: "collectives"}


@dataclass(frozen=True)
class SizeRange:
    """Sizes of one kind of benchmark where another library than the kind's leader is faster
    by more than the threshold over the cells of each size (the leader's interval above it)."""

    leader: str
    first: int
    last: int


@dataclass(frozen=True)
class BenchmarkWin:
    """Sizes of one benchmark where another MPI library than the kind's leader has the lowest
    figure, decided against every other variant (the scoreboard's stretch)."""

    bench: str
    np: int
    winner: str
    first: int
    last: int


@dataclass(frozen=True)
class KindAnswer:
    """The fastest MPI library for one kind of benchmark, and how sure; where another wins a
    benchmark over some sizes, those benchmarks."""

    kind: Kind  # p2p or coll
    ranked: list[Standing]  # best first
    exceptions: list[SizeRange]
    wins: list[BenchmarkWin]

    @property
    def words(self) -> str:
        """The kind as a sentence says it: point-to-point, collectives."""
        return KINDS[self.kind]

    @property
    def leader(self) -> str:
        return self.ranked[0].variant

    @property
    def close(self) -> list[str]:
        """Libraries the leader is not told apart from: their interval reaches the threshold."""
        return [s.variant for s in self.ranked[1:] if s.ci_low <= 1 + THRESHOLD]


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
class Answer:
    ranked: list[Standing]  # MPI libraries over point-to-point and collective cells, best first
    kinds: list[KindAnswer]
    beside: list[Beside]
    unranked: list[str]  # MPI libraries that measured under half of the cells
    decided: int  # comparisons between two MPI libraries the run decided
    compared: int  # comparisons between two MPI libraries
    scope: Scope


def mpi_variants(data: RunData) -> list[str]:
    """The run's variants of MPI libraries, in the run's order (a family mpiarena does not know,
    an imported suite's, counts as MPI)."""
    not_mpi = {f.name for f in families() if not f.mpi}
    family = {i.impl_id: i.family for i in data.implementations}
    return [v for v in data.variants if family.get(impl_of(v)) not in not_mpi]


def _timed_keys(a: Analysis, kinds: tuple[Kind, ...]) -> list[Key]:
    return [k for ks in a.tables.values() for k in ks if BENCHMARKS[k.bench].kind in kinds]


def _exceptions(a: Analysis, keys: list[Key], ranked: list[str]) -> list[SizeRange]:
    """Size ranges where another library decidedly beats the kind's leader, over the sized
    cells of each size."""
    leader, out = ranked[0], list[SizeRange]()
    sizes = sorted({k.size for k in keys if BENCHMARKS[k.bench].sized})
    for size in sizes:
        here = standings(a, ranked, [k for k in keys if k.size == size and
                                     BENCHMARKS[k.bench].sized], unless_led_by=leader)
        if not here:  # the kind's leader leads here too (or nothing to rank)
            continue
        behind = next((s for s in here if s.variant == leader), None)
        if behind is None or behind.ci_low <= 1 + THRESHOLD:
            continue
        winner = here[0].variant
        if out and out[-1].leader == winner and sizes.index(out[-1].last) == sizes.index(size) - 1:
            out[-1] = SizeRange(winner, out[-1].first, size)
        else:
            out.append(SizeRange(winner, size, size))
    return out


def _wins(a: Analysis, kind: Kind, leader: str, mpi: list[str],
          exceptions: list[SizeRange]) -> list[BenchmarkWin]:
    """The benchmarks of `kind` where another MPI library than `leader` is decided fastest over
    some sizes that no size range of `exceptions` already gives it, in the scoreboard's
    order."""
    return [BenchmarkWin(bench, np_, s.winner, s.first, s.last)
            for bench, np_ in a.tables if BENCHMARKS[bench].kind == kind
            for s in stretches(a, bench, np_)
            if s.state == Sureness.DECIDED and s.winner != leader and s.winner in mpi and
            not any(r.leader == s.winner and r.first <= s.first and s.last <= r.last
                    for r in exceptions)]


def _kind(a: Analysis, kind: Kind, mpi: list[str]) -> KindAnswer | None:
    keys = _timed_keys(a, (kind,))
    ranked = standings(a, mpi, keys)
    if not ranked:
        return None
    exceptions = _exceptions(a, keys, [s.variant for s in ranked])
    return KindAnswer(kind, ranked, exceptions,
                      _wins(a, kind, ranked[0].variant, mpi, exceptions))


def _beside(a: Analysis, variant: str, leader: str) -> Beside:
    keys = [k for k in _timed_keys(a, tuple(KINDS)) if variant in comparable(a.data.cells[k])]
    found = [s for s in standings(a, [leader, variant], keys, leader) if s.variant == variant]
    return Beside(variant, found[0] if found else None)


def _scope(a: Analysis) -> Scope:
    nps = tuple(sorted({k.np for k in _timed_keys(a, tuple(KINDS))}))
    hosts = {r["host"] for job in a.data.jobs for r in job.ranks if r.get("host")}
    return Scope(nps, max(len(hosts), 1), a.data.settings.topology)


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
    kinds = [k for kind in KINDS if (k := _kind(a, kind, mpi)) is not None]
    others = [v for v in a.data.variants if v not in mpi and
              any(v in a.data.cells[k] for k in _timed_keys(a, tuple(KINDS)))]
    pairs = [v for vs in a.judged.values() for v in vs if v.fast in mpi and v.slow in mpi]
    decided = sum(v.outcome != Speed.UNDECIDED for v in pairs)
    return Answer(ranked, kinds, [_beside(a, v, ranked[0].variant) for v in others],
                  [v for v in mpi if v not in names], decided, len(pairs), _scope(a))

