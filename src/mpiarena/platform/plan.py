"""Turn a suite and a set of implementations into the ordered list of measurements to take.

Each variant is measured in several independent launches per rank count: launch i of every
variant, one job at a time in a shuffled order, before launch i + 1 of any; a launch measures
its cells back to back in the session's order, shuffled with a recorded seed, so that drift on
a shared machine does not favour whichever ran first.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from ..base.errors import ArenaError
from ..base.machine import cores
from ..base.records import Cell, CellRequest, Timing
from ..impls import Implementation, families, family_of
from ..model.benchmarks import BENCHMARKS, Kind
from ..suites import Suite, VariantSpec


@dataclass(frozen=True)
class Variant:
    """An implementation plus named settings; compared exactly like an implementation."""

    id: str
    impl: Implementation
    name: str = "default"
    env: tuple[tuple[str, str], ...] = ()
    args: tuple[str, ...] = ()
    binding: str | None = None  # None: one core per rank unless oversubscribed
    exclusive: bool = False  # measured in a round of its own, no other job alive
    benchmarks: tuple[str, ...] = ()  # only these benchmarks (empty: every one of the suite)

    def measures(self, bench: str) -> bool:
        return not self.benchmarks or bench in self.benchmarks

    def binding_for(self, np: int) -> str:
        if self.binding:
            return self.binding
        return "core" if np <= cores() else "none"


@dataclass(frozen=True)
class CellOptions:
    """What a run's settings ask of every cell beyond its suite."""

    offcache: bool = False  # rotate buffers so caches do not flatter sizes
    validate: bool = False  # check received data after each cell


Turn = tuple[CellRequest, Variant]


@dataclass
class Session:
    """Launch `index` of each of its variants: jobs started together, cells taking turns."""

    index: int
    turns: list[Turn] = field(default_factory=list)

    @property
    def variants(self) -> list[Variant]:
        seen = {v.id: v for _, v in self.turns}
        return list(seen.values())


@dataclass
class Round:
    """Everything measured at one rank count: start-up launches, then the measuring launches
    (exclusive variants in sessions of their own, right after the shared one of each index)."""

    np: int
    startups: list[Variant] = field(default_factory=list)
    sessions: list[Session] = field(default_factory=list)


