"""Latency curves: protocol switches (where the fixed cost or the cost per byte changes) and
the derived figures (latency, peak bandwidth, n1/2, NetPIPE throughput). Switches are looked
for in each cell's fastest observation (see `protocol_switches`)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np

from ..model.benchmarks import BENCHMARKS
from ..store.results import RunData
from .groups import figure, measured

MODEL_NOISE = 0.05  # relative misfit a straight segment of a real curve is allowed anyway
MIN_JUMP = 0.10  # a fixed-cost jump smaller than this is not reported as a switch
MIN_SLOPE_CHANGE = 0.5  # a cost per byte must change by at least this factor - 1 (1.5x)
MAX_SWITCHES = 4
_HUBER = 2.0  # residuals beyond this many noise units count linearly in a first fit,
_TRIM = 3.0  # and beyond this many not at all in the final one (slow cells, spikes)


class Jump(StrEnum):
    """What a protocol switch changes: the fixed cost, or the cost per byte."""

    FIXED = "fixed cost"
    PER_BYTE = "cost per byte"


@dataclass(frozen=True)
class Switch:
    """A change of protocol: from `size` on, the fixed cost (s) or cost per byte (s/B) changes."""

    size: int  # first size after the jump
    kind: Jump
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


@dataclass(frozen=True)
class _Break:
    """A breakpoint between points p and p + 1: the fits either side of it and across it."""

    p: int
    left: _Fit
    right: _Fit
    merged: _Fit


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


def size_steps(s: np.ndarray) -> np.ndarray:
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
    return _step_noise(t[keep], size_steps(s[keep]))


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
    steps = size_steps(s)
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
            judged = _judge(xs, se, _Break(lj, left, right, cost[li, rj]), penalty, min_jump)
            if judged is None:
                break
            kind, t_b, t_a = judged
            scale_b = scale_t / scale_s
            before, after = ((left.a * scale_t, right.a * scale_t) if kind == Jump.FIXED
                             else (left.b * scale_b, right.b * scale_b))
            found.append(Switch(int(s[ri]), kind, float(before), float(after), int(s[lj]),
                                float(t_b * scale_t), float(t_a * scale_t)))
        else:
            return found
    return []


def _judge(xs: np.ndarray, se: float, at: _Break, penalty: float,
           min_jump: float) -> tuple[Jump, float, float] | None:
    """Whether the break is real, and of which kind; `se` is the standard error of the log
    ratio of the two segments' fits."""
    def f(fit: _Fit, x: float) -> float:
        return fit.a + fit.b * x

    p, q, left, right, merged = at.p, at.p + 1, at.left, at.right, at.merged
    t_b, t_a = f(left, xs[q]), f(right, xs[q])
    if merged.cost - left.cost - right.cost <= penalty:  # one line fits both sides about as well
        return None
    ends = [(f(left, x), f(right, x)) for x in (xs[p], xs[q])]
    jump = 0.0  # an upward step between the two sizes, in log units
    if all(lf > 0 and rf > 0 for lf, rf in ends):
        jump = max(0.0, min(math.log(rf / lf) for lf, rf in ends))
    if jump >= max(math.log1p(min_jump), 3 * se):
        return Jump.FIXED, t_b, t_a
    lo, hi = sorted((left.b, right.b))
    if hi > (1 + MIN_SLOPE_CHANGE) * lo:
        return Jump.PER_BYTE, t_b, t_a
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
                    if b == bench and n == np_ and size > 0 and measured(g := cell.get(variant)))
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
    window = data.settings.window
    out: dict[str, Derived] = {}
    for variant in data.variants:
        points = sorted((size, figure(g)) for (b, size, n), cell in data.cells.items()
                       if b == bench and n == np_ and measured(g := cell.get(variant)))
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

