"""Statistics on launches: the launch is the unit, observations inside it are nested.

On a shared machine the level of a figure is set when a job is launched (page placement, where
the host puts the vCPUs) and varies between launches far more than inside one (Hunold and
Carpen-Amarie, TPDS 2016; Hoefler and Belli, SC 2015). So a sample is one array of
observations per launch; its figure is the median of the launch medians, and every interval,
test and decision works on the launch medians (order statistics for a figure, Moses' interval
and the Mann-Whitney test for a ratio): `judge` is the one verdict pipeline every comparison
goes through. No normality is assumed, ratios are never averaged.
"""

from __future__ import annotations

import functools
import itertools
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .verdicts import Judgement, Speed

CONFIDENCE = 0.95
THRESHOLD = 0.05  # "faster" means faster by more than this; "indistinguishable", within it
# the expected share of false verdicts among the "faster" verdicts of one family (a report):
# the false discovery rate, held by Benjamini and Hochberg's step-up over the family's tests of
# "faster by more than THRESHOLD". A table of hundreds of comparisons keeps its power, and a
# cell decides the same whether the run around it is small or large (a family-wise rule such
# as Holm's asks p < ALPHA / m of its first comparison: 0.0002 over a quick run's 219).
ALPHA = 0.05
CORRECTION = "Benjamini-Hochberg"  # how a family's tests are corrected, as reports name it
NORMAL = statistics.NormalDist()  # the standard normal (not scipy.stats: half a second to import)
MIN_LAUNCHES = 4  # launches a side before any decision (the test's smallest p at 3: 0.1)

Sample = Sequence[np.ndarray]  # one array of observations per launch


def flat(sample: Sample) -> np.ndarray:
    return np.concatenate([np.asarray(a, dtype=float) for a in sample]) if len(sample) else \
        np.array([])


def median(x: Sequence[float] | np.ndarray) -> float:
    """np.median of a short array, bit for bit, without its overhead per call (a report takes
    hundreds of thousands of them)."""
    s: list[float] = sorted(x.tolist() if isinstance(x, np.ndarray) else x)
    half = len(s) // 2
    if not s or any(map(math.isnan, s)):
        return math.nan
    return s[half] if len(s) % 2 else (s[half - 1] + s[half]) / 2


def launch_medians(sample: Sample) -> np.ndarray:
    return np.array([median(a) for a in sample if len(a)])


def center(sample: Sample) -> float:
    """A sample's figure: the median of its launch medians."""
    return median(launch_medians(sample))