@dataclass
class Plan:
    suite: Suite
    variants: list[Variant]
    rounds: list[Round]
    seed: int
    options: CellOptions = CellOptions()

    def request(self, cell: Cell, variant: Variant) -> CellRequest:
        """How the variant's launches ask the core for the cell."""
        return request(cell, self.suite, variant.impl, self.options)

    @property
    def total_steps(self) -> int:
        return sum(len(r.startups) + sum(len(s.turns) for s in r.sessions) for r in self.rounds)

    @property
    def comparisons(self) -> int:
        """How many comparisons its report judges as one family: in every timed cell, every
        pair of the variants that measure it (stats.judge_cells), the machine floor aside (a
        reference, never judged)."""
        measured: dict[tuple[Cell, int], set[str]] = {}
        for rnd in self.rounds:
            for v in rnd.startups:
                for bench in ("init", "finalize"):
                    if not family_of(v.impl).floor:
                        measured.setdefault((Cell(bench, 0, rnd.np), rnd.np), set()).add(v.id)
            for session in rnd.sessions:
                for asked, v in session.turns:
                    if BENCHMARKS[asked.cell.bench].kind != Kind.COST and \
                            not family_of(v.impl).floor:
                        measured.setdefault((asked.cell, rnd.np), set()).add(v.id)
        return sum(len(ids) * (len(ids) - 1) // 2 for ids in measured.values())


def variants_for(specs: tuple[VariantSpec, ...], impls: list[Implementation],
                 bare: bool = True) -> list[Variant]:
    """Each implementation as it is (unless not `bare`), plus every variant spec matching its
    id or family."""
    out = []
    for impl in impls:
        if bare:
            out.append(Variant(impl.id, impl, benchmarks=family_of(impl).benchmarks))
        for spec in specs:
            if spec.impl in (impl.id, impl.family, family_of(impl).lineage):
                out.append(Variant(f"{impl.id}:{spec.name}", impl, spec.name, spec.env,
                                   spec.args, spec.binding, spec.exclusive, spec.benchmarks))
    return out


def check_variants(specs: tuple[VariantSpec, ...], found: list[str], where: str) -> None:
    """Refuse a variant whose impl is neither a family nor an implementation found here: it
    would match nothing and vanish without a word."""
    for spec in specs:
        names = [f.name for f in families()]
        if spec.impl not in names and spec.impl not in found:
            raise ArenaError(f"{where}: variant '{spec.name}' is for impl '{spec.impl}', which is "
                             f"neither a family ({', '.join(names)}) nor an implementation "
                             f"found here ({', '.join(sorted(found))}); see 'mpiarena impls'")


def timing(cell: Cell, suite: Suite, impl: Implementation) -> str:
    """How a cell's calls are timed, the one rule: collectives by the suite's method, everything
    else as a loop divided by its iterations (point-to-point calls synchronise themselves;
    bcast-ack times itself). Window falls back to barrier where it cannot work: PVM (its
    messages pass through a daemon, which ranks spinning until their windows keep off the
    cores: measured here, 60-80% of calls dropped and kept calls 2-4x their barrier time), and
    more ranks than this machine's cores (they cannot all be running when a window opens; an
    emulated cluster's nodes share these cores too)."""
    if BENCHMARKS[cell.bench].kind != Kind.COLL or cell.bench == "bcast-ack":
        return Timing.LOOP
    if suite.sync == Timing.WINDOW and (not family_of(impl).window_timing
                                        or cell.np > cores()):
        return Timing.BARRIER
    return suite.sync


def max_time(cell: Cell, suite: Suite) -> float:
    """Seconds a cell may take observations: the cpu benchmark holds for hold_time each."""
    if cell.bench == "cpu":
        return max(suite.max_cell_time, suite.hold_time * (suite.observations + 1))
    return suite.max_cell_time


def request(cell: Cell, suite: Suite, impl: Implementation,
            options: CellOptions = CellOptions()) -> CellRequest:
    """The cell as the suite and the run's settings ask it of a core of `impl`."""
    return CellRequest(cell=cell, timing=timing(cell, suite, impl),
                       observations=suite.observations, target_time=suite.target_time,
                       max_time=max_time(cell, suite), window=suite.window,
                       hold_time=suite.hold_time, offcache=options.offcache,
                       validate=options.validate)


def cells_by_np(suite: Suite) -> dict[int, list[Cell]]:
    by_np: dict[int, list[Cell]] = {}
    for name in suite.benchmarks:
        bench = BENCHMARKS[name]
        if bench.kind == Kind.STARTUP:
            continue
        nps = [2] if bench.pair else [n for n in suite.nps if n >= bench.min_np]
        sizes = bench.sizes or (suite.sizes if bench.sized else (0,))
        for np in nps:
            by_np.setdefault(np, []).extend(Cell(name, s, np) for s in sizes)
    return by_np


def _fits(variant: Variant, np: int) -> bool:
    family = family_of(variant.impl)
    return np >= family.min_np and (family.max_np is None or np <= family.max_np)


def _session(index: int, cells: list[Cell], variants: list[Variant], plan: Plan,
             rng: random.Random) -> Session:
    order = list(cells)
    rng.shuffle(order)
    return Session(index, [(plan.request(cell, v), v) for cell in order
                           for v in rng.sample(variants, len(variants)) if v.measures(cell.bench)])


def make_plan(suite: Suite, impls: list[Implementation], seed: int | None = None,
              options: CellOptions = CellOptions(), bare: bool = True) -> Plan:
    """The suite's launches of every variant; not `bare`: of the suite's variants alone."""
    seed = random.SystemRandom().randrange(2**31) if seed is None else seed
    rng = random.Random(seed)
    variants = variants_for(suite.variants, impls, bare)
    plan = Plan(suite, variants, [], seed, options)
    cells = cells_by_np(suite)
    startup = any(BENCHMARKS[b].kind == Kind.STARTUP for b in suite.benchmarks)
    for np in sorted(set(cells) | (set(suite.nps) if startup else set())):
        rnd = Round(np)
        fit = [v for v in variants if _fits(v, np)]
        starting = [v for v in fit if v.measures("init")]
        if startup:
            for _ in range(suite.init_launches):
                rnd.startups += rng.sample(starting, len(starting))
        here = cells.get(np, [])
        shared = [v for v in fit if not v.exclusive]
        alone = [v for v in fit if v.exclusive]
        for i in range(suite.launches if here else 0):
            groups = [shared, *([v] for v in rng.sample(alone, len(alone)))]
            rnd.sessions += [_session(i, here, g, plan, rng) for g in groups if g]
        plan.rounds.append(rnd)
    return plan
