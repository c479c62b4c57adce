"""The verdict rule checked in simulation, with the budget's own loop: synthetic launches at the
launch spread this machine measures (log-normal levels, a share of launches slow, partial
launches reading slower than whole ones), `sampling.open_comparisons` choosing the launches
look by look as `mpiarena run --budget` does, and the report's rule (`stats.verdicts` at
`stats.final_alpha`) judging the end. The tests and `bench/budget_simulation.py` run it at the
line (a true ratio of 1 + THRESHOLD), where a rule that peeks without paying shows."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..base.status import LaunchShape
from ..store.results import Stratified
from .race import Race
from .sampling import Looks, open_comparisons
from .stats import THRESHOLD, Sample, Verdict, final_alpha, verdicts
from .verdicts import Speed


@dataclass(frozen=True)
class Spread:
    """How launches vary, as measured here: log-sd between launches, the share of launches
    that run `slow_by` slower, and how much slower a partial launch reads."""

    between: float = 0.14
    slow_share: float = 0.07
    slow_by: float = 1.25
    partial_by: float = 1.08


@dataclass(frozen=True)
class Report:
    """A report to simulate: its cells, each a tuple of the variants' true levels."""

    name: str
    cells: tuple[tuple[float, ...], ...]


@dataclass(frozen=True)
class Tally:
    """One simulated report's verdicts: per cell, per variant other than the true fastest,
    the verdict and whether it is false, and the launches spent."""

    faster: int  # "faster" verdicts
    false_faster: int  # of them, where the truth is within the threshold or the other way
    line_faster: int  # "faster" verdicts of comparisons whose truth sits at the line
    line: int  # comparisons whose truth sits at the line
    found: int  # comparisons whose truth lies beyond the threshold called "faster" rightly
    beyond: int  # comparisons whose truth lies beyond the threshold
    launches: int


def _launch(rng: np.random.Generator, level: float, spread: Spread,
            shape: LaunchShape) -> np.ndarray:
    """One launch's observation of a cell."""
    slow = spread.slow_by if rng.random() < spread.slow_share else 1.0
    partial = spread.partial_by if shape == LaunchShape.PARTIAL else 1.0
    return np.array([level * slow * partial * math.exp(rng.normal(0, spread.between))])


def simulate(shape: Report, rng: np.random.Generator, spread: Spread = Spread(),
             base: int = 10, rounds: int = 150, budgeted: bool = True) -> Tally:
    """One report of `shape`: `base` whole launches of every variant, then up to `rounds`
    rounds of partial launches of what the budget names (every variant a launch a round where
    `budgeted` is False: a fixed design of base + rounds launches, all whole)."""
    names = [f"v{i}" for i in range(max(map(len, shape.cells)))]
    data: dict[int, dict[str, tuple[list[np.ndarray], list[LaunchShape]]]] = {
        i: {v: ([], []) for v in names[:len(cell)]} for i, cell in enumerate(shape.cells)}

    def add(i: int, v: str, kind: LaunchShape) -> None:
        obs, shapes = data[i][v]
        obs.append(_launch(rng, shape.cells[i][names.index(v)], spread, kind))
        shapes.append(kind)

    for i, cell in data.items():
        for v in cell:
            for _ in range(base):
                add(i, v, LaunchShape.WHOLE)
    seen = Looks(base)
    for _ in range(rounds):
        if budgeted:
            cells: dict[int, dict[str, Sample]] = {
                i: {v: Stratified(*d) for v, d in cell.items()} for i, cell in data.items()}
            wanted = open_comparisons(cells, math.inf, {v: 1.0 for v in names}, seen)
            if not wanted:
                break
            for i, v in wanted:
                add(i, v, LaunchShape.PARTIAL)
        else:
            for i, cell in data.items():
                for v in cell:
                    add(i, v, LaunchShape.WHOLE)
    judged = verdicts([{v: Stratified(*d) for v, d in cell.items()}
                       for cell in data.values()], final_alpha(budgeted))
    return _tally(shape, names, judged, sum(len(d[0]) for c in data.values()
                                           for d in c.values()))


def _tally(shape: Report, names: list[str], judged: list[list[Verdict]],
           launches: int) -> Tally:
    """Count the report's verdicts against the truth."""
    counts = dict(faster=0, false_faster=0, line_faster=0, line=0, found=0, beyond=0)
    margin = 1 + THRESHOLD
    for levels, cell in zip(shape.cells, judged, strict=True):
        for v in cell:
            truth = levels[names.index(v.slow)] / levels[names.index(v.fast)]
            beyond = max(truth, 1 / truth) > margin + 1e-9
            at_line = math.isclose(max(truth, 1 / truth), margin)
            counts["line"] += at_line
            counts["beyond"] += beyond
            if v.outcome == Speed.FASTER:
                counts["faster"] += 1
                right = truth > margin + 1e-9
                counts["false_faster"] += not right
                counts["line_faster"] += at_line
                counts["found"] += right
    return Tally(launches=launches, **counts)


def alone(ratio: float) -> Report:
    """One comparison alone drives its two variants' launches."""
    return Report(f"one comparison alone at {ratio:g}", ((1.0, ratio),))


def among(ratio: float, boundary: int = 3, cells: int = 30) -> Report:
    """`boundary` cells at `ratio` among `cells`, the others clearly apart (1.3-2x)."""
    clear = np.linspace(1.3, 2.0, cells - boundary)
    return Report(f"{boundary} cells at {ratio:g} among {cells}",
                 tuple([(1.0, ratio)] * boundary + [(1.0, float(r)) for r in clear]))


def quick(ratio: float, cells: int = 73) -> Report:
    """The quick suite's shape: 4 MPI libraries over `cells` cells, levels spread as measured
    (the second library 1.3x, the third 1.75x, the fourth 2x the first), a tenth of the cells
    holding a pair at `ratio`."""
    rng = np.random.default_rng(7)
    out = []
    for i in range(cells):
        levels = [1.0, 1.3, 1.75, 2.0] * np.exp(rng.normal(0, 0.25, 4))
        if i % 10 == 0:
            levels[1] = levels[0] * ratio
        out.append(tuple(float(x) for x in levels))
    return Report(f"quick suite's shape, a pair at {ratio:g} in every tenth cell", tuple(out))


def race_keeps_best(rng: np.random.Generator, levels: tuple[float, ...],
                    spread: Spread = Spread()) -> bool:
    """One simulated `program --tune` race of one library's configurations at `levels` (the first
    the truly best): whether the best is still in the race at its end."""
    names = [f"c{i}" for i in range(len(levels))]
    race = Race({"lib": names})
    while not race.finished:
        for c in race.alive():
            race.record(c, float(_launch(rng, levels[names.index(c)], spread,
                                         LaunchShape.WHOLE)[0]))
        race.close_round()
    return "c0" not in race.dropped
