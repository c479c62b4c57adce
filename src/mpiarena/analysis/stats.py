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
from dataclasses import dataclass, field, replace

import numpy as np

from ..base.status import LaunchShape
from ..store.results import Stratified
from .comparison import Compared, Comparison, Why
from .verdicts import SPEED_OF_FASTEST, Judgement, Speed

CONFIDENCE = 0.95
THRESHOLD = 0.05  # "faster" means faster by more than this; "indistinguishable", within it
# the expected share of false verdicts among the "faster" verdicts of one family (a report):
# the false discovery rate, held by Benjamini and Hochberg's step-up over the family's tests of
# "faster by more than THRESHOLD". A table of hundreds of comparisons keeps its power, and a
# cell decides the same whether the run around it is small or large (a family-wise correction
# asks p < ALPHA / m of its first comparison: 0.0002 over a quick run's 219).
ALPHA = 0.05
CORRECTION = "Benjamini-Hochberg"  # how a family's tests are corrected, as reports name it
NORMAL = statistics.NormalDist()  # the standard normal (not scipy.stats: half a second to import)
MIN_LAUNCHES = 4  # launches a side before any decision (the test's smallest p at 3: 0.1)

Sample = Sequence[np.ndarray]  # one array of observations per launch


def strata_of(sample: Sample) -> tuple[int, ...]:
    """Each launch's stratum, launches without observations left out: 0 for a whole launch, 1
    for a budget's partial one (a plain sample: all whole)."""
    shapes = sample.shapes if isinstance(sample, Stratified) else (LaunchShape.WHOLE,) * len(sample)
    return tuple(int(shape == LaunchShape.PARTIAL) for a, shape in zip(sample, shapes, strict=True)
                 if len(a))


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
    """Each launch's median, launches without observations left out."""
    if all(len(a) == 1 for a in sample):  # one observation a cell-launch: the quick suite's
        return np.array([float(a[0]) for a in sample])
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
# D holds log(b_j) - log(a_i) for every pair of launches (of one stratum: whole launches with
# whole launches, partial with partial). The ratio printed is the Hodges-Lehmann estimate, the
# shift where the Mann-Whitney statistic crosses its middle (exp of D's median with one
# stratum); its interval is Moses' (the order statistics of D that the exact Mann-Whitney
# distribution picks), and the test is the Mann-Whitney test read off the same D (van
# Elteren's stratified form, normal, where launches of two shapes are compared): the ratio, the
# decision and the interval a reader sees cannot disagree.


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


def _exp(shift: float) -> float:
    """exp of a log ratio, inf where it overflows (a launch median of 0 against one that is
    not: a figure such as a share hidden can be 0)."""
    return math.exp(shift) if shift < 709 else math.inf


def _logs(medians: np.ndarray) -> np.ndarray:
    """Log launch medians, a median of 0 held at the smallest positive float."""
    logs: np.ndarray = np.log(np.maximum(medians, np.finfo(float).tiny))
    return logs


def _log_shifts(ma: np.ndarray, mb: np.ndarray) -> np.ndarray:
    """log(b_j) - log(a_i) for every pair of launch medians, sorted."""
    return np.sort((_logs(mb)[None, :] - _logs(ma)[:, None]).ravel())


def _above(d: np.ndarray, margin: float) -> float:
    """How many pairs of sorted D exceed `margin`, ties counted half: the Mann-Whitney U of b
    shifted down by `margin` against a."""
    below, upto = np.searchsorted(d, margin, "left"), np.searchsorted(d, margin, "right")
    return float(len(d) - upto + 0.5 * (upto - below))


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


def _hodges_lehmann(d: np.ndarray) -> float:
    """The shift where U crosses its middle: the median of sorted D."""
    return median(d) if len(d) else math.nan


@dataclass(frozen=True)
class _Stratum:
    """One stratum's D (sorted) and its launches a side."""

    d: np.ndarray
    n: int
    m: int

    @property
    def weight(self) -> float:
        """van Elteren's weight: 1 / (launches of the stratum + 1)."""
        return 1 / (self.n + self.m + 1)


