"""The verdict rule checked in simulation with the budget's own loop: synthetic launches at the
launch spread this machine measures (log-normal levels, a share of launches slow, partial
launches reading slower than whole ones, levels that drift within a run and between runs),
`sampling.Spending` choosing each round's partial launches as `mpiarena run --budget` does
(finite seconds, each variant's launch costing what its launches so far took, one base session
a round, the loop ending when a round does not fit), and the report's rule judging the end:
every pair of a cell's variants as one family (`stats.judge` at `stats.final_alpha`), and the
report's own `stats.verdicts` beside it. The tests and `bench/budget_simulation.py` run it at
the line (a true ratio of 1 + THRESHOLD), where a rule that peeks without paying shows."""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass, field

import numpy as np

from ..base.status import LaunchShape
from ..store.results import Stratified
from .race import Race
from .sampling import Looks, Spending
from .stats import THRESHOLD, Pair, Sample, final_alpha, judge, verdicts
from .verdicts import Judgement, Speed


@dataclass(frozen=True)
class Spread:
    """How launches vary, as measured here: log-sd between launches, the share of launches
    that run `slow_by` slower, how much slower a partial launch reads; and drift: the machine's
    level over a run (a ramp drawn within +-`ramp` from start to end, and a random walk of
    log-sd `walk` over the run, both common to the variants), each variant's own random walk
    within the run (`own`, log-sd over the run) and each variant's level drawn per run
    (`between_runs`, log-sd)."""

    between: float = 0.14
    slow_share: float = 0.07
    slow_by: float = 1.25
    partial_by: float = 1.08
    ramp: float = 0.0
    walk: float = 0.0
    own: float = 0.0
    between_runs: float = 0.0


@dataclass(frozen=True)
class LaunchCosts:
    """Seconds, as `bench/launch_cost.py` measured them: a partial launch `launch` plus `cell`
    a cell, its cells the simulated ones open plus `others` of the rest of the suite; a whole
    launch `whole`; a variant in `costly` `costly_by` times as much (PVM's 1.6 s); `budget`
    seconds after the base launches (a quick run's 105 s less its base launches). With 8 cells
    open a partial launch takes 134 ms and 4 variants get about 150 of them each, as the MPI
    libraries of a quick run did (154-184 launches each, docs/results.md)."""

    launch: float = 0.100
    cell: float = 0.0043
    others: int = 0
    whole: float = 0.36
    costly: tuple[str, ...] = ()
    costly_by: float = 13.0
    budget: float = 80.0
    partial: bool = True  # the budget's launches partial (False: whole, one stratum)


@dataclass(frozen=True)
class Report:
    """A report to simulate: its cells, each a tuple of the variants' true levels (v0, v1...;
    a cell's missing variants are not measured there), the first `tested` of them counted
    (all where None; the others fill the report's family)."""

    name: str
    cells: tuple[tuple[float, ...], ...]
    spread: Spread = Spread()
    costs: LaunchCosts = LaunchCosts()
    tested: int | None = None


@dataclass
class Tally:
    """A report's verdicts against the truth, over every pair of a cell's variants (all pairs,
    one family) and over the report's own `verdicts` (each cell's fastest against the others):
    at the line (a true ratio of 1 + THRESHOLD, long-run truth and the run's own), beyond it
    (the truly faster side called faster), identical pairs; launches a side."""

    line: int = 0
    line_faster: int = 0  # all pairs: "faster" at the line (either way)
    line_faster_run: int = 0  # ... where the run's own levels put the pair at or within it
    line_run: int = 0
    line_same: int = 0  # all pairs: "within 5%" at the line
    beyond: int = 0
    found: int = 0
    identical: int = 0
    identical_faster: int = 0
    verdicts_line: int = 0  # the report's verdicts: pairs at the line they make
    verdicts_line_faster: int = 0
    launches: list[int] = field(default_factory=list)  # a side, per pair at the line

    def add(self, other: Tally) -> None:
        for name in vars(self):
            setattr(self, name, getattr(self, name) + getattr(other, name))


