"""What a run's numbers mean: warnings about doubtful cells, protocol switches in latency
curves, derived figures (latency, peak bandwidth, n1/2), scaling, and run-to-run comparisons.

Everything here reads a `RunData` and never the store. Figures are medians of the reduced
observations of a cell (see `results.Group`), as in the terminal summary, except protocol
switches, which are looked for in each cell's fastest observation (see `protocol_switches`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from .benchmarks import BENCHMARKS
from .guidelines import GUIDELINES, Guideline
from .results import Group, Key, RunData
from .stats import (
    ALPHA,
    THRESHOLD,
    center,
    decide,
    holm,
    launch_medians,
    outliers,
    p_value,
    ratio_ci,
    variance_share,
)
from .status import CellStatus

__all__ = [
    "CellWarning", "Change", "Derived", "GuidelineCheck", "Switch", "Warning", "cell_warnings",
    "compare_runs", "curve", "curve_noise", "derived", "guideline_checks", "guidelines_unchecked",
    "outliers", "protocol_switches", "relative", "scaling", "switches", "timed_differently",
    "warning_lines",
]

HIGH_CV = 0.10  # the bulk of a cell's observations varying more than this is noise
WARMUP_SHARE = 0.2  # slow outliers all within the first fifth of a cell are a warm-up effect
MODEL_NOISE = 0.05  # relative misfit a straight segment of a real curve is allowed anyway
MIN_JUMP = 0.10  # a fixed-cost jump smaller than this is not reported as a switch
MIN_SLOPE_CHANGE = 0.5  # a cost per byte must change by at least this factor - 1 (1.5x)
MAX_SWITCHES = 4
_HUBER = 2.0  # residuals beyond this many noise units count linearly in a first fit,
_TRIM = 3.0  # and beyond this many not at all in the final one (slow cells, spikes)


def _ok(group: Group | None) -> bool:
    return group is not None and group.status == CellStatus.OK and bool(group.values)


def _median(group: Group) -> float:
    return center(group.nested)


# --- warnings -------------------------------------------------------------------------------


@dataclass(frozen=True)
class CellWarning:
    """Something doubtful about one variant's observations in one cell, with its likely cause."""

    key: Key
    variant: str
    text: str
    cause: Literal["warm-up", "oversubscribed", "noise", "interference", "launches"]
    outliers: tuple[int, ...] = ()  # indices into the launch's observations


Warning = CellWarning  # the name the issue uses; shadows the builtin only inside this module


def _robust_cv(x: np.ndarray) -> float:
    median = float(np.median(x))
    mad = float(np.median(np.abs(x - median)))
    return 1.4826 * mad / median if median > 0 else 0.0


def cell_warnings(data: RunData, k: float = 3.0, min_rel: float = 0.25,
                  high_cv: float = HIGH_CV) -> list[CellWarning]:
    """Hyperfine-style warnings, each with its likely cause: launches that disagree (most of
    the variance between launches, their medians `LAUNCH_SPREAD` apart or more), statistical
    outliers inside a launch (beyond Tukey's fences at `k` IQR, "far out" by default, and at
    least `min_rel` away from the launch's median), or a launch whose observations vary by
    more than `high_cv` (robust CV). One warning per cell and variant, the first that applies."""
    cores = int(data.machine.get("cores", 0) or 0)
    out: list[CellWarning] = []
    for key in sorted(k for k in data.cells if BENCHMARKS[k[0]].unit == "s"):
        for variant, group in sorted(data.cells[key].items()):
            if not _ok(group):
                continue
            warning = _launch_warning(key, variant, group)
            for x in group.nested if warning is None else []:
                warning = warning or _cell_warning(key, variant, x, cores, k, min_rel, high_cv)
            if warning is not None:
                out.append(warning)
    return out


LAUNCH_SPREAD = 1.25  # launch medians this far apart, with most variance between launches


