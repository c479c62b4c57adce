"""Launches go where the answer is open: the budget's allocation on synthetic launches whose
truth is known, and in a real short run."""

import math
import random
import sqlite3
import time

import numpy as np
from conftest import IMPLS, mpiarena

from mpiarena.analysis.sampling import Looks, Spending, bought_together, period
from mpiarena.analysis.stats import verdicts
from mpiarena.base.records import Cell

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
    """`base` launches of every cell, then the budget's rounds (`sampling.Spending`, a launch
    costing 1) until `extra_turns` launches are spent or a round does not fit."""
    cells = _start(rng, ratios, base)
    spending = Spending(Looks(base), [[[(k, v) for k, cell in cells.items() for v in cell]]],
                        random.Random(1))
    cost = {v: 1.0 for cell in cells.values() for v in cell}
    spent = 0
    while launches := spending.next_round(cells, extra_turns - spent, cost):
        for key, variant in launches[0]:
            level = 1.0 if variant.startswith("a") else ratios[key]
            cells[key][variant].append(_launch(rng, level))
            spent += 1
    return cells


def _launches(cells):
    return sum(len(s) for cell in cells.values() for s in cell.values())


def test_the_budget_decides_as_many_and_closes_only_past_a_boundary():
    """20 launches of every cell against 10, then rounds of one more launch of every pair not
    closed while 10 more per cell fit: as many decided from no more launches; a comparison
    that crossed a look's boundary (here the 2x and 3x ones, at the first look) gets no launch
    after it, and every other one keeps its launches (a comparison decided at the report's
    level but not past the boundary too: stopping it there would be a look unpaid)."""
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
            else:
                assert len(counts) == 1, (ratio, counts)  # both sides, every round


def test_the_budget_calls_no_identical_pair_faster():
    rng = np.random.default_rng(32)
    reports = [_budgeted(rng, (1.0,) * 8, 10, 10 * 2 * 8) for _ in range(20)]
    called = sum(any(v.outcome == "faster" for vs in verdicts(list(r.values())) for v in vs)
                 for r in reports)
    assert called <= 1, called


def _cell(rng, levels, launches):
    return {v: [_launch(rng, level) for _ in range(launches)] for v, level in levels.items()}


def test_a_costly_variant_is_launched_every_few_rounds_and_a_round_that_does_not_fit_ends():
    """A cell of two MPI libraries (0.12 s a launch) and PVM (1.6 s, 13 times as much), all
    near: PVM is launched every 13th round, the others every round; the rounds stop where the
    next does not fit in the seconds left."""
    rng = np.random.default_rng(41)
    cell = _cell(rng, {"mpich": 1.0, "openmpi": 1.01, "pvm": 1.02}, 10)
    cost = {"mpich": 0.12, "openmpi": 0.12, "pvm": 1.6}
    spending = Spending(Looks(10), [[[(0, v) for v in cell]]], random.Random(2))
    rounds = []
    left = 10.0
    while launches := spending.next_round({0: cell}, left, cost):
        rounds.append([v for _, v in launches[0]])
        left -= sum(cost[v] for v in rounds[-1])
    assert [i for i, r in enumerate(rounds) if "pvm" in r] == [0, 13], rounds
    assert all(r[:2] == ["mpich", "openmpi"] or "pvm" in r for r in rounds)
    # the 27th round is PVM's third: it does not fit in the 0.56 s left, and the budget ends
    assert len(rounds) == 26 and 0.24 < left < 0.24 + 1.6, (len(rounds), left)
    assert period(1.6, 0.12) == 13 and period(0.15, 0.12) == 1


def test_cells_judged_launch_by_launch_are_bought_together():
    """bcast and its persistent counterpart (bcast_init) are judged launch by launch for each
    library: where only bcast's comparison between libraries is open, the budget's launches
    measure bcast_init too, so the two keep sharing every launch (two launches of one cell
    alone after 10 shared turned the pair into two sets of launches before)."""
    rng = np.random.default_rng(42)
    bcast, persistent = Cell("bcast", 1024, 2), Cell("bcast_init", 1024, 2)
    cells = {bcast: _cell(rng, {"a": 1.0, "b": 1.0}, 10),
             persistent: _cell(rng, {"a": 1.0, "b": 3.0}, 10)}
    turns = [(c, v) for c in (bcast, persistent) for v in "ab"]
    assert bought_together([bcast, persistent, Cell("bcast", 8, 2)]) == \
        {bcast: [persistent], persistent: [bcast]}
    spending = Spending(Looks(10), [[turns]], random.Random(3),
                        bought_together([bcast, persistent]))
    assert spending.next_round({bcast: cells[bcast]}, 10.0, {"a": 0.1, "b": 0.1}) == [turns]
    alone = Spending(Looks(10), [[turns]], random.Random(3))
    assert alone.next_round({bcast: cells[bcast]}, 10.0, {"a": 0.1, "b": 0.1}) == \
        [[(bcast, "a"), (bcast, "b")]]


def test_a_budgeted_run_adds_launches_to_open_cells_and_stops_in_time(db):
    began = time.monotonic()
    done = mpiarena("run", f"--impl={IMPLS[0].id}", f"--impl={IMPLS[1].id}", "--bench",
                    "pingpong", "--sizes", "8,64K", "--launches", "3", "--observations", "2",
                    "--budget", "5s", "--db", db)
    took = time.monotonic() - began
    assert done.returncode == 0, done.stderr
    counts = sqlite3.connect(db).execute(
        "SELECT size, variant, COUNT(DISTINCT launch) FROM cells WHERE bench='pingpong' "
        "GROUP BY size, variant").fetchall()
    # 3 launches a side decide nothing (4 can, where every launch of one side is faster than
    # every launch of the other: the test's floor 2/70 is under 0.05): more came
    assert max(n for *_, n in counts) > 3, counts
    assert took < 5 + 20, took  # the budget, plus building, start-up and the report
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
