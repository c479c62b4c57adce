"""`mpiarena releases`' measurements: a series of releases of one library bisected, each step
one stored run of the session `mpiarena run` measures with (its releases interleaved in fresh
launches); a release installed the first time a step needs it."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace

from rich.console import Console

from ..analysis.bisection import Bisection, StepSamples, bisect
from ..analysis.groups import measured
from ..benchmarks import BENCHMARKS
from ..build import build_all
from ..cluster.topology import Topology
from ..errors import ArenaError
from ..impls import Implementation
from ..impls.releases import Release
from ..plan import CellOptions, make_plan
from ..results import Key, RunData, load
from ..status import RunStatus
from ..store import Store
from ..suites import Suite, VariantSpec, override
from ..users import RankUser
from .execute import Settings
from .session import measure

JUDGED_KINDS = ("p2p", "coll", "startup")  # what a library's release changes: not the clock


@dataclass(frozen=True)
class Member:
    """One release of a series: its name, where it came from (index, debian...), the index's
    release where it is one, and the implementation, or how to get it the first time a step
    measures it; a planted series' members are named settings of one implementation."""

    name: str
    origin: str
    release: Release | None = None
    impl: Implementation | None = None
    get: Callable[[], Implementation] | None = None  # installs it; raises ArenaError
    env: tuple[tuple[str, str], ...] | None = None  # planted: the variant's settings


@dataclass(frozen=True)
class StepContext:
    """Where and how each step measures: the store, the topology, the run's settings, who
    ranks run as, the command recorded, and where progress and notes go."""

    store: Store
    topology: Topology
    settings: Settings
    options: CellOptions
    rank_user: RankUser | None
    command: str
    progress_to: Console
    note: Callable[[str], None]


@dataclass
class BisectedSeries:
    """A bisected series: its members, the bisection, each step's run (in step order), each
    step's variant per member, and the members that could not be had."""

    members: list[Member]
    bisection: Bisection = field(default_factory=lambda: Bisection(0))
    runs: list[RunData | None] = field(default_factory=list)  # None: too few releases had
    variant_of: list[dict[int, str]] = field(default_factory=list)
    unavailable: dict[int, str] = field(default_factory=dict)  # member -> why


def narrowed(suite: Suite, cells: Collection[Key]) -> Suite:
    """The suite's benchmarks, sizes and rank counts that the cells need (none: the suite)."""
    if not cells:
        return suite
    benches = tuple(b for b in suite.benchmarks if b in {k.bench for k in cells})
    sized = {k.size for k in cells if BENCHMARKS[k.bench].sized}
    return override(suite, benchmarks=benches,
                    sizes=tuple(s for s in suite.sizes if s in sized) or None,
                    nps=tuple(sorted({k.np for k in cells})))


def find(members: Sequence[Member], suite: Suite, where: StepContext) -> BisectedSeries:
    """Bisect the series (oldest first) over the suite's cells; Ctrl-C ends it, the steps
    measured so far kept in the store."""
    series = BisectedSeries(list(members))
    have: dict[int, Implementation] = {}

    def impl_of(i: int) -> Implementation | None:
        m = series.members[i]
        if i not in have and i not in series.unavailable:
            try:
                have[i] = m.impl if m.impl is not None else m.get() if m.get else _missing(m)
            except ArenaError as e:
                series.unavailable[i] = str(e)
                where.note(f"note: {m.name} ({m.origin}) is unavailable and skipped: {e}")
        return have.get(i)

    def step(indexes: tuple[int, ...], cells: Collection[Key]) -> StepSamples:
        impls = {i: impl for i in indexes if (impl := impl_of(i)) is not None}
        if len(impls) < 2:
            series.runs.append(None)
            series.variant_of.append({})
            return {}
        data, variants = _measured(series.members, impls, narrowed(suite, cells), where,
                                   len(series.runs))
        series.runs.append(data)
        series.variant_of.append(variants)
        return {key: {i: cell[v].nested for i, v in variants.items() if measured(cell.get(v))}
                for key, cell in data.cells.items()
                if BENCHMARKS[key.bench].kind in JUDGED_KINDS}

    series.bisection = bisect(len(series.members), step)
    return series


def _missing(m: Member) -> Implementation:
    raise ArenaError(f"no build of {m.name} here")


def _measured(members: list[Member], impls: dict[int, Implementation], suite: Suite,
              where: StepContext, number: int) -> tuple[RunData, dict[int, str]]:
    """One step: the members' variants interleaved in one stored run; the run read back, and
    each member's variant id."""
    planted = any(members[i].env is not None for i in impls)
    distinct = list({impl.id: impl for impl in impls.values()}.values())
    if planted:
        suite = replace(suite, variants=tuple(VariantSpec(impl.id, members[i].name,
                                                          members[i].env or ())
                                              for i, impl in impls.items()))
        variants = {i: f"{impl.id}:{members[i].name}" for i, impl in impls.items()}
    else:
        variants = {i: impl.id for i, impl in impls.items()}
    builds = build_all(distinct, explicit=True, warn=where.note)
    plan = make_plan(suite, distinct, options=where.options, bare=not planted)
    recorded = {"releases": [members[i].name for i in impls], "bisection_step": number + 1}
    outcome = measure(plan, builds, where.store, where.topology, where.settings,
                      where.rank_user, where.command, where.progress_to, recorded)
    if outcome.status == RunStatus.INCOMPLETE:
        raise KeyboardInterrupt
    return load(where.store, outcome.run_id), variants