def _launch_warning(key: Key, variant: str, group: Group) -> CellWarning | None:
    sample = group.nested
    share = variance_share(sample)
    medians = launch_medians(sample)
    if share is None or share < 0.5 or medians.min() <= 0 \
            or medians.max() / medians.min() < LAUNCH_SPREAD:
        return None
    figures = ", ".join(f"{v * 1e6:.3g}" for v in medians)
    return CellWarning(key, variant, f"its launches disagree: {share:.0%} of the variance lies "
                       f"between launches, launch medians {figures} us; the level is set when a "
                       "job starts, so only more launches narrow it", "launches")


def _cell_warning(key: Key, variant: str, x: np.ndarray, cores: int, k: float, min_rel: float,
                  high_cv: float) -> CellWarning | None:
    idx = outliers(x, k=k, min_rel=min_rel)
    bulk = np.delete(x, idx)
    cv = _robust_cv(bulk) if len(bulk) > 2 else 0.0
    median = float(np.median(x))
    if (len(idx) == 0 and cv <= high_cv) or median <= 0:
        return None
    slow = idx[x[idx] > median]
    cause: Literal["warm-up", "oversubscribed", "noise", "interference"]
    if len(slow) == len(idx) > 0 and slow.min() == 0 \
            and slow.max() < max(2, WARMUP_SHARE * len(x)):
        cause = "warm-up"
        why = ("the first is the slow one" if len(slow) == 1 else
               f"the first {len(slow)} are the slow ones") + ": warm-up too short"
    elif cores > 0 and key[2] > cores:
        cause = "oversubscribed"
        why = (f"oversubscribed ranks ({key[2]} on {cores} cores): busy-polling libraries "
               "measure the scheduler")
    elif cv > high_cv:
        cause = "noise"
        why = "noisy machine or interference"
    else:
        cause = "interference"
        why = "something else ran now and then; re-run on a quiet machine"
    if len(idx):
        ratios = x[idx] / median
        far = float(ratios[np.argmax(np.abs(np.log(ratios)))])
        lead = (f"{len(idx)} of {len(x)} observations are statistical outliers (the farthest "
                f"{far:.2g}x the median)")
        if cv > high_cv:
            lead += f", the rest vary by {cv:.0%}"
    else:
        lead = f"the observations vary by {cv:.0%} (robust CV)"
    return CellWarning(key, variant, f"{lead}: {why}", cause, tuple(int(i) for i in idx))


def warning_lines(warnings: Sequence[CellWarning],
                  per_variant: int = 3) -> list[tuple[str, int, str]]:
    """(cause, cells, line): one line per variant and cause ("12 cells: ..."), naming at most
    `per_variant` cells."""
    by: dict[tuple[str, str], list[CellWarning]] = {}
    for w in warnings:
        by.setdefault((w.variant, w.cause), []).append(w)
    lines = []
    for (variant, cause), ws in sorted(by.items()):
        cells = ", ".join(f"{k[0]} {BENCHMARKS[k[0]].size_text(k[1])} ({k[2]} ranks)"
                          for k in (w.key for w in ws[:per_variant]))
        more = f" and {len(ws) - per_variant} more" if len(ws) > per_variant else ""
        first = ws[0].text
        lines.append((cause, len(ws), f"{variant}: {len(ws)} cell{'s' if len(ws) > 1 else ''} "
                             f"({cells}{more}); e.g. {first}"))
    return lines


# --- protocol switches ----------------------------------------------------------------------


@dataclass(frozen=True)
class Switch:
    """A change of protocol: from `size` on, the fixed cost (s) or cost per byte (s/B) changes."""

    size: int  # first size after the jump
    kind: Literal["fixed cost", "cost per byte"]
    before: float  # fitted a (seconds) or b (seconds per byte) below the switch
    after: float  # the same above it
    last_before: int = 0  # the size measured just before
    t_before: float = 0.0  # the left segment's fitted time at `size`
    t_after: float = 0.0  # the right segment's fitted time at `size`

    @property
    def jump(self) -> float:
        """Fitted time just after the switch over just before it."""
        return self.t_after / self.t_before if self.t_before > 0 else math.inf