@dataclass
class _SimulatedRun:
    """One simulated run's state: the clock, the machine's and each variant's drift, each
    (cell, variant)'s launches so far and each variant's launch walls."""

    report: Report
    rng: np.random.Generator
    names: list[str]
    clock: float = 0.0
    common: float = 0.0
    ramp: float = 0.0
    own: dict[str, float] = field(default_factory=dict)
    run_level: dict[str, float] = field(default_factory=dict)
    data: dict[int, dict[str, tuple[list[np.ndarray], list[LaunchShape]]]] = \
        field(default_factory=dict)
    drifted: dict[tuple[int, str], list[float]] = field(default_factory=dict)
    walls: dict[str, list[float]] = field(default_factory=dict)
    views: dict[int, dict[str, Sample]] = field(default_factory=dict)  # data as samples

    def launch(self, v: str, cells: list[int], shape: LaunchShape) -> None:
        """One launch of variant v measuring `cells`: the clock moves on by its cost, the
        drift by the time it took."""
        c, s = self.report.costs, self.report.spread
        took = c.whole if shape == LaunchShape.WHOLE else \
            c.launch + c.cell * (len(cells) + c.others)
        took *= c.costly_by if v in c.costly else 1.0
        step = math.sqrt(took / c.budget)
        self.common += self.rng.normal(0, s.walk * step)
        self.own[v] = self.own.get(v, 0.0) + self.rng.normal(0, s.own * step)
        drift = self.common + self.ramp * self.clock / c.budget + self.own[v]
        slow = s.slow_by if self.rng.random() < s.slow_share else 1.0
        partial = s.partial_by if shape == LaunchShape.PARTIAL else 1.0
        noise = np.exp(self.rng.normal(0, s.between, len(cells)))
        for i, x in zip(cells, noise, strict=True):
            level = self.report.cells[i][self.names.index(v)] * self.run_level[v]
            obs, shapes = self.data[i][v]
            obs.append(np.array([level * math.exp(drift) * slow * partial * x]))
            shapes.append(shape)
            self.views.setdefault(i, {})[v] = Stratified(obs, shapes)
            self.drifted.setdefault((i, v), []).append(self.own[v])
        self.clock += took
        self.walls.setdefault(v, []).append(took)

    def session(self, turns: list[tuple[int, str]], shape: LaunchShape) -> None:
        """One launch of each variant in `turns`, in the order they first appear."""
        for v in dict.fromkeys(v for _, v in turns):
            self.launch(v, [i for i, w in turns if w == v], shape)

    def samples(self) -> dict[int, dict[str, Sample]]:
        return self.views

    def cost(self) -> dict[str, float]:
        return {v: float(np.mean(w)) for v, w in self.walls.items()}


def simulate(report: Report, rng: np.random.Generator, base: int = 10,
             chosen: bool = True) -> Tally:
    """One run of `report`: `base` whole launches of every variant (launch i of every variant,
    shuffled, before launch i + 1 of any), then the budget's rounds of partial launches as
    `sampling.Spending` names them until a round does not fit in the budget's seconds; the
    end judged by the report's rule (all pairs; and by `verdicts` where `chosen`)."""
    names = [f"v{i}" for i in range(max(map(len, report.cells)))]
    s = report.spread
    run = _SimulatedRun(report, rng, names, ramp=float(rng.uniform(-s.ramp, s.ramp)),
               run_level={v: math.exp(rng.normal(0, s.between_runs)) for v in names})
    run.data = {i: {v: ([], []) for v in names[:len(cell)]} for i, cell in enumerate(report.cells)}
    measures = {v: [i for i, cell in enumerate(report.cells) if len(cell) > names.index(v)]
                for v in names}
    order = random.Random(int(rng.integers(2**31)))
    sessions: list[list[list[tuple[int, str]]]] = []
    for _ in range(base):  # one shared session an index, each variant's cells in turn
        turns = [(i, v) for v in order.sample(names, len(names)) for i in measures[v]]
        sessions.append([turns])
        run.session(turns, LaunchShape.WHOLE)
    began = run.clock
    spending: Spending[int] = Spending(Looks(base), sessions, order)
    while (left := report.costs.budget - (run.clock - began)) > 0:
        parts = spending.next_round(run.samples(), left, run.cost())
        if not parts:
            break
        for turns in parts:
            run.session(turns, LaunchShape.PARTIAL if report.costs.partial else
                        LaunchShape.WHOLE)
    return _tally(report, names, run, chosen)


