"""Statistics on launches: the launch is the unit, observations inside it are nested.

On a shared machine the level of a figure is set when a job is launched (page placement, where
the host puts the vCPUs) and varies between launches far more than inside one (Hunold and
Carpen-Amarie, TPDS 2016; Hoefler and Belli, SC 2015). So a sample is one array of
observations per launch; its figure is the median of the launch medians, its intervals come
from a hierarchical bootstrap (launches resampled, then observations inside each), and the
test behind a verdict compares launch medians. No normality is assumed, ratios are never
averaged.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as st

CONFIDENCE = 0.95
THRESHOLD = 0.05  # a difference under 5% is never called, whatever the test says
ALPHA = 0.05
ROUNDS = 2000  # bootstrap resamples

Sample = Sequence[np.ndarray]  # one array of observations per launch


def nest(values: Sequence[float], launches: Sequence[int]) -> list[np.ndarray]:
    """Observations grouped by their launch, in launch order."""
    x = np.asarray(values, dtype=float)
    ids = np.asarray(launches)
    return [x[ids == i] for i in np.unique(ids)]


def flat(sample: Sample) -> np.ndarray:
    return np.concatenate([np.asarray(a, dtype=float) for a in sample]) if len(sample) else \
        np.array([])


def median(x: Sequence[float] | np.ndarray) -> float:
    """np.median of a short array, bit for bit, without its overhead per call (a report takes
    hundreds of thousands of them)."""
    s = sorted(x.tolist() if isinstance(x, np.ndarray) else x)
    half = len(s) // 2
    if not s or any(math.isnan(v) for v in s):
        return math.nan
    return s[half] if len(s) % 2 else (s[half - 1] + s[half]) / 2


def launch_medians(sample: Sample) -> np.ndarray:
    return np.array([median(a) for a in sample if len(a)])


def center(sample: Sample) -> float:
    """A sample's figure: the median of its launch medians."""
    return median(launch_medians(sample))


def boot_centers(sample: Sample, rng: np.random.Generator, rounds: int = ROUNDS) -> np.ndarray:
    """Hierarchical bootstrap of the median of launch medians: each round draws launches with
    replacement, then, for each draw, the launch's observations with replacement."""
    launches = [np.asarray(a, dtype=float) for a in sample if len(a)]
    # each launch's median under `rounds` resamples of its own observations
    drawn = [a[rng.integers(0, len(a), (rounds, len(a)))] for a in launches]
    if len({len(a) for a in launches}) == 1:  # one call for all launches, the same figures
        inner = np.median(np.stack(drawn), axis=2)
    else:
        inner = np.stack([np.median(d, axis=1) for d in drawn])
    picks = rng.integers(0, len(launches), (rounds, len(launches)))
    which = rng.integers(0, rounds, (rounds, len(launches)))
    return np.median(inner[picks, which], axis=1)


def _order_interval(x: np.ndarray, cover: list[float], confidence: float,
                    weight: Callable[[int, float], float]) -> tuple[float, float]:
    """[x_(k), x_(n-k+1)] of sorted x for the largest k whose coverage (cover[k-1]) reaches
    `confidence`, moved toward the next pair inward by weight(k, share of the coverage to
    spare); the whole range when no pair reaches it."""
    n = len(x)
    k = max((i + 1 for i, c in enumerate(cover) if c >= confidence), default=1)
    if cover[0] < confidence or k >= n - k + 1:
        return float(x[0]), float(x[-1])
    share = (cover[k - 1] - confidence) / (cover[k - 1] - cover[k])
    w = weight(k, share)
    return (float(x[k - 1] + w * (x[k] - x[k - 1])),
            float(x[n - k] - w * (x[n - k] - x[n - k - 1])))