@dataclass(frozen=True)
class _Read:
    """A pair's launch medians read once: the Hodges-Lehmann ratio of b over a, D per stratum,
    and the launches a side that the comparison uses (those of strata both sides have)."""

    ratio: float
    strata: tuple[_Stratum, ...]
    n: int
    m: int
    known: dict[float, tuple[float, float]] = field(
        default_factory=dict, compare=False, repr=False)  # confidence -> its interval

    @classmethod
    def of(cls, ma: np.ndarray, mb: np.ndarray, sa: Sequence[int] = (),
           sb: Sequence[int] = ()) -> _Read:
        """From each side's launch medians and, where launches differ in shape, their strata
        (read once: a budget asks again for the pairs its last launches left as they were)."""
        key = (ma.tobytes(), mb.tobytes(), tuple(sa), tuple(sb))
        if (known := _READS.get(key)) is None:
            known = cls._read(ma, mb, sa, sb)
            size = sum(t.d.nbytes for t in known.strata)
            if _READS_HELD[0] + size > READS_KEPT_BYTES:
                _READS.clear()
                _READS_HELD[0] = 0
            _READS[key] = known
            _READS_HELD[0] += size
        return known

    @classmethod
    def _read(cls, ma: np.ndarray, mb: np.ndarray, sa: Sequence[int],
              sb: Sequence[int]) -> _Read:
        sa_, sb_ = np.asarray(sa or [0] * len(ma)), np.asarray(sb or [0] * len(mb))
        strata = tuple(_Stratum(_log_shifts(ma[sa_ == k], mb[sb_ == k]), int(np.sum(sa_ == k)),
                                int(np.sum(sb_ == k)))
                       for k in sorted(set(sa_.tolist()) & set(sb_.tolist())))
        n, m = sum(t.n for t in strata), sum(t.m for t in strata)
        if n == 0 or m == 0:
            return cls(math.nan, (), n, m)
        shift = _hodges_lehmann(strata[0].d) if len(strata) == 1 else \
            cls(math.nan, strata, n, m)._estimate()
        return cls(_exp(shift), strata, n, m)

    @property
    def d(self) -> np.ndarray:
        """D of the one stratum (the exact path's)."""
        return self.strata[0].d

    def _moments(self) -> tuple[float, float]:
        """van Elteren's statistic's mean and sd under no shift."""
        mean = sum(t.weight * t.n * t.m / 2 for t in self.strata)
        var = sum(t.weight**2 * t.n * t.m * (t.n + t.m + 1) / 12 for t in self.strata)
        return mean, math.sqrt(var)

    def _statistic(self, margin: float) -> float:
        return sum(t.weight * _above(t.d, margin) for t in self.strata)

    def _first(self, values: np.ndarray, target: float, strict: bool) -> int:
        """The first index of sorted `values` where the statistic (decreasing in the shift)
        lies at or below `target` (below it, `strict`); len(values) where none does."""
        lo, hi = 0, len(values)
        while lo < hi:
            mid = (lo + hi) // 2
            t = self._statistic(float(values[mid]))
            if t < target or (t == target and not strict):
                hi = mid
            else:
                lo = mid + 1
        return lo

    def _values(self) -> np.ndarray:
        return np.unique(np.concatenate([t.d for t in self.strata]))

    def _estimate(self) -> float:
        """The stratified Hodges-Lehmann shift: where van Elteren's statistic crosses its mean
        (the middle of the two values of D it falls between)."""
        values = self._values()
        i = self._first(values, self._moments()[0], strict=False)
        if i in (0, len(values)):
            return float(values[min(i, len(values) - 1)])
        return float(values[i - 1] + values[i]) / 2

    def _limits(self, z: float) -> tuple[float, float]:
        """The shifts van Elteren's test at z does not reject, outermost values of D kept."""
        values = self._values()
        mean, sd = self._moments()
        i = self._first(values, mean + z * sd, strict=False)
        j = self._first(values, mean - z * sd, strict=True)
        return float(values[max(i - 1, 0)]), float(values[min(j, len(values) - 1)])

    def interval(self, confidence: float = CONFIDENCE) -> tuple[float, float]:
        """Moses' interval of the ratio (van Elteren's, inverted, across strata); (0, inf)
        with too few launches for any."""
        if confidence not in self.known:
            self.known[confidence] = self._interval(confidence)
        return self.known[confidence]

    def _interval(self, confidence: float) -> tuple[float, float]:
        if self.n == 0 or self.m == 0:
            return 0.0, math.inf
        if len(self.strata) == 1:
            lo, hi = _moses(self.d, self.n, self.m, confidence)
        else:
            z = NORMAL.inv_cdf((1 + confidence) / 2)
            mean, sd = self._moments()
            if z * sd >= mean:
                return 0.0, math.inf
            lo, hi = self._limits(z)
        return _exp(lo), _exp(hi)

    def p(self, threshold: float = 0.0) -> float:
        """The two-sided Mann-Whitney p that the ratio lies beyond +-threshold: the smaller of
        the one-sided tests of b slower by more than `threshold` (b's launch medians shifted
        down by log(1 + threshold) against a's) and of b faster by more than it, doubled
        (exact with one stratum, van Elteren's normal form across strata); with threshold 0
        the test of a difference. 1 under MIN_LAUNCHES a side."""
        if min(self.n, self.m) < MIN_LAUNCHES:
            return 1.0
        margin = math.log1p(threshold)
        if len(self.strata) == 1:
            slower = 1 - _u_at_most(_above(self.d, margin) - 1, self.n, self.m)
            faster = _u_at_most(_above(self.d, -margin), self.n, self.m)
        else:
            mean, sd = self._moments()
            slower = 1 - NORMAL.cdf((self._statistic(margin) - mean) / sd)
            faster = NORMAL.cdf((self._statistic(-margin) - mean) / sd)
        return min(1.0, 2 * min(slower, faster))