@dataclass(frozen=True)
class _Fit:
    a: float
    b: float
    cost: float


def _fit(s: np.ndarray, t: np.ndarray, sigma: np.ndarray) -> _Fit:
    """t = a + b*s with b >= 0, fitted to log t (Gauss-Newton, iteratively reweighted: Huber
    first, then trimmed, so a cell far off the line costs at most _TRIM**2)."""
    lt, w = np.log(t), 1.0 / sigma**2
    a, b = _linear(s, t, w / t**2)  # start: least relative squares
    if np.any(a + b * s <= 0):
        a, b = float(np.average(t, weights=w)), 0.0
    h = np.ones_like(t)
    for it in range(16):
        f = a + b * s
        e = lt - np.log(f)
        r = np.abs(e) * np.sqrt(w)
        if it < 5:
            h_new = np.minimum(1.0, _HUBER / np.maximum(r, 1e-300))
        else:
            h_new = (r <= _TRIM).astype(float)
            if h_new.sum() < 2 or (it > 5 and np.array_equal(h_new, h)):
                break
        h = h_new
        da, db = _linear(s, e * f, h * w / f**2, start=(a, b))
        lam = 1.0
        while np.any(a + lam * da + (b + lam * db) * s <= 0) and lam > 1e-3:
            lam /= 2
        if np.any(a + lam * da + (b + lam * db) * s <= 0):
            break
        a, b = a + lam * da, b + lam * db
    r = np.abs(lt - np.log(a + b * s)) * np.sqrt(w)
    return _Fit(float(a), float(b), float(np.minimum(r * r, _TRIM**2).sum()))


def _linear(s: np.ndarray, y: np.ndarray, w: np.ndarray,
            start: tuple[float, float] = (0.0, 0.0)) -> tuple[float, float]:
    """Weighted least squares y = a + b*s with start[1] + b >= 0 (a step of Gauss-Newton when
    `start` is the current point)."""
    sw, ss, sss = w.sum(), (w * s).sum(), (w * s * s).sum()
    sy, ssy = (w * y).sum(), (w * s * y).sum()
    det = sw * sss - ss * ss
    if det > 1e-12 * sw * sss:
        a, b = (sy * sss - ss * ssy) / det, (sw * ssy - ss * sy) / det
    else:
        a, b = sy / sw, 0.0
    if start[1] + b < 0:
        b = -start[1]
        a = (sy - b * ss) / sw
    return float(a), float(b)


def _size_steps(s: np.ndarray) -> np.ndarray:
    """Step index of each sorted size; NetPIPE's size-3, size, size+3 share one step."""
    steps = np.zeros(len(s), dtype=int)
    for i in range(1, len(s)):
        steps[i] = steps[i - 1] + (s[i] > 1.1 * s[i - 1] + 3)
    return steps


_RANGE_D2 = {2: 1.128, 3: 1.693, 4: 2.059, 5: 2.326}  # expected range of n standard normals


def _step_noise(t: np.ndarray, steps: np.ndarray) -> float | None:
    """Relative noise between neighbouring sizes of one step (NetPIPE's size-3, size, size+3),
    which should cost the same: the median over steps of the range of log t, in standard
    deviations. None without at least three such steps."""
    spreads = []
    for step in np.unique(steps):
        lt = np.log(t[steps == step])
        if 2 <= len(lt) <= 5:
            spreads.append(float(np.ptp(lt)) / _RANGE_D2[len(lt)])
    return float(np.median(spreads)) if len(spreads) >= 3 else None


