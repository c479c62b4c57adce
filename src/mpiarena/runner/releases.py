"""`mpiarena releases`' measurements: a series of releases of one library bisected, each step
one stored run of the session `mpiarena run` measures with (its releases interleaved in fresh
launches); a release installed the first time a step needs it."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace

from ..analysis.bisection import Bisection, StepSamples, bisect
from ..analysis.build_or_release import Attribution, attribute
from ..analysis.groups import measured
from ..base.errors import ArenaError
from ..base.records import Cell, RunKind
from ..base.status import RunStatus
from ..cluster.topology import Topology
from ..impls import Implementation, family_of
from ..impls.releases import Release
from ..model.benchmarks import BENCHMARKS, Kind
from ..model.runs import ReleasesSettings, settings_of
from ..platform.build import build_all
from ..platform.plan import CellOptions
from ..store import Store
from ..store.results import RunData, load
from ..suites import Suite, VariantSpec, override
from .execute import Settings
from .session import Recorded, RunContext, SuiteAsk, run_suite

# what a library's release changes: not the clock
JUDGED_KINDS = (Kind.P2P, Kind.COLL, Kind.STARTUP)
INDEX = "index"  # the origin of a release installed from the package index


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

    @property
    def label(self) -> str:
        """The member as a stored series names it: '4.2.3', '4.0.2 (debian)'."""
        return self.name if self.origin == INDEX else f"{self.name} ({self.origin})"


@dataclass(frozen=True)
class StepContext:
    """Where and how each step measures: where its run is recorded and who runs it (the
    context every suite run has), on which topology, under which run settings, and what
    every cell asks of the core."""

    run: RunContext
    topology: Topology
    settings: Settings
    options: CellOptions = field(default_factory=CellOptions)


@dataclass
class BisectedSeries:
    """A bisected series: its members, the bisection, each step's run (in step order), each
    step's variant per member, the members that could not be had, and for neighbours of
    different origins whose difference is located, whether it follows the build or the
    release."""

    members: list[Member]
    bisection: Bisection = field(default_factory=lambda: Bisection(0))
    runs: list[RunData | None] = field(default_factory=list)  # None: too few releases had
    variant_of: list[dict[int, str]] = field(default_factory=list)
    unavailable: dict[int, str] = field(default_factory=dict)  # member -> why
    separated: list[Separated] = field(default_factory=list)  # build or release, per pair


def narrowed(suite: Suite, cells: Collection[Cell]) -> Suite:
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
                where.run.note(f"note: {m.name} ({m.origin}) is unavailable and skipped: {e}")
        return have.get(i)

    def step(indexes: tuple[int, ...], cells: Collection[Cell]) -> StepSamples:
        impls = {i: impl for i in indexes if (impl := impl_of(i)) is not None}
        if len(impls) < 2:
            series.runs.append(None)
            series.variant_of.append({})
            return {}
        data, variants = _measured(series.members, impls, narrowed(suite, cells), where,
                                   len(series.runs))
        series.runs.append(data)
        series.variant_of.append(variants)
        return _samples(data, variants)

    series.bisection = bisect(len(series.members), step)
    builds: dict[tuple[int, int], set[Cell]] = {}
    for c in series.bisection.changes:
        if c.after - c.before == 1 and \
                series.members[c.before].origin != series.members[c.after].origin:
            builds.setdefault((c.before, c.after), set()).add(c.key)
    for (first, second), cells in sorted(builds.items()):
        if (done := separate(series, (first, second), have, cells, suite, where)) is not None:
            series.separated.append(done)
    return series


def _samples(data: RunData, variants: Mapping[int, str]) -> StepSamples:
    """A step's judged cells: each measured member's launches."""
    return {key: {i: cell[v].nested for i, v in variants.items() if measured(cell.get(v))}
            for key, cell in data.cells.items() if BENCHMARKS[key.bench].kind in JUDGED_KINDS}


def replayed(store: Store, run_id: int) -> BisectedSeries | None:
    """The series a stored bisection step belongs to, its bisection replayed from its stored
    steps (the same verdicts, nothing measured); None for a run that is no step of a series
    stored whole (an older store's, or a build-or-release separation)."""
    wanted = settings_of(store.run(run_id))
    if not isinstance(wanted, ReleasesSettings) or not wanted.series or \
            wanted.bisection_step is None:
        return None
    steps = [(record.id, s) for record, _ in store.runs()
             if isinstance(s := settings_of(record), ReleasesSettings)
             and s.series == wanted.series and s.bisection_step is not None]
    steps = _containing(steps, run_id)
    members = [_member(label) for label in wanted.series]
    series = BisectedSeries(members)
    pending = list(steps)

    def step(indexes: tuple[int, ...], cells: Collection[Cell]) -> StepSamples:
        if not pending or pending[0][1].bisection_step != len(series.runs) + 1 or \
                set(pending[0][1].releases) - {members[i].name for i in indexes}:
            series.runs.append(None)  # a step that measured too few, or none stored
            series.variant_of.append({})
            return {}
        number, stored = pending.pop(0)
        data = load(store, number)
        variants = dict(zip([i for i in indexes if members[i].name in stored.releases],
                            data.variants, strict=False))
        series.runs.append(data)
        series.variant_of.append(variants)
        return _samples(data, variants)

    series.bisection = bisect(len(members), step)
    return series


def _containing(steps: list[tuple[int, ReleasesSettings]], run_id: int
                ) -> list[tuple[int, ReleasesSettings]]:
    """The steps of the one bisection (step 1, 2, ...) that holds run_id."""
    runs: list[list[tuple[int, ReleasesSettings]]] = []
    for item in steps:
        if item[1].bisection_step == 1 or not runs:
            runs.append([])
        runs[-1].append(item)
    return next((r for r in runs if any(i == run_id for i, _ in r)), [])


def _member(label: str) -> Member:
    name, _, origin = label.partition(" (")
    return Member(name, origin.rstrip(")") or INDEX, Release.parse(name))


def _missing(m: Member) -> Implementation:
    raise ArenaError(f"no build of {m.name} here")


@dataclass(frozen=True)
class StepVariant:
    """One variant of a step: an implementation as it is (no name), or named settings of it."""

    impl: Implementation
    name: str | None = None
    env: tuple[tuple[str, str], ...] = ()

    @property
    def variant(self) -> str:
        return self.impl.id if self.name is None else f"{self.impl.id}:{self.name}"


def _measured(members: list[Member], impls: dict[int, Implementation], suite: Suite,
              where: StepContext, number: int) -> tuple[RunData, dict[int, str]]:
    """One step: the members' variants interleaved in one stored run; the run read back, and
    each member's variant id."""
    entries = {i: StepVariant(impl) if members[i].env is None else
               StepVariant(impl, members[i].name, members[i].env or ())
               for i, impl in impls.items()}
    recorded = {"releases": tuple(members[i].name for i in impls), "bisection_step": number + 1,
                "series": tuple(m.label for m in members)}
    data = _run(list(entries.values()), suite, where, recorded)
    return data, {i: e.variant for i, e in entries.items()}


def _run(entries: list[StepVariant], suite: Suite, where: StepContext,
         recorded: Mapping[str, object]) -> RunData:
    """The entries' variants interleaved in one stored run, read back."""
    distinct = list({e.impl.id: e.impl for e in entries}.values())
    suite = replace(suite, variants=tuple(VariantSpec(e.impl.id, e.name, e.env)
                                          for e in entries if e.name is not None))
    outcome = run_suite(SuiteAsk(suite, distinct, where.settings, where.options,
                                 bare=any(e.name is None for e in entries),
                                 recorded=Recorded(RunKind.RELEASES, recorded)),
                        where.run, where.topology)
    if outcome.status == RunStatus.INCOMPLETE:
        raise KeyboardInterrupt
    return load(where.run.store, outcome.run_id)


@dataclass
class Separated:
    """Two builds of neighbouring releases measured with the second under each build lever:
    the run, and what each cell's difference follows."""

    first: int  # members of the series: the second is the one run under the levers
    second: int
    run: RunData
    attributions: list[Attribution]


def separate(series: BisectedSeries, pair: tuple[int, int], impls: Mapping[int, Implementation],
             cells: Collection[Cell], suite: Suite, where: StepContext) -> Separated | None:
    """Build or release, for two members the bisection measured (`impls`: the members'
    implementations): one more run of both, the one whose build has levers (the second, else
    the first) also under each of them (neither has any: None, nothing measured)."""
    if not set(pair) <= set(impls):
        return None
    for first, second in (pair, pair[::-1]):  # the levers of either
        a, b = impls[first], impls[second]
        version = build_all([b], explicit=True, warn=where.run.note)[b.id].version_string
        if levers := family_of(b).build_levers(version):
            break
    else:
        return None
    entries = [StepVariant(a), StepVariant(b),
               *(StepVariant(b, s.value.replace(" ", "-"), s.env) for s in levers)]
    recorded = {"releases": (series.members[first].name, series.members[second].name),
                "build_levers": tuple(s.value for s in levers)}
    data = _run(entries, narrowed(suite, cells), where, recorded)
    samples = {key: {v: cell[v].nested for v in (e.variant for e in entries)
                     if measured(cell.get(v))}
               for key, cell in data.cells.items() if key in cells}
    names = [e.variant for e in entries[2:]]
    found = attribute(samples, entries[0].variant, entries[1].variant, names)
    return Separated(first, second, data, found)
