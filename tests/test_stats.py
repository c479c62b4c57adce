"""Statistics on synthetic launches whose truth is known."""

import numpy as np

from mpiarena.analysis.stats import (
    center,
    center_ci,
    center_coverage,
    holm,
    launches_needed,
    ratio_ci,
    rerun_coverage,
    rerun_range,
    summarize,
    variance_share,
    verdicts,
)


def _launches(rng, level, n_launches, between=0.3, within=0.05, n_obs=10):
    """Observations of n_launches launches: each launch's level drawn around `level` (log
    sd `between`), its observations around that (log sd `within`)."""
    return [level * np.exp(rng.normal(0, between) + rng.normal(0, within, n_obs))
            for _ in range(n_launches)]


def test_launch_interval_covers_the_truth_95_percent_where_a_within_launch_one_does_not():
    rng = np.random.default_rng(1)
    trials, hits, naive = 1000, 0, 0
    for _ in range(trials):
        sample = _launches(rng, 1.0, 10)
        lo, hi = center_ci(sample)
        hits += lo <= 1.0 <= hi
        x = np.concatenate(sample)  # every observation as if independent: one launch's view
        boot = np.median(x[rng.integers(0, len(x), (500, len(x)))], axis=1)
        nlo, nhi = np.percentile(boot, [2.5, 97.5])
        naive += nlo <= 1.0 <= nhi
    assert 0.92 <= hits / trials <= 0.98, hits / trials
    assert naive / trials < 0.75, naive / trials


def test_a_rerun_lands_in_the_rerun_range_95_percent_where_the_figure_interval_holds_less():
    rng = np.random.default_rng(4)
    trials, in_range, in_ci = 1000, 0, 0
    for _ in range(trials):
        run, rerun = _launches(rng, 1.0, 10), _launches(rng, 1.0, 10)
        lo, hi = rerun_range(run)
        in_range += lo <= center(rerun) <= hi
        lo, hi = center_ci(run)
        in_ci += lo <= center(rerun) <= hi
    assert 0.95 <= in_range / trials <= 0.99, in_range / trials  # at least 95%, by its bound
    assert 0.78 <= in_ci / trials <= 0.88, in_ci / trials  # both figures vary: about 83%
    assert rerun_coverage(10) == 0.95 and rerun_coverage(8) < 0.95 and rerun_coverage(1) == 0


def test_few_launches_say_how_sure_their_range_is():
    assert center_coverage(10) == 0.95
    assert center_coverage(4) == 1 - 2 * 0.5**4
    sample = [np.array([1.0, 1.1]), np.array([2.0, 2.1]), np.array([3.0])]
    assert center_ci(sample) == (1.05, 3.0)
    assert center(sample) == 2.05


def test_ratio_interval_covers_a_known_ratio_across_launches():
    rng = np.random.default_rng(2)
    trials, hits = 200, 0
    for _ in range(trials):
        fast, slow = _launches(rng, 1.0, 8, 0.1), _launches(rng, 1.3, 8, 0.1)
        _ratio, lo, hi = ratio_ci(fast, slow, seed=int(rng.integers(1 << 30)))
        hits += lo <= 1.3 <= hi
    assert 0.88 <= hits / trials <= 1.0


def test_variance_share_finds_where_the_variance_lives():
    rng = np.random.default_rng(3)
    between = variance_share(_launches(rng, 1.0, 8, between=0.3, within=0.03))
    within = variance_share(_launches(rng, 1.0, 8, between=0.0, within=0.1))
    assert between is not None and between > 0.9
    assert within is not None and within < 0.2
    s = summarize(_launches(rng, 1.0, 8))
    assert (s.launches, s.n) == (8, 80) and s.ci_low <= s.median <= s.ci_high


def test_holm_is_monotone_and_bounded():
    assert holm([0.01, 0.04, 0.03]) == [0.03, 0.06, 0.06]
    assert holm([0.9, 0.8]) == [1.0, 1.0]


def test_clear_difference_is_called_and_identical_ones_are_equivalent():
    rng = np.random.default_rng(4)
    cells = [{"a": _launches(rng, 1.0, 8, 0.01), "b": _launches(rng, 1.5, 8, 0.01)},
             {"a": _launches(rng, 1.0, 8, 0.005, 0.01), "b": _launches(rng, 1.0, 8, 0.005, 0.01)}]
    first, second = verdicts(cells)
    assert first[0].fast == "a" and first[0].outcome == "faster"
    assert 1.45 < first[0].ratio < 1.55
    assert second[0].outcome == "indistinguishable"


def test_identical_populations_almost_never_give_faster():
    rng = np.random.default_rng(5)
    cells = [{"a": _launches(rng, 1.0, 8), "b": _launches(rng, 1.0, 8)} for _ in range(200)]
    called = sum(v.outcome == "faster" for cell in verdicts(cells) for v in cell)
    assert called <= 2, called


def test_one_launch_never_backs_a_verdict_and_says_how_many_would():
    rng = np.random.default_rng(6)
    one = {"a": _launches(rng, 1.0, 1, 0.0, 0.01, 50), "b": _launches(rng, 3.0, 1, 0.0, 0.01, 50)}
    (v,), = verdicts([one])
    assert v.outcome == "undecided"
    assert v.needed == launches_needed(1) == 4
    assert launches_needed(100) == 8


def test_a_small_ratio_with_a_wide_interval_is_undecided_not_indistinguishable():
    rng = np.random.default_rng(7)
    cell = {"a": _launches(rng, 1.0, 4, 0.4), "b": _launches(rng, 1.0, 4, 0.4)}
    (v,), = verdicts([cell])
    assert v.outcome == "undecided" and v.ci_high > 1.05