@functools.lru_cache(maxsize=128)
def _w_cdf(n: int) -> np.ndarray:
    """P(W <= w), w = 0..n(n+1)/2, of Wilcoxon's signed-rank statistic for n pairs without
    ties, exact: the coefficients of prod (1 + q^i) over 2^n."""
    counts = np.zeros(n * (n + 1) // 2 + 1)
    counts[0] = 1.0
    for i in range(1, n + 1):
        counts[i:] = counts[i:] + counts[:-i].copy()
    return np.cumsum(counts) / 2.0**n


def _w_at_most(w: float, n: int) -> float:
    """P(W <= w) under the null, exact up to 300 pairs and a normal approximation beyond."""
    total = n * (n + 1) // 2
    k = math.floor(w + 1e-9)
    if k < 0:
        return 0.0
    if k >= total:
        return 1.0
    if n > 300:
        return NORMAL.cdf((k + 0.5 - total / 2) / math.sqrt(n * (n + 1) * (2 * n + 1) / 24))
    return float(_w_cdf(n)[k])


@dataclass(frozen=True)
class _PairedRead:
    """A pair measured in the same launches, read once: per shared launch the log ratio of b
    over a, so that the launch's own level cancels; the Walsh averages of those (sorted) carry
    Wilcoxon's signed-rank test, Tukey's interval and the Hodges-Lehmann estimate."""

    ratio: float
    walsh: np.ndarray
    n: int

    @property
    def m(self) -> int:
        return self.n

    @classmethod
    def of(cls, ma: np.ndarray, mb: np.ndarray) -> _PairedRead:
        """From each side's launch medians, launch by launch (the same launches, in order)."""
        r = _logs(mb) - _logs(ma)
        i, j = np.triu_indices(len(r))
        walsh = np.sort((r[i] + r[j]) / 2)
        return cls(_exp(median(walsh)) if len(walsh) else math.nan, walsh, len(r))

    def interval(self, confidence: float = CONFIDENCE) -> tuple[float, float]:
        """Tukey's interval of the ratio from the Walsh averages; (0, inf) with too few
        launches for any."""
        if self.n == 0:
            return 0.0, math.inf
        tail = (1 - confidence) / 2
        total = len(self.walsh)
        if self.n > 300:
            k = math.floor(total / 2 - NORMAL.inv_cdf(1 - tail) *
                           math.sqrt(self.n * (self.n + 1) * (2 * self.n + 1) / 24))
        else:
            k = int(np.searchsorted(_w_cdf(self.n)[:total // 2], tail, side="right"))
        if k <= 0:
            return 0.0, math.inf
        return _exp(float(self.walsh[k - 1])), _exp(float(self.walsh[total - k]))

    def p(self, threshold: float = 0.0) -> float:
        """The two-sided signed-rank p that the ratio lies beyond +-threshold (the smaller of
        the two one-sided tests, doubled, as `_Read.p`); 1 under MIN_LAUNCHES."""
        if self.n < MIN_LAUNCHES:
            return 1.0
        margin = math.log1p(threshold)
        slower = 1 - _w_at_most(_above(self.walsh, margin) - 1, self.n)
        faster = _w_at_most(_above(self.walsh, -margin), self.n)
        return min(1.0, 2 * min(slower, faster))


# launches both sides share from which a pair is judged launch by launch: the signed-rank test's
# smallest p, 2 / 2^n, is 0.002 at 10 (the unpaired test's at 6 a side already 0.002); fewer
# shared launches are judged as two sets
PAIRED_FROM = 10
# and only where they share nearly all their launches: a budget's partial launches may measure
# one cell of a pair and not the other, and pairing would leave those out (the mpi3 suite's
# counterparts, 2026-11-29: paired over their shared launches alone, 141 of 208 decided,
# against 150 as two sets of launches)
PAIRED_SHARE = 0.9
READS_KEPT_BYTES = 256 * 2**20  # what the pairs read and kept may hold, at most
_READS: dict[tuple[bytes, bytes, tuple[int, ...], tuple[int, ...]], _Read] = {}
_READS_HELD = [0]  # bytes of D the kept reads hold


def read_pair(a: Sample, b: Sample) -> _Read:
    """Two samples read for comparison: launch medians and strata."""
    return _Read.of(launch_medians(a), launch_medians(b), strata_of(a), strata_of(b))


def ratio_ci(fast: Sample, slow: Sample,
             confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """The Hodges-Lehmann ratio of slow's launch medians over fast's, with Moses' interval
    (distribution-free, exact with one stratum; (0, inf) with too few launches for any)."""
    read = read_pair(fast, slow)
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
    """One comparison to judge: b's figure over a's; `launches`, where both were measured in
    the same jobs, each side's launch ids (in the order of its launches), so that the test is
    paired launch by launch over the launches both have."""

    a: Sample
    b: Sample
    launches: tuple[Sequence[int], Sequence[int]] | None = None


def _why(lo: float, hi: float, launches: int, needed: int, threshold: float) -> Why:
    if launches < MIN_LAUNCHES:
        return Why.LAUNCHES
    if lo > 1 + threshold or hi < 1 / (1 + threshold):
        return Why.TEST
    return Why.INTERVAL if needed else Why.THRESHOLD


def difference_p(a: Sample, b: Sample) -> float:
    """Two-sided exact Mann-Whitney p of 'a and b differ' on launch medians, read off D;
    1 when a side has under MIN_LAUNCHES launches."""
    return read_pair(a, b).p()


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

    def read(self, a: Sample, b: Sample) -> _Read:
        return _Read.of(self(a), self(b), strata_of(a), strata_of(b))

    def judged(self, pair: Pair) -> _Read | _PairedRead:
        """The pair read as it is measured: launch by launch where both sides share launches,
        else as two sets of launches."""
        if pair.launches is None:
            return self.read(pair.a, pair.b)
        ids_a, ids_b = (list(ids) for ids in pair.launches)
        both = sorted(set(ids_a) & set(ids_b))
        if len(both) < max(PAIRED_FROM, PAIRED_SHARE * max(len(ids_a), len(ids_b))):
            return self.read(pair.a, pair.b)
        ma, mb = self(pair.a), self(pair.b)
        return _PairedRead.of(np.array([ma[ids_a.index(i)] for i in both]),
                              np.array([mb[ids_b.index(i)] for i in both]))


def _outcome(read: _Read | _PairedRead, q: float, alpha: float, threshold: float,
             confidence: float) -> Judgement:
    """above / below where the corrected test backs a ratio beyond the threshold (q < alpha)
    and the whole `confidence` interval lies beyond it; same where that interval lies within
    +-threshold; open otherwise (and under MIN_LAUNCHES a side)."""
    lo, hi = read.interval(confidence)
    if q < alpha and (lo > 1 + threshold or hi < 1 / (1 + threshold)):
        return Judgement.ABOVE if lo > 1 else Judgement.BELOW
    return Judgement.SAME if within(read, threshold, same_confidence(alpha, confidence)) else \
        Judgement.OPEN


def judge(pairs: Sequence[Pair], alpha: float = ALPHA, threshold: float = THRESHOLD,
          medians: _Medians | None = None, confidence: float = CONFIDENCE) -> list[Comparison]:
    """Every pair judged by one rule. above / below: b is slower / faster by more than the
    threshold: the launch test of a ratio beyond the threshold (Mann-Whitney on launch
    medians, one margin each way), corrected across the pairs (one family, CORRECTION), backs
    it at `alpha`; the whole 95% interval of the ratio then lies beyond the threshold too (the
    interval and the test read the same pairs of launches). same: the whole 95% interval lies
    within +-threshold (two one-sided tests at 2.5% each, per pair). open: anything else, with
    about how many launches would decide it. No decision from under MIN_LAUNCHES launches a
    side. The ratio is the Hodges-Lehmann estimate the test and the interval make. At a look
    (`look`) the level is LOOK_ALPHA and the interval's confidence 1 - LOOK_ALPHA."""
    of = medians or _Medians()
    reads = [of.judged(p) for p in pairs]
    adjusted = benjamini_hochberg([r.p(threshold) for r in reads])
    # the correction's next step: the level an open comparison's test would have to reach
    level = alpha * (sum(1 for q in adjusted if q < alpha) + 1) / max(1, len(pairs))
    out = []
    for pair, q, read in zip(pairs, adjusted, reads, strict=True):
        lo, hi = read.interval(confidence)
        outcome = _outcome(read, q, alpha, threshold, confidence)
        needed = launches_to_decide(of(pair.a), of(pair.b), level, threshold) \
            if outcome == Judgement.OPEN else 0
        why = _why(lo, hi, min(read.n, read.m), needed, threshold) \
            if outcome == Judgement.OPEN else None
        out.append(Comparison(read.ratio, lo, hi, q, outcome, read.n, read.m, needed, why,
                              isinstance(read, _PairedRead),
                              len(read.strata) if isinstance(read, _Read) else 1))
    return out


# --- looks at the data before the end: paid for ---------------------------------------------
#
# A budget looks at its comparisons as launches come in and stops buying launches for those
# that look decided. Stopping at the nominal level would spend the error rate again at every
# look (about 15% false "faster" at the line over ~90 looks). So a comparison closes early only
# at a look (its launches a side reaching the run's base launches times a power of two) and
# only where a Haybittle-Peto boundary is crossed: the test at LOOK_ALPHA (two-sided) and the
# whole 1 - LOOK_ALPHA interval beyond the threshold, or, for "within the threshold", the
# interval of its own budget (`same_confidence`) within it. Every other comparison keeps its
# launches until the budget ends, and the report's verdict is the fixed-sample rule on all
# launches. What the looks can spend
# (LOOK_ALPHA / 2 a look and side) is paid once from the report's level (`final_alpha`).
LOOK_ALPHA = 0.001
MAX_LOOKS = 6  # looks a comparison can have: base launches x 1, 2, 4, ... 32


# "within the threshold" has its own budget where a budget looked: two one-sided tests of 2.5%
# each, split Pocock's way over the analyses (the looks at the base launches x 1, 2, ... 16 and
# the report's, at most x 32): one-sided SAME_LOOK_TAIL at each, so that a ratio on the line is
# called the same at most 2.5% of the time over all of them (Brownian motion at information
# 1, 2, 4, ... 32, 10^6 paths: 2.546 sds, 0.0054). What "faster" spends is its own
# (LOOK_ALPHA, final_alpha).
SAME_LOOK_TAIL = 0.0054


def same_confidence(alpha: float, confidence: float) -> float:
    """The confidence of the interval "within the threshold" needs: 1 - 2 SAME_LOOK_TAIL in
    the report of a run whose budget looked (alpha final_alpha(True), as at its looks:
    `crosses`); `confidence` otherwise."""
    return 1 - 2 * SAME_LOOK_TAIL if math.isclose(alpha, final_alpha(True)) else confidence


def within(read: _Read | _PairedRead, threshold: float, confidence: float) -> bool:
    """The whole `confidence` interval of the ratio lies within +-threshold, from
    MIN_LAUNCHES launches a side."""
    lo, hi = read.interval(confidence)
    return min(read.n, read.m) >= MIN_LAUNCHES and 1 / (1 + threshold) <= lo and \
        hi <= 1 + threshold


def look(pairs: Sequence[Pair], threshold: float = THRESHOLD) -> list[Comparison]:
    """The pairs judged at an interim look: `judge` at the boundary's level (LOOK_ALPHA, its
    interval at 1 - LOOK_ALPHA), so that stopping on what it decides is paid for."""
    return judge(pairs, LOOK_ALPHA, threshold, confidence=1 - LOOK_ALPHA)


def looks(base: int, launches: int) -> list[int]:
    """The launch counts a side at which a comparison is looked at, up to `launches`."""
    return [base * 2**k for k in range(MAX_LOOKS) if base * 2**k <= launches]


def final_alpha(sequential: bool, alpha: float = ALPHA) -> float:
    """The report's level: `alpha`, less what the looks of a budget may spend."""
    return alpha - MAX_LOOKS * LOOK_ALPHA if sequential else alpha


def first(sample: Sample, launches: int) -> Sample:
    """The sample's first `launches` launches with observations, strata kept."""
    kept = [a for a in sample if len(a)]
    shapes = [LaunchShape.PARTIAL if k else LaunchShape.WHOLE for k in strata_of(sample)]
    return Stratified(kept[:launches], shapes[:launches])


def crosses(a: Sample, b: Sample, launches: int, threshold: float = THRESHOLD) -> bool:
    """Whether the comparison of a and b, at the look of `launches` a side (each truncated to
    its first that many), crosses a boundary: faster at LOOK_ALPHA either way, or within the
    threshold at its own level (`same_confidence`)."""
    read = read_pair(first(a, launches), first(b, launches))
    if (p := read.p(threshold)) < LOOK_ALPHA and \
            _outcome(read, p, LOOK_ALPHA, threshold, 1 - LOOK_ALPHA) != Judgement.OPEN:
        return True  # faster (within the threshold at 1 - LOOK_ALPHA is within at less too)
    # the ratio lies inside every interval of it: outside the threshold, none is within
    return 1 / (1 + threshold) < read.ratio < 1 + threshold and \
        within(read, threshold, 1 - 2 * SAME_LOOK_TAIL)


@dataclass(frozen=True)
class Verdict(Compared):
    """A cell's fastest variant against another: the slower's figure over the fastest's."""

    fast: str
    slow: str
    comparison: Comparison

    @property
    def outcome(self) -> Speed:
        """Of fast against slow: faster, indistinguishable or undecided."""
        return SPEED_OF_FASTEST[self.comparison.outcome]

    @property
    def launches_fast(self) -> int:
        return self.comparison.launches_a

    @property
    def launches_slow(self) -> int:
        return self.comparison.launches_b

    @property
    def why(self) -> Why | None:
        """Undecided: the comparison's why, or the test where it says the other way."""
        j = self.comparison
        return j.why or (Why.TEST if j.outcome == Judgement.BELOW else None)


def fastest(cell: dict[str, Sample], medians: _Medians | None = None) -> str:
    """The cell's fastest variant by the estimate its verdicts print: the one whose
    Hodges-Lehmann ratio against every other is at least 1, or the one with the most such
    wins; ties go to the lowest median of launch medians. It picks which of the family's pairs
    a table shows first, never which pairs are tested (`judge_cells`)."""
    of = medians or _Medians()
    ranked = sorted(cell, key=lambda k: median(of(cell[k])))
    if all(of.read(cell[ranked[0]], cell[v]).ratio >= 1 for v in ranked[1:]):
        return ranked[0]
    wins = {v: sum(of.read(cell[v], cell[w]).ratio >= 1 for w in ranked if w != v)
            for v in ranked}
    return max(ranked, key=lambda v: wins[v])


FLIPPED = {Judgement.ABOVE: Judgement.BELOW, Judgement.BELOW: Judgement.ABOVE,
           Judgement.SAME: Judgement.SAME, Judgement.OPEN: Judgement.OPEN}


def flipped(c: Comparison) -> Comparison:
    """The same comparison read the other way round: a's figure over b's."""
    def inverse(x: float) -> float:
        return 1 / x if x else math.inf
    return replace(c, ratio=inverse(c.ratio), ci_low=inverse(c.ci_high),
                   ci_high=inverse(c.ci_low), outcome=FLIPPED[c.outcome],
                   launches_a=c.launches_b, launches_b=c.launches_a)


@dataclass(frozen=True)
class JudgedCell:
    """One cell's variants judged: every pair (`pairs`, each with the lower Hodges-Lehmann
    estimate as `fast`), and the cell's fastest against each other variant (`against_fastest`,
    read from the same pairs)."""

    pairs: list[Verdict]
    against_fastest: list[Verdict]

    def leaders(self) -> list[str]:
        """The variants the verdicts call fastest: each faster than, or within the threshold
        of, every other variant of the cell (several only where they are within it of each
        other); none while a comparison that could make one is open."""
        names = list(dict.fromkeys(n for v in self.pairs for n in (v.fast, v.slow)))
        return [n for n in names
                if all((v.fast == n and v.outcome == Speed.FASTER)
                       or v.outcome == Speed.INDISTINGUISHABLE
                       for v in self.pairs if n in (v.fast, v.slow))]


def widened(mid: float, low: float, high: float, allowance: float) -> tuple[float, float]:
    """An interval around `mid` widened by `allowance` (log): each side's log distance from
    `mid` (held within the interval) and the allowance added in quadrature."""
    if not 0 < low <= high < math.inf or allowance <= 0:
        return low, high
    at = min(max(math.log(mid), math.log(low)), math.log(high))
    return (math.exp(at - math.hypot(at - math.log(low), allowance)),
            math.exp(at + math.hypot(math.log(high) - at, allowance)))


def allowed(c: Comparison, allowance: float, threshold: float = THRESHOLD) -> Comparison:
    """The comparison with its interval widened by a run-to-run `allowance` (log): what a rerun
    on this machine shows. A decision the widened interval no longer backs is open (Why.SPREAD),
    and says how many launches would decide it where any would: the launches' part of the
    interval must shrink to what the allowance leaves of the distance to the threshold."""
    if allowance <= 0 or c.launches < MIN_LAUNCHES:
        return c
    lo, hi = widened(c.ratio, c.ci_low, c.ci_high, allowance)
    out = replace(c, ci_low=lo, ci_high=hi, allowance=allowance)
    margin = math.log1p(threshold)
    beyond = lo > 1 + threshold or hi < 1 / (1 + threshold)
    within = 1 / (1 + threshold) <= lo and hi <= 1 + threshold
    if (c.outcome in (Judgement.ABOVE, Judgement.BELOW) and beyond) or \
            (c.outcome == Judgement.SAME and within):
        return out
    if c.outcome == Judgement.OPEN and c.why != Why.INTERVAL:
        return out
    shift = abs(math.log(c.ratio))
    room = max(shift - margin, margin - shift)  # to the threshold, the nearer decision's side
    half = math.log(c.ci_high / c.ci_low) / 2
    needed = 0 if room <= allowance or half <= 0 else \
        max(c.launches + 1, math.ceil(c.launches * (half / math.sqrt(room**2 - allowance**2))**2))
    why = Why.INTERVAL if c.outcome == Judgement.OPEN and needed else Why.SPREAD
    return replace(out, outcome=Judgement.OPEN, why=why, needed=needed)


TWO_STATES = 1.5  # launch levels this far apart are two states of a launch, not its noise
STATE_SHARE = 0.2  # the lesser state's share of launches from which a run's median may land on
# either state, and the next run's on the other


def states(medians: np.ndarray) -> tuple[float, float] | None:
    """The medians of a variant's two launch states, where its launch medians fall in two
    levels at least TWO_STATES apart (split at the widest gap of their sorted logs), the lesser
    holding at least STATE_SHARE of them; None where they do not."""
    x = np.sort(np.log(medians[medians > 0]))
    if len(x) < 2 * MIN_LAUNCHES:
        return None
    cut = int(np.argmax(np.diff(x))) + 1
    low, high = float(np.median(x[:cut])), float(np.median(x[cut:]))
    if min(cut, len(x) - cut) < STATE_SHARE * len(x) or high - low < math.log(TWO_STATES):
        return None
    return math.exp(low), math.exp(high)


def by_state(c: Comparison, ma: np.ndarray, mb: np.ndarray,
             threshold: float = THRESHOLD) -> Comparison:
    """A "faster" that must hold in each launch state a side shows (`states`): where a side's
    launches fall in two states, the other side's median against each of them (state against
    state where both have two) must lie beyond the threshold the verdict's way; else the
    comparison is open (Why.STATE): which state a run's median lands on moves from run to run
    (issue 60: Open MPI against LAM/MPI at allreduce 1 MiB, 1.3x one way in three quick runs,
    1.34x the other in the fourth)."""
    if c.outcome not in (Judgement.ABOVE, Judgement.BELOW):
        return c
    sa, sb = states(ma), states(mb)
    if sa is None and sb is None:
        return c
    a_levels = sa or (median(ma),) * 2
    b_levels = sb or (median(mb),) * 2
    pairs = list(zip(a_levels, b_levels, strict=True)) if sa and sb else \
        [(a, b) for a in a_levels for b in b_levels]
    ratios = [b / a for a, b in pairs]
    holds = all(r > 1 + threshold for r in ratios) if c.outcome == Judgement.ABOVE else \
        all(r < 1 / (1 + threshold) for r in ratios)
    return c if holds else replace(c, outcome=Judgement.OPEN, why=Why.STATE, needed=0)


@dataclass(frozen=True)
class RunAllowance:
    """What a cell's verdicts allow for between runs: the log widening of a ratio's interval
    (`allowed`), and the variants whose level in this run moved from the machine's earlier
    runs (a verdict on them is open: Why.MOVED)."""

    ratio: float = 0.0
    moved: frozenset[str] = frozenset()


def _moved(c: Comparison, a: str, b: str, allowance: RunAllowance) -> Comparison:
    if c.outcome == Judgement.OPEN or not {a, b} & allowance.moved:
        return c
    return replace(c, outcome=Judgement.OPEN, why=Why.MOVED, needed=0)


def judge_cells(samples: list[dict[str, Sample]], alpha: float = ALPHA,
                threshold: float = THRESHOLD, allowances: Sequence[RunAllowance] | None = None
                ) -> list[JudgedCell]:
    """Every pair of each cell's variants, in the cell's order (the family is fixed before the
    data: nothing is picked from the launches before it is tested), judged as one family
    across all cells, each cell's interval widened by its run-to-run allowance (`allowed`,
    none where not given); then each cell's fastest (`fastest`) against each other variant,
    read from those pairs."""
    pairs, names, of = [], [], _Medians()
    for cell in samples:
        keys = list(cell)
        names.append(list(itertools.combinations(keys, 2)))
        pairs += [Pair(cell[a], cell[b]) for a, b in names[-1]]
    judged = iter(judge(pairs, alpha, threshold, of))
    out = []
    for i, (cell, named) in enumerate(zip(samples, names, strict=True)):
        allowance = allowances[i] if allowances is not None else RunAllowance()
        held = [_moved(by_state(allowed(next(judged), allowance.ratio, threshold), of(cell[a]),
                                of(cell[b]), threshold), a, b, allowance) for a, b in named]
        oriented = [Verdict(a, b, j) if j.ratio >= 1 else Verdict(b, a, flipped(j))
                    for (a, b), j in zip(named, held, strict=True)]
        best = fastest(cell, of)
        against = []
        for other in (v for v in cell if v != best):
            (v,) = [v for v in oriented if {v.fast, v.slow} == {best, other}]
            against.append(v if v.fast == best else
                           Verdict(best, other, flipped(v.comparison)))
        out.append(JudgedCell(oriented, against))
    return out


def verdicts(samples: list[dict[str, Sample]], alpha: float = ALPHA,
             threshold: float = THRESHOLD) -> list[list[Verdict]]:
    """For each cell's samples, the fastest (`fastest`) against every other, from the family
    of every pair of every cell (`judge_cells`)."""
    return [c.against_fastest for c in judge_cells(samples, alpha, threshold)]


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
