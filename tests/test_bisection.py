"""The bisection over releases against the verdict rule, in simulation: a step each way, two
steps in one cell, a spread change, no step; and what it costs in measured releases."""

from __future__ import annotations

import math

import numpy as np

from mpiarena.analysis.bisection import Placed, bisect
from mpiarena.analysis.verdicts import Judgement
from mpiarena.base.records import Cell

PING, BCAST, FLAT = Cell("pingpong", 8, 2), Cell("bcast", 64, 2), Cell("barrier", 0, 2)
LAUNCHES, NOISE = 10, 0.03  # launches a release in a step; sd of a launch's log figure


def simulated(levels, seed=1, noise=NOISE, failing=()):
    """A measure() whose releases have these figures per cell (levels[key][release]), each
    launch's off by lognormal noise, fresh at every step, none from the `failing` releases;
    and the log of what it measured."""
    rng = np.random.default_rng(seed)
    log = []

    def measure(releases, cells):
        log.append((releases, set(cells)))
        return {key: {r: [np.array([level[r] * math.exp(rng.normal(0, noise))])
                          for _ in range(LAUNCHES)] for r in releases if r not in failing}
                for key, level in levels.items()}
    return measure, log


def test_a_step_each_way_is_located_between_its_neighbours():
    n = 9
    levels = {PING: [1.0] * 5 + [1.5] * 4,  # slower from release 5 on
              BCAST: [2.0] * 2 + [1.2] * 7,  # faster from release 2 on
              FLAT: [3.0] * n}
    measure, log = simulated(levels)
    found = bisect(n, measure)
    assert found.differs and log[0] == ((0, 8), set())
    assert {(c.key, c.before, c.after, c.direction, c.where) for c in found.changes} == {
        (PING, 4, 5, Judgement.ABOVE, Placed.LOCATED),
        (BCAST, 1, 2, Judgement.BELOW, Placed.LOCATED)}
    ping = next(c for c in found.changes if c.key == PING)
    assert 1.4 < ping.judged.ratio < 1.6 and ping.judged.ci_low > 1.05
    assert {4, 5} <= set(found.steps[ping.step])  # judged in the step that measured both
    assert found.ends[FLAT].outcome in (Judgement.SAME, Judgement.OPEN)
    # every step after the ends measures a midpoint with its two brackets, fresh
    assert all(len(r) == 3 and r[0] < r[1] < r[2] for r, _ in log[1:])
    # about log2(N) + 2 releases per located change: 2 changes, 9 releases
    assert len(found.measured) <= 2 * (math.log2(n) + 2)


def test_two_steps_in_one_cell_are_both_located():
    levels = {PING: [1.0] * 3 + [1.4] * 3 + [2.0] * 3}  # slower at 3, and again at 6
    found = bisect(9, simulated(levels)[0])
    assert [(c.before, c.after, c.direction) for c in found.changes] == [
        (2, 3, Judgement.ABOVE), (5, 6, Judgement.ABOVE)]
    assert all(c.where == Placed.LOCATED for c in found.changes)


def test_a_change_no_neighbour_pair_carries_is_spread_with_each_steps_size():
    levels = {PING: [1.03 ** r for r in range(9)]}  # 3% a release: 27% over the series
    found = bisect(9, simulated(levels, noise=0.005)[0])
    assert found.differs and found.changes
    assert found.changes and all(c.where == Placed.SPREAD and c.after - c.before >= 2
                                 for c in found.changes)
    spread = found.changes[0]
    assert len(spread.inside) == 2 and all(s.judged.ratio < 1.15 for s in spread.inside)


def test_no_step_measures_the_ends_alone():
    measure, log = simulated({PING: [1.0] * 9, BCAST: [2.0] * 9})
    found = bisect(9, measure)
    assert not found.differs and found.changes == [] and found.measured == [0, 8]
    assert len(log) == 1
    assert set(found.ends) == {PING, BCAST}


def test_a_midpoint_that_measured_nothing_leaves_its_change_unplaced():
    levels = {PING: [1.0] * 4 + [2.0] * 5}
    found = bisect(9, simulated(levels, failing=(4,))[0])
    assert [(c.before, c.after, c.where, c.inside) for c in found.changes] == [
        (0, 8, Placed.UNPLACED, ())]