def curve_noise(sizes: Sequence[int], medians: Sequence[float]) -> float | None:
    """How much medians of neighbouring sizes of one step (NetPIPE's perturbation) disagree,
    as a relative standard deviation; None when the sizes were not perturbed."""
    order = np.argsort(np.asarray(sizes, dtype=float))
    s = np.asarray(sizes, dtype=float)[order]
    t = np.asarray(medians, dtype=float)[order]
    keep = (s > 0) & (t > 0)
    return _step_noise(t[keep], _size_steps(s[keep]))


def _segmentations(n: int, cost: dict[tuple[int, int], _Fit],
                   kmax: int) -> list[tuple[float, list[int]] | None]:
    """Best split of points 0..n-1 into k+1 segments for k = 0..kmax: (cost, segment starts)."""
    inf = math.inf
    best = [[inf] * n for _ in range(kmax + 1)]
    back = [[-1] * n for _ in range(kmax + 1)]
    for j in range(n):
        if (0, j) in cost:
            best[0][j] = cost[0, j].cost
    for k in range(1, kmax + 1):
        for j in range(n):
            for i in range(1, j + 1):
                if (i, j) in cost and best[k - 1][i - 1] < inf:
                    c = best[k - 1][i - 1] + cost[i, j].cost
                    if c < best[k][j]:
                        best[k][j], back[k][j] = c, i
    out: list[tuple[float, list[int]] | None] = []
    for k in range(kmax + 1):
        if best[k][n - 1] == inf:
            out.append(None)
            continue
        starts, j = [], n - 1
        for kk in range(k, 0, -1):
            i = back[kk][j]
            starts.append(i)
            j = i - 1
        out.append((best[k][n - 1], [0, *reversed(starts)]))
    return out


def switches(sizes: Sequence[int], medians: Sequence[float],
             noise: Sequence[float] | float | None = None, *, max_switches: int = MAX_SWITCHES,
             min_jump: float = MIN_JUMP, min_steps: int = 3) -> list[Switch]:
    """Protocol switches in a time-against-size curve: where the fixed cost jumps up or the
    cost per byte changes (eager to rendezvous, a pipeline, another copy mechanism).

    The curve (sizes > 0; `medians` may be any per-size time) is fitted in log space with
    straight segments t = a + b*s, b >= 0, each over at least `min_steps` size steps, by
    exhaustive dynamic programming over the breakpoints between steps, with a robust loss
    (points beyond 3 noise units are trimmed) and a BIC penalty per breakpoint. The noise
    of a point is its `noise` (relative standard error) and, added in quadrature, how much
    NetPIPE's neighbouring sizes (size-3, size, size+3) disagree, at least 5%. A breakpoint
    is kept when one line fits both sides worse by more than the penalty and either the
    time jumps up by at least `min_jump` and 3 standard errors ("fixed cost") or the cost per
    byte changes 1.5x or more ("cost per byte"); otherwise fewer breakpoints are tried.
    """
    order = np.argsort(np.asarray(sizes, dtype=float))
    s_all = np.asarray(sizes, dtype=float)[order]
    t_all = np.asarray(medians, dtype=float)[order]
    if noise is None:
        rel = np.zeros_like(t_all)
    else:
        rel = np.broadcast_to(np.asarray(noise, dtype=float), np.shape(medians))[order]
    keep = (s_all > 0) & np.isfinite(t_all) & (t_all > 0)
    s, t = s_all[keep], t_all[keep]
    n = len(s)
    steps = _size_steps(s)
    if n < 4 or steps[-1] + 1 < 2 * min_steps:
        return []
    floor = max(MODEL_NOISE, _step_noise(t, steps) or 0.0)
    sigma = np.sqrt(np.minimum(np.nan_to_num(rel[keep], nan=1.0, posinf=1.0), 1.0) ** 2
                    + floor**2)
    scale_s, scale_t = float(s.max()), float(np.median(t))
    xs, xt = s / scale_s, t / scale_t
    first = [i for i in range(n) if i == 0 or steps[i] != steps[i - 1]]  # a step's first
    last = [*(i - 1 for i in first[1:]), n - 1]
    cost = {(i, j): _fit(xs[i:j + 1], xt[i:j + 1], sigma[i:j + 1])
            for i in first for j in last if steps[j] - steps[i] + 1 >= min_steps}
    penalty = 3.0 * math.log(n)  # BIC: a, b and the location of each new segment
    options = _segmentations(n, cost, max_switches)
    best = min((o[0] + k * penalty, k) for k, o in enumerate(options) if o is not None)[1]
    for k in range(best, 0, -1):
        option = options[k]
        if option is None:
            continue
        starts = option[1]
        segs = [(i, j - 1) for i, j in zip(starts, [*starts[1:], n], strict=True)]
        found: list[Switch] = []
        for (li, lj), (ri, rj) in itertools.pairwise(segs):
            left, right = cost[li, lj], cost[ri, rj]
            se = float(np.median(sigma[li:rj + 1])) * math.sqrt(1 / (lj + 1 - li)
                                                                + 1 / (rj + 1 - ri))
            judged = _judge(xs, se, lj, ri, left, right, cost[li, rj], penalty, min_jump)
            if judged is None:
                break
            kind, t_b, t_a = judged
            scale_b = scale_t / scale_s
            before, after = ((left.a * scale_t, right.a * scale_t) if kind == "fixed cost"
                             else (left.b * scale_b, right.b * scale_b))
            found.append(Switch(int(s[ri]), kind, float(before), float(after), int(s[lj]),
                                float(t_b * scale_t), float(t_a * scale_t)))
        else:
            return found
    return []


