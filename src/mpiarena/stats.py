"""Statistics of observations: robust summaries, intervals, and honest pairwise verdicts.

Medians with nonparametric confidence intervals come first (Hoefler and Belli, SC 2015);
no normality is assumed and ratios are never averaged.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as st

CONFIDENCE = 0.95
THRESHOLD = 0.05  # a difference under 5% is never called, whatever the test says


@dataclass(frozen=True)
class Summary:
    n: int
    median: float
    mean: float
    std: float
    min: float
    max: float
    cv: float
    ci_low: float
    ci_high: float


def median_ci(values: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Distribution-free interval of the median from order statistics (binomial)."""
    x = np.sort(values)
    n = len(x)
    if n < 2:
        return float(x[0]), float(x[-1])
    lo = int(st.binom.ppf((1 - confidence) / 2, n, 0.5))
    hi = int(st.binom.isf((1 - confidence) / 2, n, 0.5))
    return float(x[max(lo - 1, 0)]), float(x[min(hi, n - 1)])


def min_observations(confidence: float = CONFIDENCE) -> int:
    """Fewest observations whose range [min, max] covers the median with `confidence`."""
    n = 2
    while 1 - 2 * 0.5**n < confidence:
        n += 1
    return n


def ci_halfwidth(values: np.ndarray, confidence: float = CONFIDENCE) -> float:
    """Half-width of the median's interval relative to the median (the wider side).

    Infinite while there are too few observations for any order-statistic interval to reach
    `confidence` (6 at 95%), or when the median is not positive.
    """
    x = np.asarray(values, dtype=float)
    if len(x) < min_observations(confidence):
        return float("inf")
    median = float(np.median(x))
    if median <= 0:
        return float("inf")
    lo, hi = median_ci(x, confidence)
    return max(median - lo, hi - median) / median


def precise_enough(values: np.ndarray, precision: float, confidence: float = CONFIDENCE) -> bool:
    """True when the median's interval is within `precision` (a fraction, 0.02) of the median."""
    return ci_halfwidth(values, confidence) <= precision


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


def omnibus(samples: dict[str, np.ndarray]) -> float:
    """Kruskal-Wallis p-value that all samples come from one distribution (1.0 if untestable)."""
    groups = [np.asarray(v, dtype=float) for v in samples.values() if len(v) > 0]
    if len(groups) < 2 or sum(len(g) for g in groups) <= len(groups):
        return 1.0
    if np.ptp(np.concatenate(groups)) == 0:
        return 1.0
    return float(st.kruskal(*groups).pvalue)


def summarize(values: np.ndarray) -> Summary:
    x = np.asarray(values, dtype=float)
    lo, hi = median_ci(x)
    mean = float(x.mean())
    std = float(x.std(ddof=1)) if len(x) > 1 else 0.0
    return Summary(len(x), float(np.median(x)), mean, std, float(x.min()), float(x.max()),
                   std / mean if mean > 0 else 0.0, lo, hi)


def ratio_ci(fast: np.ndarray, slow: np.ndarray, seed: int = 0, rounds: int = 2000,
             confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """median(slow) / median(fast), with a percentile bootstrap interval."""
    rng = np.random.default_rng(seed)
    a = np.asarray(fast, dtype=float)
    b = np.asarray(slow, dtype=float)
    ma = np.median(a[rng.integers(0, len(a), (rounds, len(a)))], axis=1)
    mb = np.median(b[rng.integers(0, len(b), (rounds, len(b)))], axis=1)
    boot = mb / np.where(ma > 0, ma, np.nan)
    tail = (1 - confidence) / 2 * 100
    lo, hi = np.nanpercentile(boot, [tail, 100 - tail])
    return float(np.median(b) / np.median(a)), float(lo), float(hi)


def p_value(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided Mann-Whitney U test; 1.0 when either side has too few observations."""
    if len(a) < 2 or len(b) < 2:
        return 1.0
    if np.ptp(np.concatenate([a, b])) == 0:
        return 1.0
    return float(st.mannwhitneyu(a, b, alternative="two-sided").pvalue)


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
    outcome: str  # faster | indistinguishable | undecided (a difference the data cannot back)
    n_fast: int
    n_slow: int
    omnibus_p: float | None = None  # Kruskal-Wallis p of the cell, when it has over two variants


def verdicts(samples: list[dict[str, np.ndarray]], alpha: float = 0.05,
             threshold: float = THRESHOLD) -> list[list[Verdict]]:
    """For each cell's samples, the fastest against every other, Holm-corrected across all cells.

    A difference is called only when it passes the test and is at least `threshold`;
    one that is large but not significant (too few observations) is left undecided.
    A cell of more than two variants is first tested as a whole (Kruskal-Wallis): when that
    is not significant at `alpha`, every pair in it is indistinguishable.
    """
    raw: list[list[tuple[str, str, float, float, float, float]]] = []
    gates = [omnibus(cell) if len(cell) > 2 else None for cell in samples]
    for cell in samples:
        ranked = sorted(cell, key=lambda k: float(np.median(cell[k])))
        rows = []
        for other in ranked[1:]:
            ratio, lo, hi = ratio_ci(cell[ranked[0]], cell[other])
            rows.append((ranked[0], other, ratio, lo, hi, p_value(cell[ranked[0]], cell[other])))
        raw.append(rows)
    flat = holm([r[5] for rows in raw for r in rows])
    out, i = [], 0
    for rows, gate in zip(raw, gates, strict=True):
        cell_out = []
        for fast, slow, ratio, lo, hi, _ in rows:
            if ratio < 1 + threshold or (gate is not None and gate >= alpha):
                outcome = "indistinguishable"
            elif flat[i] < alpha and lo > 1.0:
                outcome = "faster"
            else:
                outcome = "undecided"
            cell_out.append(Verdict(fast, slow, ratio, lo, hi, flat[i], outcome,
                                    len(samples[len(out)][fast]), len(samples[len(out)][slow]),
                                    gate))
            i += 1
        out.append(cell_out)
    return out