def center_ci(sample: Sample, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Interval of the figure from the order statistics of the launch medians, interpolated
    between neighbours (Hettmansperger and Sheather, 1986) to reach `confidence`; with under 6
    launches no pair reaches 95% and this is their range (see `center_coverage`)."""
    x = np.sort(launch_medians(sample))
    n = len(x)
    cover = [float(st.binom.cdf(n - k, n, 0.5) - st.binom.cdf(k - 1, n, 0.5))
             for k in range(1, n // 2 + 2)]  # P(x_k <= true median <= x_(n-k+1))
    return _order_interval(x, cover, confidence,
                           lambda k, share: (n - k) * share / (k + (n - 2 * k) * share))


def center_coverage(launches: int, confidence: float = CONFIDENCE) -> float:
    """How sure `center_ci` is: `confidence`, or less for under 6 launches (their range)."""
    if launches < 2:
        return 0.0
    return min(confidence, 1 - 2 * 0.5**launches)


def _rerun_misses(n: int, j: int) -> float:
    """Chance that a rerun's figure falls below the j-th smallest of n launch medians, both runs
    of n exchangeable launches: fewer than j of these lie below the rerun's median (its lower
    middle launch for even n, which bounds the chance from above)."""
    m = (n + 1) // 2
    return sum(math.comb(k + m - 1, k) * math.comb(2 * n - k - m, n - k)
               for k in range(j)) / math.comb(2 * n, n)


def rerun_coverage(launches: int) -> float:
    """How sure `rerun_range` is, at least: 95% from 9 launches, less below (their range)."""
    if launches < 2:
        return 0.0
    return min(CONFIDENCE, 1 - 2 * _rerun_misses(launches, 1))


def rerun_range(sample: Sample, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Where the figure of a rerun (the same command, as many launches) lands with at least
    `confidence`: order statistics of the launch medians, exact for exchangeable launches and
    free of any distribution, interpolated between neighbours as `center_ci` is. A 95% interval
    of the figure holds a rerun's figure only about 83% of the time (both runs vary); this
    range is the one to check a rerun against. Under 9 launches it is their range."""
    x = np.sort(launch_medians(sample))
    cover = [1 - 2 * _rerun_misses(len(x), j) for j in range(1, len(x) // 2 + 2)]
    return _order_interval(x, cover, confidence, lambda _k, share: share)


def ci_halfwidth(sample: Sample, confidence: float = CONFIDENCE) -> float:
    """Half-width of the figure's interval relative to the figure (the wider side); infinite
    with fewer than 3 launches (no interval can speak for launches not measured) or a figure
    that is not positive."""
    if sum(1 for a in sample if len(a)) < 3:
        return math.inf
    figure = center(sample)
    if figure <= 0:
        return math.inf
    lo, hi = center_ci(sample, confidence)
    return max(figure - lo, hi - figure) / figure


def variance_share(sample: Sample) -> float | None:
    """Share of the variance of log observations that lies between launches (one-way random
    effects, method of moments), 0-1; None with fewer than 2 launches of 2 observations."""
    groups = [np.log(np.asarray(a, dtype=float)) for a in sample if len(a) >= 2 and min(a) > 0]
    if len(groups) < 2:
        return None
    n = np.array([len(g) for g in groups], dtype=float)
    means = np.array([g.mean() for g in groups])
    grand = float(np.concatenate(groups).mean())
    msb = float(np.sum(n * (means - grand) ** 2) / (len(groups) - 1))
    msw = float(sum(((g - g.mean()) ** 2).sum() for g in groups) / (n.sum() - len(groups)))
    n0 = (n.sum() - (n**2).sum() / n.sum()) / (len(groups) - 1)
    between = max(0.0, (msb - msw) / n0)
    total = between + msw
    return between / total if total > 0 else 0.0


@dataclass(frozen=True)
class Summary:
    launches: int
    n: int  # observations, all launches together
    median: float  # the median of launch medians
    ci_low: float
    ci_high: float
    rerun_low: float  # where a rerun's figure lands (`rerun_range`)
    rerun_high: float
    min: float
    max: float
    between: float | None  # share of the variance between launches


def summarize(sample: Sample) -> Summary:
    x = flat(sample)
    lo, hi = center_ci(sample)
    rerun_lo, rerun_hi = rerun_range(sample)
    return Summary(sum(1 for a in sample if len(a)), len(x), center(sample), lo, hi, rerun_lo,
                   rerun_hi, float(x.min()), float(x.max()), variance_share(sample))


def ratio_ci(fast: Sample, slow: Sample, seed: int = 0,
             confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """center(slow) / center(fast), with a hierarchical bootstrap percentile interval."""
    rng = np.random.default_rng(seed)
    a, b = boot_centers(fast, rng), boot_centers(slow, rng)
    boot = b / np.where(a > 0, a, np.nan)
    tail = (1 - confidence) / 2 * 100
    lo, hi = np.nanpercentile(boot, [tail, 100 - tail])
    return center(slow) / center(fast), float(lo), float(hi)


def p_value(a: Sample, b: Sample) -> float:
    """Two-sided Mann-Whitney U test on launch medians (exact without ties); 1.0 when either
    side has a single launch or every launch median is the same."""
    ma, mb = launch_medians(a), launch_medians(b)
    if len(ma) < 2 or len(mb) < 2 or np.ptp(np.concatenate([ma, mb])) == 0:
        return 1.0
    tied = len(np.unique(np.concatenate([ma, mb]))) < len(ma) + len(mb)
    return float(st.mannwhitneyu(ma, mb, alternative="two-sided",
                                 method="asymptotic" if tied else "exact").pvalue)


def smallest_p(n_a: int, n_b: int) -> float:
    """The smallest two-sided p the launch test can give with these many launches."""
    return min(1.0, 2 / math.comb(n_a + n_b, n_a))


def launches_needed(comparisons: int, alpha: float = ALPHA) -> int:
    """Launches per variant for the launch test to reach `alpha` after Holm over
    `comparisons` tests, when every launch of one variant beats every launch of the other."""
    n = 2
    while smallest_p(n, n) * max(comparisons, 1) >= alpha:
        n += 1
    return n


def holm(pvalues: list[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the input order."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


@dataclass(frozen=True)
class Verdict:
    fast: str
    slow: str
    ratio: float
    ci_low: float
    ci_high: float
    p_adjusted: float
    outcome: str  # faster | indistinguishable | undecided
    launches_fast: int
    launches_slow: int
    needed: int = 0  # undecided for want of launches: how many per variant the test needs


def decide(ratio_low: float, ratio_high: float, p_adjusted: float, launches: int,
           alpha: float = ALPHA, threshold: float = THRESHOLD) -> str:
    """faster: the whole ratio interval clears 1 + threshold and the launch test backs it;
    indistinguishable: the whole interval lies inside the +-threshold band (equivalence);
    anything else is undecided, and so is every comparison where a side has a single launch
    (its interval speaks for that launch only)."""
    if launches < 2:
        return "undecided"
    if ratio_low > 1 + threshold and p_adjusted < alpha:
        return "faster"
    if ratio_low >= 1 / (1 + threshold) and ratio_high <= 1 + threshold:
        return "indistinguishable"
    return "undecided"


def direction(ratio_low: float, ratio_high: float, p_adjusted: float, launches: int,
              alpha: float = ALPHA, threshold: float = THRESHOLD) -> str:
    """`decide` for a ratio that may fall either side of 1: above (the whole interval clears
    1 + threshold, backed by the launch test), below (likewise under 1 / (1 + threshold)),
    indistinguishable, or undecided."""
    if decide(ratio_low, ratio_high, p_adjusted, launches, alpha, threshold) == "faster":
        return "above"
    if decide(1 / ratio_high, 1 / ratio_low, p_adjusted, launches, alpha, threshold) == "faster":
        return "below"
    return decide(ratio_low, ratio_high, p_adjusted, launches, alpha, threshold)


def verdicts(samples: list[dict[str, Sample]], alpha: float = ALPHA,
             threshold: float = THRESHOLD) -> list[list[Verdict]]:
    """For each cell's samples, the fastest against every other, the launch tests
    Holm-corrected across all cells. An undecided verdict that more launches could decide
    says how many per variant the test would need."""
    raw = []
    for cell in samples:
        ranked = sorted(cell, key=lambda k: center(cell[k]))
        rows = []
        for other in ranked[1:]:
            ratio, lo, hi = ratio_ci(cell[ranked[0]], cell[other])
            rows.append((ranked[0], other, ratio, lo, hi, p_value(cell[ranked[0]], cell[other])))
        raw.append(rows)
    m = sum(len(rows) for rows in raw)
    adjusted = iter(holm([r[5] for rows in raw for r in rows]))
    need = launches_needed(m, alpha)
    out = []
    for cell, rows in zip(samples, raw, strict=True):
        cell_out = []
        for fast, slow, ratio, lo, hi, _ in rows:
            p = next(adjusted)
            n_fast, n_slow = len(launch_medians(cell[fast])), len(launch_medians(cell[slow]))
            outcome = decide(lo, hi, p, min(n_fast, n_slow), alpha, threshold)
            short = outcome == "undecided" and smallest_p(n_fast, n_slow) * m >= alpha \
                and (lo > 1 + threshold or min(n_fast, n_slow) < 2)
            cell_out.append(Verdict(fast, slow, ratio, lo, hi, p, outcome, n_fast, n_slow,
                                    need if short else 0))
        out.append(cell_out)
    return out


def outliers(values: np.ndarray, k: float = 1.5, min_rel: float = 0.0) -> np.ndarray:
    """Indices of observations beyond Tukey's fences (k IQR outside the quartiles).

    An observation within `min_rel` of the median (a fraction) is never flagged, so a very
    tight sample does not report differences too small to matter.
    """
    x = np.asarray(values, dtype=float)
    if len(x) < 4:
        return np.array([], dtype=int)
    q1, median, q3 = np.percentile(x, [25, 50, 75])
    iqr = q3 - q1
    out = (x < q1 - k * iqr) | (x > q3 + k * iqr)
    out &= np.abs(x - median) > min_rel * abs(median)
    return np.flatnonzero(out)