def _judge(xs: np.ndarray, se: float, p: int, q: int, left: _Fit, right: _Fit,
           merged: _Fit, penalty: float,
           min_jump: float) -> tuple[Literal["fixed cost", "cost per byte"], float, float] | None:
    """Whether the break between points p and q = p + 1 is real, and of which kind; `se` is
    the standard error of the log ratio of the two segments' fits."""
    def f(fit: _Fit, x: float) -> float:
        return fit.a + fit.b * x

    t_b, t_a = f(left, xs[q]), f(right, xs[q])
    if merged.cost - left.cost - right.cost <= penalty:  # one line fits both sides about as well
        return None
    ends = [(f(left, x), f(right, x)) for x in (xs[p], xs[q])]
    jump = 0.0  # an upward step between the two sizes, in log units
    if all(lf > 0 and rf > 0 for lf, rf in ends):
        jump = max(0.0, min(math.log(rf / lf) for lf, rf in ends))
    if jump >= max(math.log1p(min_jump), 3 * se):
        return "fixed cost", t_b, t_a
    lo, hi = sorted((left.b, right.b))
    if hi > (1 + MIN_SLOPE_CHANGE) * lo:
        return "cost per byte", t_b, t_a
    return None


def _median_se(x: np.ndarray) -> float:
    """Relative standard error of a median from the MAD (robust to a few slow observations,
    where the order-statistic interval of a small bimodal sample spans both modes)."""
    median = float(np.median(x))
    if len(x) < 3 or median <= 0:
        return 1.0
    return 1.2533 * 1.4826 * float(np.median(np.abs(x - median))) / median / math.sqrt(len(x))


def curve(data: RunData, variant: str, bench: str = "pingpong", np_: int = 2,
          quantile: float = 0.5) -> tuple[list[int], list[float], list[float]]:
    """A variant's time against size (sizes > 0): the given quantile of each cell's
    observations, and the relative standard error of the cell's median."""
    points = sorted((size, float(np.quantile(g.array, quantile)), _median_se(g.array))
                    for (b, size, n), cell in data.cells.items()
                    if b == bench and n == np_ and size > 0 and _ok(g := cell.get(variant)))
    return [p[0] for p in points], [p[1] for p in points], [p[2] for p in points]


