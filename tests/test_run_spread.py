"""Every pair of a cell judged as one family, the fastest by the verdicts, and the run-to-run
spread a run's intervals carry: learned from earlier runs of the machine, or the stated
allowance (analysis/run_spread.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mpiarena.analysis.comparison import Comparison, Why
from mpiarena.analysis.run_spread import (
    ALLOWANCE,
    MIN_SERIES,
    Band,
    SpreadSource,
    band_of,
    learn,
)
from mpiarena.analysis.stats import THRESHOLD, allowed, judge_cells
from mpiarena.analysis.verdicts import Judgement, Speed
from mpiarena.base.records import Cell
from mpiarena.store.results import Levels


def launches(level: float, n: int, rng: np.random.Generator, sd: float = 0.05
             ) -> list[np.ndarray]:
    """n launches of one observation each around `level` (log-normal, `sd`)."""
    return [np.array([level * math.exp(rng.normal(0, sd))]) for _ in range(n)]


def test_every_pair_of_a_cell_is_judged_and_the_table_shows_the_fastest_against_each_other():
    rng = np.random.default_rng(1)
    cell = {"a": launches(1.3, 30, rng), "b": launches(1.0, 30, rng),
            "c": launches(2.0, 30, rng)}
    (judged,) = judge_cells([cell])
    assert {frozenset((v.fast, v.slow)) for v in judged.pairs} == \
        {frozenset(p) for p in (("a", "b"), ("a", "c"), ("b", "c"))}
    assert all(v.ratio >= 1 for v in judged.pairs)  # each pair read with its faster side first
    assert [(v.fast, v.slow) for v in judged.against_fastest] == [("b", "a"), ("b", "c")]
    assert {(v.fast, v.slow): v.outcome for v in judged.pairs}[("a", "c")] == Speed.FASTER
    assert judged.leaders() == ["b"]


def test_two_libraries_within_five_percent_of_each_other_and_ahead_of_the_rest_both_lead():
    rng = np.random.default_rng(2)
    cell = {"a": launches(1.0, 60, rng, 0.01), "b": launches(1.005, 60, rng, 0.01),
            "c": launches(1.6, 60, rng, 0.01)}
    (judged,) = judge_cells([cell])
    assert sorted(judged.leaders()) == ["a", "b"]


def test_no_leader_while_a_comparison_that_could_make_one_is_open():
    rng = np.random.default_rng(3)
    cell = {"a": launches(1.0, 5, rng, 0.2), "b": launches(1.06, 5, rng, 0.2)}
    (judged,) = judge_cells([cell])
    assert judged.pairs[0].outcome == Speed.UNDECIDED and judged.leaders() == []


def test_a_decision_inside_the_run_to_run_spread_is_open_and_says_so():
    decided = Comparison(1.10, 1.08, 1.12, 1e-6, Judgement.ABOVE, 200, 200, 0)
    # a ratio that moves 5% (sd) between runs: 1.10 is not beyond 1.05 once that is allowed for
    c = allowed(decided, 1.96 * 0.05)
    assert c.outcome == Judgement.OPEN and c.why == Why.SPREAD and c.needed == 0
    assert c.ci_low < 1 + THRESHOLD < 1.10 < c.ci_high and c.allowance == pytest.approx(0.098)
    # a 1.5x difference stands: the widened interval still lies beyond 5%
    clear = allowed(Comparison(1.5, 1.4, 1.6, 1e-6, Judgement.ABOVE, 40, 40, 0), 1.96 * 0.05)
    assert clear.outcome == Judgement.ABOVE and clear.ci_low < 1.4


def test_an_open_comparison_that_more_launches_decide_says_how_many_despite_the_spread():
    near = Comparison(1.20, 1.02, 1.40, 0.2, Judgement.OPEN, 10, 10, 30, Why.INTERVAL)
    c = allowed(near, 1.96 * 0.02)
    assert c.outcome == Judgement.OPEN and c.why == Why.INTERVAL and c.needed > 10


def runs_with_drift(sd_between: float, runs: int, seed: int) -> list[Levels]:
    """`runs` runs of 40 series (4 variants x 10 cells, every band), 20 launches each, each
    variant's figure moved between runs by a log-normal factor of `sd_between`."""
    rng = np.random.default_rng(seed)
    out = []
    cells = [Cell("pingpong", s, 2) for s in (8, 64, 512, 4096, 32768, 65536, 262144,
                                           1 << 20, 2 << 20, 4 << 20)]
    for r in range(runs):
        medians, timing = {}, {}
        for variant in "abcd":
            for cell in cells:
                level = math.exp(rng.normal(0, sd_between))
                medians[(cell, variant)] = np.exp(rng.normal(math.log(level), 0.1, 20))
                timing[(cell, variant)] = "loop"
        out.append(Levels(r + 1, medians, timing))
    return out