def _order_interval(x: np.ndarray, cover: Sequence[float], confidence: float,
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
    return _order_interval(x, _center_cover(n), confidence,
                           lambda k, share: (n - k) * share / (k + (n - 2 * k) * share))


@functools.cache
def _center_cover(n: int) -> tuple[float, ...]:
    """P(x_k <= true median <= x_(n-k+1)) of n launch medians, for k = 1 .. n // 2 + 1, exact:
    the binomial(n, 1/2) counts from k to n - k over 2^n (the same for every cell with n
    launches: a report asks for it thousands of times)."""
    below = [0, *itertools.accumulate(math.comb(n, i) for i in range(n + 1))]  # P(X < j) 2^n
    return tuple((below[n - k + 1] - below[k]) / 2**n for k in range(1, n // 2 + 2))


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


# where the rerun range reaches CONFIDENCE, and how often a CONFIDENCE interval of the figure
# holds a rerun's figure (both vary: the normal approximation, 83% at 95%)
RERUN_SURE_FROM = next(n for n in range(2, 100) if rerun_coverage(n) >= CONFIDENCE)
INTERVAL_HOLDS_RERUN = 2 * NORMAL.cdf(NORMAL.inv_cdf((1 + CONFIDENCE) / 2) / math.sqrt(2)) - 1


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
    with fewer than 6 launches (below that the interval is their range, which holds less than
    95%, and adaptive sampling that stopped there would stop too early) or a figure that is not
    positive."""
    if sum(1 for a in sample if len(a)) < 6:
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

    @property
    def ci_confidence(self) -> float:
        """How sure [ci_low, ci_high] is, at least (`center_coverage`)."""
        return center_coverage(self.launches)

    @property
    def rerun_confidence(self) -> float:
        """How sure [rerun_low, rerun_high] is, at least (`rerun_coverage`)."""
        return rerun_coverage(self.launches)


def summarize(sample: Sample) -> Summary:
    x = flat(sample)
    lo, hi = center_ci(sample)
    rerun_lo, rerun_hi = rerun_range(sample)
    return Summary(sum(1 for a in sample if len(a)), len(x), center(sample), lo, hi, rerun_lo,
                   rerun_hi, float(x.min()), float(x.max()), variance_share(sample))


# --- the one verdict pipeline ---------------------------------------------------------------
#
# Two variants are compared on their launch medians, on a log scale, where a ratio is a shift:
# D holds log(b_j) - log(a_i) for every pair of launches. The interval of the ratio is Moses'
# (the order statistics of D that the exact Mann-Whitney distribution picks), and the test is
# the Mann-Whitney test read off the same D: the decision and the interval a reader sees cannot
# disagree.


@functools.lru_cache(maxsize=256)
def _u_cdf(n: int, m: int) -> np.ndarray:
    """P(U <= u), u = 0..n*m, of the Mann-Whitney statistic for samples of n and m without
    ties: the coefficients of the Gaussian binomial [n+m choose n] in q over C(n+m, n), exact in
    the tails (small counts) and within float rounding in the middle. Only the lower half is
    used (the distribution is symmetric)."""
    size = n * m + 1
    counts = np.zeros(size)
    counts[0] = 1.0
    for i in range(1, n + 1):  # times (1 - q^(m+i)) / (1 - q^i)
        if m + i < size:
            counts[m + i:] -= counts[:size - m - i].copy()
        padded = np.zeros(-(-size // i) * i)
        padded[:size] = counts
        counts = np.cumsum(padded.reshape(-1, i), axis=0).ravel()[:size]
    return np.cumsum(counts) / math.comb(n + m, n)


def _u_at_most(u: float, n: int, m: int) -> float:
    """P(U <= u) under the null, for any real u (floor), exact up to 250 x 250 launches and a
    normal approximation beyond."""
    k = math.floor(u + 1e-9)
    if k < 0:
        return 0.0
    if k >= n * m:
        return 1.0
    if n * m > 62500:
        mean, sd = n * m / 2, math.sqrt(n * m * (n + m + 1) / 12)
        return NORMAL.cdf((k + 0.5 - mean) / sd)
    half = n * m // 2
    cdf = _u_cdf(*sorted((n, m)))
    return float(cdf[k]) if k <= half else float(1 - cdf[n * m - k - 1])


def _log_shifts(ma: np.ndarray, mb: np.ndarray) -> np.ndarray:
    """log(b_j) - log(a_i) for every pair of launch medians, sorted."""
    la = np.log(np.maximum(ma, np.finfo(float).tiny))
    lb = np.log(np.maximum(mb, np.finfo(float).tiny))
    return np.sort((lb[None, :] - la[:, None]).ravel())


def _above(d: np.ndarray, margin: float) -> float:
    """How many pairs of D exceed `margin`, ties counted half: the Mann-Whitney U of b shifted
    down by `margin` against a."""
    return float(np.sum(d > margin) + 0.5 * np.sum(d == margin))


def _moses(d: np.ndarray, n: int, m: int, confidence: float) -> tuple[float, float]:
    """Moses' interval of the shift from sorted D: [D_(k), D_(nm-k+1)] for the largest k with
    P(U <= k-1) <= (1 - confidence) / 2; unbounded when no k reaches it (too few launches)."""
    tail = (1 - confidence) / 2
    if n * m > 62500:
        k = math.floor(n * m / 2 - NORMAL.inv_cdf(1 - tail) * math.sqrt(n * m * (n + m + 1) / 12))
    else:  # how many u below the middle have P(U <= u) <= tail
        k = int(np.searchsorted(_u_cdf(*sorted((n, m)))[:n * m // 2], tail, side="right"))
    if k <= 0:
        return -math.inf, math.inf
    return float(d[k - 1]), float(d[n * m - k])


@dataclass(frozen=True)
class _Read:
    """A pair's launch medians read once: b's figure over a's, D, and the launches a side."""

    ratio: float
    d: np.ndarray
    n: int
    m: int

    @classmethod
    def of(cls, ma: np.ndarray, mb: np.ndarray) -> _Read:
        """From each side's launch medians."""
        n, m = len(ma), len(mb)
        if n == 0 or m == 0:
            return cls(math.nan, np.array([]), n, m)
        return cls(median(mb) / median(ma), _log_shifts(ma, mb), n, m)

    def interval(self, confidence: float = CONFIDENCE) -> tuple[float, float]:
        """Moses' interval of the ratio; (0, inf) with too few launches for any."""
        if self.n == 0 or self.m == 0:
            return 0.0, math.inf
        lo, hi = _moses(self.d, self.n, self.m, confidence)
        return math.exp(lo), math.exp(hi)

    def p(self, threshold: float = 0.0) -> float:
        """The two-sided exact Mann-Whitney p that the ratio lies beyond +-threshold: the
        smaller of the one-sided tests of b slower by more than `threshold` (b's launch medians
        shifted down by log(1 + threshold) against a's) and of b faster by more than it,
        doubled; with threshold 0 the test of a difference. 1 under MIN_LAUNCHES a side."""
        if min(self.n, self.m) < MIN_LAUNCHES:
            return 1.0
        margin = math.log1p(threshold)
        slower = 1 - _u_at_most(_above(self.d, margin) - 1, self.n, self.m)
        faster = _u_at_most(_above(self.d, -margin), self.n, self.m)
        return min(1.0, 2 * min(slower, faster))


def ratio_ci(fast: Sample, slow: Sample,
             confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """center(slow) / center(fast), with Moses' interval of the ratio of launch medians
    (distribution-free, exact; (0, inf) with too few launches for any interval)."""
    read = _Read.of(launch_medians(fast), launch_medians(slow))
    return (read.ratio, *read.interval(confidence))


def benjamini_hochberg(pvalues: list[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (q-values), in the input order: rejecting those
    under ALPHA holds the expected share of false rejections among all rejections at ALPHA
    (independent or positively dependent tests, as comparisons sharing a cell's fastest are)."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i], reverse=True)
    adjusted = [0.0] * m
    running = 1.0
    for rank, i in zip(range(m, 0, -1), order, strict=True):
        running = min(running, m * pvalues[i] / rank)
        adjusted[i] = running
    return adjusted


def smallest_p(launches_a: int, launches_b: int) -> float:
    """The test's floor: the smallest two-sided p that launches_a and launches_b launches can
    give (every launch of one side beyond every launch of the other); 1 under MIN_LAUNCHES."""
    if min(launches_a, launches_b) < MIN_LAUNCHES:
        return 1.0
    return min(1.0, 2 / math.comb(launches_a + launches_b, launches_a))


@dataclass(frozen=True)
class Decidable:
    """What a family of `comparisons` at `launches` a side can decide, known before measuring:
    nothing below `least` launches a side (the test's floor lies above ALPHA); every comparison
    on its own from `alone` (the floor reaches ALPHA / comparisons, the first step of the
    correction); in between, a comparison only where enough others are decided too."""

    comparisons: int
    launches: int
    least: int
    alone: int

    @property
    def anything(self) -> bool:
        return self.launches >= self.least

    @property
    def on_its_own(self) -> bool:
        return self.launches >= self.alone


def decidable(comparisons: int, launches: int, alpha: float = ALPHA) -> Decidable:
    """What `comparisons` judged as one family at `launches` launches a side can decide."""
    least = next(n for n in range(MIN_LAUNCHES, 1000) if smallest_p(n, n) < alpha)
    alone = next(n for n in range(least, 1000)
                 if smallest_p(n, n) < alpha / max(1, comparisons))
    return Decidable(comparisons, launches, least, alone)


@dataclass(frozen=True)
class Pair:
    """One comparison to judge: b's figure over a's."""

    a: Sample
    b: Sample


@dataclass(frozen=True)
class Judged:
    """A pair judged: the ratio b/a, its interval, the test behind it and the decision."""

    ratio: float
    ci_low: float
    ci_high: float
    p_adjusted: float  # the launch test of a ratio beyond the threshold, corrected (CORRECTION)
    outcome: Judgement
    launches_a: int
    launches_b: int
    needed: int  # open: about how many launches per variant would decide it (0: unknown)
    why: str = ""  # open: one of WHY


# why a comparison is open: too few launches a side for any decision; the interval lies beyond
# the threshold but the corrected test does not back it; the interval reaches within the
# threshold; the ratio sits on the threshold (no number of launches would decide it)
WHY = ("launches", "test", "interval", "threshold")


def _why(lo: float, hi: float, launches: int, needed: int, threshold: float) -> str:
    if launches < MIN_LAUNCHES:
        return "launches"
    if lo > 1 + threshold or hi < 1 / (1 + threshold):
        return "test"
    return "interval" if needed else "threshold"


def difference_p(a: Sample, b: Sample) -> float:
    """Two-sided exact Mann-Whitney p of 'a and b differ' on launch medians, read off D;
    1 when a side has under MIN_LAUNCHES launches."""
    return _Read.of(launch_medians(a), launch_medians(b)).p()


def launches_to_decide(ma: np.ndarray, mb: np.ndarray, level: float,
                       threshold: float = THRESHOLD, power: float = 0.8) -> int:
    """About how many launches per variant would decide the pair with `power`, from each side's
    launch medians so far (normal approximation of the Mann-Whitney test on their logs,
    efficiency 3/pi), its test held to `level` (two-sided; the correction's step it would
    take); 0 when the ratio sits on the threshold (no number of launches would)."""
    la, lb = np.log(ma), np.log(mb)
    if min(len(la), len(lb)) < 2:
        return 0
    spread = math.sqrt((np.var(la, ddof=1) * (len(la) - 1) + np.var(lb, ddof=1) * (len(lb) - 1))
                       / (len(la) + len(lb) - 2)) or 1e-3
    shift, margin = abs(math.log(median(mb) / median(ma))), math.log1p(threshold)
    options = [] if shift - margin <= 0.1 * margin else \
        [_n_for(shift - margin, min(level, 1 - CONFIDENCE) / 2, spread, power)]
    if margin - shift > 0.1 * margin:  # the interval within the threshold
        options.append(_n_for(margin - shift, (1 - CONFIDENCE) / 2, spread, power))
    if not options:
        return 0
    return max(MIN_LAUNCHES, min(len(la), len(lb)) + 1, math.ceil(min(options)))


def _n_for(effect: float, tail: float, spread: float, power: float) -> float:
    """Launches per side for a one-sided test at `tail` to find `effect` (log) with `power`."""
    z = NORMAL.inv_cdf(1 - tail) + NORMAL.inv_cdf(power)
    return 2 * math.pi / 3 * (z * spread / effect) ** 2


class _Medians:
    """Each sample's launch medians, worked out once while the samples are alive (by id)."""

    def __init__(self) -> None:
        self.known: dict[int, tuple[Sample, np.ndarray]] = {}  # the sample kept: its id holds

    def __call__(self, sample: Sample) -> np.ndarray:
        if id(sample) not in self.known:
            self.known[id(sample)] = sample, launch_medians(sample)
        return self.known[id(sample)][1]


def judge(pairs: Sequence[Pair], alpha: float = ALPHA, threshold: float = THRESHOLD,
          medians: _Medians | None = None) -> list[Judged]:
    """Every pair judged by one rule. above / below: b is slower / faster by more than the
    threshold: the launch test of a ratio beyond the threshold (exact Mann-Whitney on launch
    medians, one margin each way), corrected across the pairs (one family, CORRECTION), backs
    it at `alpha`; the whole 95% interval of the ratio then lies beyond the threshold too (the
    interval and the test read the same pairs of launches). same: the whole 95% interval lies
    within +-threshold (two one-sided tests at 2.5% each, per pair). open: anything else, with
    about how many launches would decide it. No decision from under MIN_LAUNCHES launches a
    side."""
    of = medians or _Medians()
    sides = [(of(p.a), of(p.b)) for p in pairs]
    reads = [_Read.of(ma, mb) for ma, mb in sides]
    adjusted = benjamini_hochberg([r.p(threshold) for r in reads])
    # the correction's next step: the level an open comparison's test would have to reach
    level = alpha * (sum(1 for q in adjusted if q < alpha) + 1) / max(1, len(pairs))
    out = []
    for (ma, mb), q, read in zip(sides, adjusted, reads, strict=True):
        ratio, n, m = read.ratio, read.n, read.m
        lo, hi = read.interval()
        if q < alpha and (lo > 1 + threshold or hi < 1 / (1 + threshold)):
            outcome = Judgement.ABOVE if lo > 1 else Judgement.BELOW
        elif min(n, m) >= MIN_LAUNCHES and 1 / (1 + threshold) <= lo and hi <= 1 + threshold:
            outcome = Judgement.SAME
        else:
            outcome = Judgement.OPEN
        needed = launches_to_decide(ma, mb, level, threshold) \
            if outcome == Judgement.OPEN else 0
        why = _why(lo, hi, min(n, m), needed, threshold) if outcome == Judgement.OPEN else ""
        out.append(Judged(ratio, lo, hi, q, outcome, n, m, needed, why))
    return out


@dataclass(frozen=True)
class Verdict:
    fast: str
    slow: str
    ratio: float
    ci_low: float
    ci_high: float
    p_adjusted: float
    outcome: Speed  # of fast against slow: faster, indistinguishable or undecided
    launches_fast: int
    launches_slow: int
    needed: int = 0  # undecided: about how many launches per variant would decide it
    why: str = ""  # undecided: one of WHY


# judge's outcome of the slower variant over the fastest -> the fastest's speed (below: the
# fastest figure's test says the other way, so nothing is decided)
FASTEST_SPEED = {Judgement.ABOVE: Speed.FASTER, Judgement.SAME: Speed.INDISTINGUISHABLE,
                 Judgement.BELOW: Speed.UNDECIDED, Judgement.OPEN: Speed.UNDECIDED}


def verdicts(samples: list[dict[str, Sample]], alpha: float = ALPHA,
             threshold: float = THRESHOLD) -> list[list[Verdict]]:
    """For each cell's samples, the fastest (lowest figure) against every other, judged as one
    family across all cells."""
    pairs, names, of = [], [], _Medians()
    for cell in samples:
        ranked = sorted(cell, key=lambda k: median(of(cell[k])))
        names.append([(ranked[0], other) for other in ranked[1:]])
        pairs += [Pair(cell[ranked[0]], cell[other]) for other in ranked[1:]]
    judged = iter(judge(pairs, alpha, threshold, of))
    return [[Verdict(fast, slow, j.ratio, j.ci_low, j.ci_high, j.p_adjusted,
                     FASTEST_SPEED[j.outcome], j.launches_a, j.launches_b, j.needed,
                     j.why or ("test" if j.outcome == Judgement.BELOW else ""))
             for (fast, slow), j in zip(cell, judged, strict=False)] for cell in names]


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