def protocol_switches(data: RunData, bench: str = "pingpong", np_: int = 2,
                      quantile: float = 0.0, **options: Any) -> dict[str, list[Switch]]:
    """Switches in every variant's curve of `bench` at `np_` ranks (see `switches`).

    The curve is each cell's fastest observation by default, as NetPIPE reports: interference
    only ever adds time, and on a shared machine whole observations are slowed, which moves
    medians of neighbouring sizes apart (on this 2-core VM, Open MPI's two switches were
    found in 11 runs of 11 from minima and in 6 from medians); quantile=0.5 uses medians.
    """
    out: dict[str, list[Switch]] = {}
    for variant in data.variants:
        sizes, times, noise = curve(data, variant, bench, np_, quantile)
        if sizes:
            out[variant] = switches(sizes, times, noise, **options)
    return out


# --- derived figures ------------------------------------------------------------------------


@dataclass(frozen=True)
class Derived:
    """Point-to-point figures of one variant; bandwidths in bytes per second."""

    latency_size: int  # 0 B when measured, else the smallest size
    latency: float
    first_size: int | None  # the smallest size > 0
    first_latency: float | None
    peak_bandwidth: float | None
    peak_size: int | None
    n_half: float | None  # smallest size reaching half the peak (log-interpolated)
    throughput: dict[int, float]  # NetPIPE's Mbit/s per size > 0

    @property
    def peak_mbps(self) -> float | None:
        return self.peak_bandwidth * 8e-6 if self.peak_bandwidth is not None else None


def n_half(sizes: Sequence[int], bandwidths: Sequence[float]) -> float | None:
    """Smallest size reaching half the peak bandwidth, interpolated in log-log space."""
    s = np.asarray(sizes, dtype=float)
    bw = np.asarray(bandwidths, dtype=float)
    if len(s) == 0:
        return None
    half = bw.max() / 2
    i = int(np.argmax(bw >= half))
    if i == 0:
        return float(s[0])
    f = (math.log(half) - math.log(bw[i - 1])) / (math.log(bw[i]) - math.log(bw[i - 1]))
    return float(math.exp(math.log(s[i - 1]) + f * (math.log(s[i]) - math.log(s[i - 1]))))


def derived(data: RunData, bench: str = "pingpong", np_: int = 2) -> dict[str, Derived]:
    """Latency, peak bandwidth and where it peaks, n1/2 and NetPIPE throughput per variant.

    Bandwidth is bytes moved per observation over its time: for pingpong the size over half
    the round trip, as NetPIPE reports it.
    """
    spec = BENCHMARKS[bench]
    window = int(data.settings.get("window", 64))
    out: dict[str, Derived] = {}
    for variant in data.variants:
        points = sorted((size, _median(g)) for (b, size, n), cell in data.cells.items()
                       if b == bench and n == np_ and _ok(g := cell.get(variant)))
        if not points:
            continue
        positive = [(size, t) for size, t in points if size > 0]
        bw = [(size, spec.bandwidth(size, t, window)) for size, t in positive]
        bw_ok = [(size, v) for size, v in bw if v is not None and v > 0]
        peak = max(bw_ok, key=lambda p: p[1]) if bw_ok else None
        out[variant] = Derived(
            latency_size=points[0][0], latency=points[0][1],
            first_size=positive[0][0] if positive else None,
            first_latency=positive[0][1] if positive else None,
            peak_bandwidth=peak[1] if peak else None, peak_size=peak[0] if peak else None,
            n_half=n_half([p[0] for p in bw_ok], [p[1] for p in bw_ok]) if bw_ok else None,
            throughput={size: v * 8e-6 for size, v in bw_ok})
    return out


def relative(data: RunData, baseline: str) -> dict[Key, dict[str, float]]:
    """Each variant's speed relative to `baseline` per cell, in % (200: twice as fast)."""
    out: dict[Key, dict[str, float]] = {}
    for key, cell in sorted(data.cells.items()):
        base = cell.get(baseline)
        ref = _median(base) if base is not None and _ok(base) else 0.0
        if ref <= 0:
            continue
        out[key] = {v: 100.0 * ref / m for v, g in cell.items()
                    if _ok(g) and (m := _median(g)) > 0}
    return out