def test_the_spread_is_learned_from_earlier_runs_of_the_machine():
    *earlier, now = runs_with_drift(0.10, 6, 4)
    spread = learn(now, earlier[::-1])
    assert spread.learned and spread.runs == 5
    for band in Band:
        b = spread.bands[band]
        assert b.source == SpreadSource.EARLIER and b.series >= MIN_SERIES
        assert 0.08 <= b.level < 0.13, (band, b)
        # independent moves of two variants: their ratio moves sqrt(2) times as far
        assert 0.10 < b.ratio < 0.18, (band, b)


def test_a_machine_state_common_to_every_library_moves_figures_and_not_ratios():
    rng = np.random.default_rng(5)
    runs = []
    for r in range(6):
        shift = math.exp(rng.normal(0, 0.2))  # the whole run
        medians = {(Cell("bcast", s, 2), v): np.exp(rng.normal(math.log(shift), 0.02, 20))
                   for s in (8, 64, 512, 4096) for v in "abc"}
        runs.append(Levels(r + 1, medians, dict.fromkeys(medians, "window")))
    spread = learn(runs[-1], runs[-2::-1])
    small = spread.bands[Band.SMALL]
    assert small.source == SpreadSource.EARLIER and small.level > 0.15
    assert small.ratio == ALLOWANCE[Band.SMALL].ratio  # no more than the least a band carries


def test_without_earlier_runs_the_stated_allowance_is_used_and_named():
    (now,) = runs_with_drift(0.10, 1, 6)
    spread = learn(now, [])
    assert not spread.learned and spread.runs == 0
    assert spread.bands == ALLOWANCE
    assert all(b.source == SpreadSource.ALLOWANCE for b in spread.bands.values())


def test_runs_measured_another_way_teach_nothing():
    *earlier, now = runs_with_drift(0.10, 4, 7)
    other = [Levels(e.run_id, e.medians, dict.fromkeys(e.timing, "barrier")) for e in earlier]
    assert not learn(now, other).learned


def test_bands_follow_the_message_size():
    assert [band_of(s) for s in (0, 4096, 4097, 65536, 262144, 1 << 20)] == \
        [Band.SMALL, Band.SMALL, Band.MEDIUM, Band.MEDIUM, Band.LARGE, Band.LARGE]


def test_a_level_that_moved_from_the_earlier_runs_opens_the_verdicts_on_it():
    """Open MPI's allreduce 1 MiB read 2.1x its three earlier runs' level in one quick run of
    six, LAM/MPI's did not, and their verdict reversed: such a verdict is open (Why.MOVED)."""
    *earlier, now = runs_with_drift(0.02, 4, 8)
    cell = Cell("pingpong", 1 << 20, 2)
    moved = dict(now.medians)
    moved[(cell, "a")] = moved[(cell, "a")] * 2.1
    spread = learn(Levels(now.run_id, moved, now.timing), earlier[::-1])
    assert spread.moved == {(cell, "a")}
    rng = np.random.default_rng(9)
    (judged,) = judge_cells([{"a": launches(2.1, 40, rng), "b": launches(1.3, 40, rng)}],
                            allowances=[spread.allowance(cell, "ab")])
    (v,) = judged.pairs
    assert v.comparison.outcome == Judgement.OPEN and v.comparison.why == Why.MOVED