def _tally(report: Report, names: list[str], run: _SimulatedRun, chosen: bool) -> Tally:
    """Judge the run as a report does and count its verdicts against the truth."""
    cells = run.samples()
    pairs = [(i, a, b) for i, cell in cells.items() for a, b in itertools.combinations(cell, 2)]
    judged = judge([Pair(cells[i][a], cells[i][b]) for i, a, b in pairs], final_alpha(True))
    out = Tally()
    line = 1 + THRESHOLD

    def truth(i: int, a: str, b: str, own: bool) -> float:
        """b's true level over a's: long-run, or in this run's states (`own`)."""
        level = {v: report.cells[i][names.index(v)] * (
            run.run_level[v] * math.exp(float(np.mean(run.drifted[i, v]))) if own else 1.0)
            for v in (a, b)}
        return level[b] / level[a]

    tested = len(report.cells) if report.tested is None else report.tested
    for (i, a, b), j in zip(pairs, judged, strict=True):
        r = truth(i, a, b, False)
        if i >= tested:
            continue
        faster = j.outcome in (Judgement.ABOVE, Judgement.BELOW)
        if math.isclose(max(r, 1 / r), line):
            out.line += 1
            out.line_faster += faster
            out.line_same += j.outcome == Judgement.SAME
            out.launches.append(min(j.launches_a, j.launches_b))
            if max(own := truth(i, a, b, True), 1 / own) <= line + 1e-9:
                out.line_run += 1
                out.line_faster_run += faster
        elif max(r, 1 / r) > line:
            out.beyond += 1
            out.found += j.outcome == (Judgement.ABOVE if r > 1 else Judgement.BELOW)
        elif r == 1.0:
            out.identical += 1
            out.identical_faster += faster
    for i, cell in zip(cells, verdicts(list(cells.values()), final_alpha(True)) if chosen
                       else [], strict=False):
        for v in cell:
            r = truth(i, v.fast, v.slow, False)
            if i < tested and math.isclose(max(r, 1 / r), line):
                out.verdicts_line += 1
                out.verdicts_line_faster += v.outcome == Speed.FASTER
    return out


def leaders(levels: tuple[float, ...], cells: int = 8, spread: Spread = Spread(),
            costs: LaunchCosts = LaunchCosts()) -> Report:
    """`cells` cells whose variants sit at `levels` (near-tied leaders: 1.0, 1.0, 1.0, 1.05),
    among cells of two variants clearly apart (1.5-3x), three for each pair of the others:
    they close at the first look, and three quarters of the family is decided, as in a quick
    run (Benjamini-Hochberg's level is then near its most)."""
    name = f"{len(levels)} variants at {', '.join(f'{x:g}' for x in levels)}"
    clear = 3 * cells * len(levels) * (len(levels) - 1) // 2
    return Report(name, tuple([levels] * cells +
                              [(1.0, float(r)) for r in np.linspace(1.5, 3.0, clear)]),
                  spread, costs, cells)


def race_keeps_best(rng: np.random.Generator, levels: tuple[float, ...],
                    spread: Spread = Spread()) -> bool:
    """One simulated `program --tune` race of one library's configurations at `levels` (the first
    the truly best): whether the best is still in the race at its end."""
    names = [f"c{i}" for i in range(len(levels))]
    race = Race({"lib": names})
    while not race.finished:
        for c in race.alive():
            slow = spread.slow_by if rng.random() < spread.slow_share else 1.0
            race.record(c, levels[names.index(c)] * slow * math.exp(rng.normal(0,
                                                                             spread.between)))
        race.close_round()
    return "c0" not in race.dropped