def scaling(data: RunData, bench: str, size: int = 0) -> dict[str, list[tuple[int, float]]]:
    """Median against rank count for each variant (a collective's scaling)."""
    out: dict[str, list[tuple[int, float]]] = {}
    for (b, s, n), cell in sorted(data.cells.items(), key=lambda kv: kv[0][2]):
        if b != bench or s != size:
            continue
        for variant, group in cell.items():
            if _ok(group):
                out.setdefault(variant, []).append((n, _median(group)))
    return {v: out[v] for v in data.variants if v in out}


# --- comparing runs -------------------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """One cell of one variant in run a (before) against run b (after)."""

    key: Key
    variant: str  # in run a
    other: str  # in run b
    ratio: float  # median(b) / median(a): above 1 is slower after
    ci_low: float
    ci_high: float
    p_adjusted: float
    outcome: Literal["regression", "improvement", "indistinguishable", "undecided"]
    n_a: int  # launches
    n_b: int


def compare_runs(a: RunData, b: RunData, pairs: dict[str, str] | None = None,
                 alpha: float = ALPHA, threshold: float = THRESHOLD) -> list[Change]:
    """Every cell measured in both runs for the same variant (or the `pairs` a -> b, to follow
    an upgrade such as mpich-4.0.2 -> mpich-5.0.2): the two runs are two sets of launches, and
    the ratio, its interval, the launch test (Holm-corrected across all cells) and the
    decision are those of `stats.verdicts`. Cells whose calls were timed by different methods
    are not compared (see `timed_differently`)."""
    rows = []
    for key, va, vb, ga, gb in _shared(a, b, pairs):
        if ga.timing == gb.timing:
            ratio, lo, hi = ratio_ci(ga.nested, gb.nested)
            rows.append((key, va, vb, ratio, lo, hi, p_value(ga.nested, gb.nested),
                         len(ga.nested), len(gb.nested)))
    adjusted = holm([r[6] for r in rows])
    out = []
    for (key, va, vb, ratio, lo, hi, _p, na, nb), p in zip(rows, adjusted, strict=True):
        outcome: Literal["regression", "improvement", "indistinguishable", "undecided"]
        slower = decide(lo, hi, p, min(na, nb), alpha, threshold)
        faster = decide(1 / hi, 1 / lo, p, min(na, nb), alpha, threshold)
        if "faster" in (slower, faster):
            outcome = "regression" if slower == "faster" else "improvement"
        elif slower == "indistinguishable":
            outcome = "indistinguishable"
        else:
            outcome = "undecided"
        out.append(Change(key, va, vb, ratio, lo, hi, p, outcome, na, nb))
    return out


def timed_differently(a: RunData, b: RunData,
                      pairs: dict[str, str] | None = None) -> dict[tuple[str, str], int]:
    """(method in a, method in b) -> how many cells both runs measured but timed differently:
    their figures differ by the method (a loop pipelines), so they are not compared."""
    out: dict[tuple[str, str], int] = {}
    for _key, _va, _vb, ga, gb in _shared(a, b, pairs):
        if ga.timing != gb.timing:
            out[ga.timing, gb.timing] = out.get((ga.timing, gb.timing), 0) + 1
    return out


def _shared(a: RunData, b: RunData, pairs: dict[str, str] | None
            ) -> Iterator[tuple[Key, str, str, Group, Group]]:
    """(key, variant in a, variant in b, group in a, group in b) of every timed cell measured
    in both runs."""
    pairs = pairs if pairs is not None else {v: v for v in a.variants if v in b.variants}
    for key in sorted(k for k in set(a.cells) & set(b.cells) if BENCHMARKS[k[0]].unit == "s"):
        for va, vb in pairs.items():
            ga, gb = a.cells[key].get(va), b.cells[key].get(vb)
            if _ok(ga) and _ok(gb):
                assert ga is not None and gb is not None
                yield key, va, vb, ga, gb


