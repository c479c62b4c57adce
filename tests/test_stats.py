"""Statistics on synthetic samples whose truth is known."""

import numpy as np

from mpiarena.stats import holm, median_ci, ratio_ci, summarize, verdicts


def test_median_interval_covers_the_true_median_about_95_percent():
    rng = np.random.default_rng(1)
    trials = 400
    hits = sum(lo <= 1.0 <= hi for lo, hi in
               (median_ci(rng.lognormal(0.0, 0.3, 25)) for _ in range(trials)))
    assert 0.90 <= hits / trials <= 0.995


def test_ratio_interval_covers_a_known_ratio():
    rng = np.random.default_rng(2)
    trials, hits = 200, 0
    for _ in range(trials):
        fast = rng.lognormal(0.0, 0.1, 30)
        slow = 1.3 * rng.lognormal(0.0, 0.1, 30)
        _ratio, lo, hi = ratio_ci(fast, slow, seed=int(rng.integers(1 << 30)))
        hits += lo <= 1.3 <= hi
    assert 0.88 <= hits / trials <= 1.0


def test_summary_fields():
    s = summarize(np.array([1.0, 2.0, 3.0, 4.0, 100.0]))
    assert (s.n, s.median, s.min, s.max) == (5, 3.0, 1.0, 100.0)
    assert s.ci_low <= s.median <= s.ci_high
    assert s.cv > 1


def test_holm_is_monotone_and_bounded():
    assert holm([0.01, 0.04, 0.03]) == [0.03, 0.06, 0.06]
    assert holm([0.9, 0.8]) == [1.0, 1.0]


def test_clear_difference_is_called_and_identical_ones_are_not():
    rng = np.random.default_rng(3)
    a = rng.normal(1.0, 0.01, 20)
    cells = [{"a": a, "b": rng.normal(1.5, 0.01, 20)},
             {"a": rng.normal(1.0, 0.05, 20), "b": rng.normal(1.0, 0.05, 20)}]
    first, second = verdicts(cells)
    assert first[0].fast == "a" and first[0].outcome == "faster"
    assert 1.45 < first[0].ratio < 1.55
    assert second[0].outcome == "indistinguishable"


def test_small_difference_under_threshold_is_never_called():
    rng = np.random.default_rng(4)
    cell = {"a": rng.normal(1.00, 0.001, 50), "b": rng.normal(1.02, 0.001, 50)}
    (v,), = verdicts([cell])
    assert v.outcome == "indistinguishable"


def test_large_difference_with_too_few_observations_is_undecided():
    (v,), = verdicts([{"a": np.array([1.0, 1.1]), "b": np.array([3.0, 3.3])}])
    assert v.outcome == "undecided"
