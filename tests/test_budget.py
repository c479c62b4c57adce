"""Launches go where the answer is open: the budget's allocation on synthetic launches whose
truth is known, and in a real short run."""

import math
import sqlite3
import time

import numpy as np
from conftest import IMPLS, mpiarena

from mpiarena.analysis.sampling import Looks, open_comparisons
from mpiarena.analysis.stats import verdicts

RATIOS = (1.0, 1.02, 1.08, 1.12, 1.2, 1.4, 2.0, 3.0)


def _launch(rng, level):
    """One launch of 2 observations: its level drawn around `level` (log-sd 10%)."""
    return level * math.exp(rng.normal(0, 0.10)) * np.exp(rng.normal(0, 0.05, 2))


def _decided(cells):
    return sum(v.outcome != "undecided" for vs in verdicts(list(cells.values())) for v in vs)


def _start(rng, ratios, launches):
    """Per cell i, variants a{i} (level 1) and b{i} (its ratio): each cell's own, launched
    alone."""
    return {i: {f"a{i}": [_launch(rng, 1.0) for _ in range(launches)],
                f"b{i}": [_launch(rng, r) for _ in range(launches)]}
            for i, r in enumerate(ratios)}


def _budgeted(rng, ratios, base, extra_turns):
    """`base` launches of every cell, then rounds of one more launch of what open_comparisons
    names (a launch costs 1), until `extra_turns` launches are spent."""
    cells = _start(rng, ratios, base)
    cost = {v: 1.0 for cell in cells.values() for v in cell}
    spent = 0
    seen = Looks(base)
    while spent < extra_turns:
        wanted = open_comparisons(cells, extra_turns - spent, cost, seen)
        if not wanted:
            break
        for key, variant in wanted[:extra_turns - spent]:
            level = 1.0 if variant.startswith("a") else ratios[key]
            cells[key][variant].append(_launch(rng, level))
            spent += 1
    return cells


def _launches(cells):
    return sum(len(s) for cell in cells.values() for s in cell.values())


def test_the_budget_decides_as_many_and_closes_only_past_a_boundary():
    """20 launches of every cell against 10, then up to 10 more per cell: as many decided from
    no more launches; a comparison that crossed a look's boundary (here the 2x and 3x ones, at
    the first look) gets no launch after it, and every other one keeps its launches (a
    comparison decided at the report's level but not past the boundary too: stopping it there
    would be a look unpaid)."""
    rng = np.random.default_rng(31)
    ratios = RATIOS * 3
    runs = [(_start(rng, ratios, 20), _budgeted(rng, ratios, 10, 10 * 2 * len(ratios)))
            for _ in range(4)]
    decided = [sum(_decided(r[i]) for r in runs) for i in (0, 1)]
    launches = [sum(_launches(r[i]) for r in runs) for i in (0, 1)]
    assert decided[1] >= decided[0] - 2, decided
    assert launches[1] <= launches[0], launches
    for _, budgeted in runs:
        for key, ratio in enumerate(ratios):
            counts = {len(s) for s in budgeted[key].values()}
            if ratio >= 2.0:
                assert counts == {10}, (ratio, counts)


def test_the_budget_calls_no_identical_pair_faster():
    rng = np.random.default_rng(32)
    reports = [_budgeted(rng, (1.0,) * 8, 10, 10 * 2 * 8) for _ in range(20)]
    called = sum(any(v.outcome == "faster" for vs in verdicts(list(r.values())) for v in vs)
                 for r in reports)
    assert called <= 1, called


def test_the_time_left_goes_to_the_comparisons_it_decides_most_cheaply():
    """Two open comparisons about as near a decision (40 and 31 more launches a side), one
    between variants whose launch costs 1 s, one with a variant whose launch costs 10 s (PVM's
    slow cells): 100 s decide only the cheap one, and it is chosen; with every launch costing
    the same, the nearer one was; 500 s decide both."""
    rng = np.random.default_rng(40)
    cells = {0: {"a": [_launch(rng, 1.0) for _ in range(8)],
                 "b": [_launch(rng, 1.08) for _ in range(8)]},
             1: {"c": [_launch(rng, 1.0) for _ in range(8)],
                 "pvm": [_launch(rng, 1.08) for _ in range(8)]}}
    more = {v.fast + v.slow: v.needed - 8 for vs in verdicts(list(cells.values())) for v in vs
            if v.outcome == "undecided"}
    assert more == {"ab": 40, "cpvm": 31}, more
    cost = {"a": 1.0, "b": 1.0, "c": 1.0, "pvm": 10.0}
    assert open_comparisons(cells, 100, cost, Looks(8)) == [(0, "a"), (0, "b")]
    assert open_comparisons(cells, 100, {v: 1.0 for v in cost}, Looks(8)) == \
        [(1, "c"), (1, "pvm")]
    assert sorted(open_comparisons(cells, 500, cost, Looks(8))) == [(0, "a"), (0, "b"),
                                                                    (1, "c"), (1, "pvm")]


def test_a_budgeted_run_adds_launches_to_open_cells_and_stops_in_time(db):
    began = time.monotonic()
    done = mpiarena("run", f"--impl={IMPLS[0].id}", f"--impl={IMPLS[1].id}", "--bench",
                    "pingpong", "--sizes", "8,64K", "--launches", "3", "--observations", "2",
                    "--budget", "12s", "--db", db)
    took = time.monotonic() - began
    assert done.returncode == 0, done.stderr
    counts = sqlite3.connect(db).execute(
        "SELECT size, variant, COUNT(DISTINCT launch) FROM cells WHERE bench='pingpong' "
        "GROUP BY size, variant").fetchall()
    # 3 launches a side decide nothing (4 can, where every launch of one side is faster than
    # every launch of the other: the test's floor 2/70 is under 0.05): more came
    assert max(n for *_, n in counts) > 3, counts
    assert took < 12 + 20, took  # the budget, plus building, start-up and the report
    assert "Who is fastest" in done.stdout


def test_the_budget_buys_no_launches_for_the_timer(db):
    """The timer's cell reads a clock, not the libraries' message passing: a budgeted run of it
    alone ends with the launches asked for, though 3 launches a side decide nothing (a quick
    run's budget once spent 22 PVM launches, 19 s of its 170, on PVM's and raw TCP's timer cells,
    which read the same clock)."""
    done = mpiarena("run", f"--impl={IMPLS[0].id}", f"--impl={IMPLS[1].id}", "--bench",
                    "wtime", "--launches", "3", "--budget", "8s", "--db", db)
    assert done.returncode == 0, done.stderr
    counts = sqlite3.connect(db).execute(
        "SELECT variant, COUNT(DISTINCT launch) FROM cells WHERE bench='wtime' "
        "GROUP BY variant").fetchall()
    assert len(counts) == 2 and all(n == 3 for _, n in counts), counts