# --- self-consistency guidelines ------------------------------------------------------------


@dataclass(frozen=True)
class GuidelineCheck:
    """One guideline for one variant in one cell: the collective against its mock-up."""

    guideline: Guideline
    variant: str
    key: Key  # the collective's cell; the mock-up's is (guideline.mockup, size, np)
    collective: float  # seconds: the median of launch medians
    mockup: float
    ratio: float  # collective / mock-up: above 1, the mock-up ran faster
    ci_low: float
    ci_high: float
    p_adjusted: float
    outcome: Literal["violated", "held", "undecided"]
    launches: int

    @property
    def saving(self) -> float:
        """The share of the collective's time the mock-up saves (negative: it costs more)."""
        return 1 - 1 / self.ratio


def guideline_checks(data: RunData, alpha: float = ALPHA,
                     threshold: float = THRESHOLD) -> list[GuidelineCheck]:
    """Every guideline in every cell where a variant measured both the collective and its
    mock-up. Violated: the mock-up ran faster by the verdicts' rule (the whole ratio interval
    beyond `threshold` and the launch test, Holm-corrected across every check of the run, backing
    it); held: the collective ran faster by that rule, or the two are indistinguishable;
    anything else is undecided."""
    rows = []
    for g in GUIDELINES:
        for key in sorted(k for k in data.cells if k[0] == g.collective):
            mock = data.cells.get((g.mockup, key[1], key[2]), {})
            for variant in data.variants:
                gc, gm = data.cells[key].get(variant), mock.get(variant)
                if _ok(gc) and _ok(gm):
                    assert gc is not None and gm is not None
                    ratio, lo, hi = ratio_ci(gm.nested, gc.nested)
                    rows.append((g, variant, key, gc, gm, ratio, lo, hi,
                                 p_value(gc.nested, gm.nested)))
    adjusted = holm([r[-1] for r in rows])
    out = []
    for (g, variant, key, gc, gm, ratio, lo, hi, _p), p in zip(rows, adjusted, strict=True):
        n = min(len(gc.nested), len(gm.nested))
        outcome: Literal["violated", "held", "undecided"] = "undecided"
        if decide(lo, hi, p, n, alpha, threshold) == "faster":
            outcome = "violated"
        elif decide(1 / hi, 1 / lo, p, n, alpha, threshold) == "faster" \
                or decide(lo, hi, p, n, alpha, threshold) == "indistinguishable":
            outcome = "held"
        out.append(GuidelineCheck(g, variant, key, _median(gc), _median(gm), ratio, lo, hi, p,
                                  outcome, n))
    return out


def guidelines_unchecked(data: RunData) -> dict[tuple[str, str], str]:
    """(mock-up, variant) -> why a guideline the run asked for was checked at no cell for that
    variant: what the core said of the collective or its mock-up (n/a, failed...) at the
    largest size (a 0-byte cell's reason is only its own)."""
    out: dict[tuple[str, str], str] = {}
    for g in GUIDELINES:
        cells = {(k[1], k[2]) for k in data.cells if k[0] in (g.collective, g.mockup)}
        for variant in data.variants:
            def group(bench: str, cell: tuple[int, int], variant: str = variant) -> Group | None:
                return data.cells.get((bench, *cell), {}).get(variant)

            if not cells or any(_ok(group(g.collective, c)) and _ok(group(g.mockup, c))
                                for c in cells):
                continue
            largest = max(c[0] for c in cells)
            lost = sorted({f"{bench}: {x.reason or x.status}" for c in cells if c[0] == largest
                           for bench in (g.collective, g.mockup)
                           if (x := group(bench, c)) is not None and not _ok(x)})
            out[g.mockup, variant] = "; ".join(lost) or "not measured"
    return out
