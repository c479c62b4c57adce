"""LogGP parameters per variant, as Netgauge's loggp pattern derives them (Hoefler, Lichei and
Rehm, "Low-Overhead LogGP Parameter Assessment for Modern Interconnection Networks", 2007),
from the loggp benchmark's round trips (kernels/bench_loggp.c), in seconds:

- half_rtt(s) = PRTT(1,0,s) / 2; Netgauge's L is half_rtt at its smallest size (both overheads
  and the wire together: a round trip cannot separate them);
- g(s) = (PRTT(n,0,s) - PRTT(1,0,s)) / (n - 1), the gap between messages of a burst;
- o_s(s) the time inside a send made d after the last one (measured; d is about PRTT(1,0,s),
  the mean of a few rounds before the observation's), and
  o_s_prtt(s) = (PRTT(n,d,s) - PRTT(1,0,s)) / (n - 1) - d, Netgauge's derivation of it;
- o_r(s) the time inside a receive called d after the last one, the message there already;
- g and G: g(s) = g + (s - 1) G fitted per size range, the ranges split where one line stops
  fitting (`curves.switches` on the g(s) curve), with each size's relative residual.

Every figure follows the launch rule: per launch the median of the parameter over its
observations, then the median of launch medians and its 95% interval (`stats.center`,
`stats.center_ci`); g and G are fitted to each launch's medians and summarised the same way.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..model.benchmarks import Extras, loggp_gap
from ..store.results import Group, RunData
from .curves import switches
from .groups import measured
from .stats import Sample, center, center_ci, launch_medians

BENCH = "loggp"


@dataclass(frozen=True)
class ParameterFigure:
    """A parameter's figure (median of launch medians), its 95% interval, and its launches."""

    value: float
    low: float
    high: float
    launches: int
    per_launch: tuple[float, ...] = ()  # each launch's median (fit), for `stats.judge`

    @property
    def sample(self) -> Sample:
        return [np.array([v]) for v in self.per_launch]


@dataclass(frozen=True)
class SizePoint:
    """The parameters measured at one size."""

    size: int
    half_rtt: ParameterFigure
    o_s: ParameterFigure
    o_s_prtt: ParameterFigure
    o_r: ParameterFigure
    g: ParameterFigure


@dataclass(frozen=True)
class GapRange:
    """g(s) = g + (s - 1) G over `sizes`, with each size's relative residual: (measured g(s) -
    fitted) / fitted."""

    sizes: tuple[int, ...]
    g: ParameterFigure
    G: ParameterFigure
    residuals: tuple[float, ...]

    @property
    def max_residual(self) -> float:
        return max(abs(r) for r in self.residuals)

    @property
    def rms_residual(self) -> float:
        return math.sqrt(sum(r * r for r in self.residuals) / len(self.residuals))


@dataclass(frozen=True)
class LogGPModel:
    """One variant's LogGP parameters: per size, and g, G per size range."""

    variant: str
    np: int
    n: int  # messages per burst of PRTT(n,.,s)
    points: tuple[SizePoint, ...]
    ranges: tuple[GapRange, ...]

    @property
    def L(self) -> ParameterFigure:
        """L as Netgauge reports it: half PRTT(1,0,s) at the smallest size measured."""
        return self.points[0].half_rtt


def half_rtt(x: Extras) -> float:
    return x["prtt1"][0] / 2


gap = loggp_gap  # the benchmark's own figure: NaN where a burst was not slower than one message


def o_s(x: Extras) -> float:
    return x["o_s"][0]


def o_s_prtt(x: Extras) -> float:
    return (x["prttd"][0] - x["prtt1"][0]) / (x["prtt_n"][0] - 1) - x["delay"][0]


def o_r(x: Extras) -> float:
    return x["o_r"][1]


def _sample(group: Group, of: Callable[[Extras], float]) -> dict[int, np.ndarray]:
    """The parameter of each observation, by launch."""
    out: dict[int, list[float]] = {}
    for x, launch in zip(group.extras, group.launches, strict=True):
        if "prtt1" in x and math.isfinite(value := of(x)):
            out.setdefault(launch, []).append(value)
    return {launch: np.array(v) for launch, v in sorted(out.items())}


def _figure(sample: Sample) -> ParameterFigure:
    low, high = center_ci(sample)
    medians = launch_medians(sample)
    return ParameterFigure(center(sample), low, high, len(medians),
                           tuple(float(x) for x in medians))


def fit_gap(sizes: Sequence[int], gaps: Sequence[float]) -> tuple[float, float]:
    """g, G of g(s) = g + (s - 1) G by least relative squares (each size counts alike, as
    the sizes span decades)."""
    x = np.asarray(sizes, dtype=float) - 1
    y = np.asarray(gaps, dtype=float)
    w = 1 / np.abs(y)
    (g, big_g), *_ = np.linalg.lstsq(np.column_stack([w, w * x]), w * y, rcond=None)
    return float(g), float(big_g)


def _ranges(sizes: list[int], per_launch: list[dict[int, float]]) -> tuple[GapRange, ...]:
    """g and G per size range: split where `curves.switches` finds that one line stops fitting
    the g(s) curve (figures of the sizes); each launch's medians fitted over each range."""
    figures = [float(np.median(list(m.values()))) for m in per_launch]
    starts = [0, *(sizes.index(s.size) for s in switches(sizes, figures))]
    out = []
    for lo, hi in zip(starts, [*starts[1:], len(sizes)], strict=True):
        if hi - lo < 2:
            continue
        span = sizes[lo:hi]
        launches = set.intersection(*(set(m) for m in per_launch[lo:hi]))
        fits = [fit_gap(span, [per_launch[i][launch] for i in range(lo, hi)])
                for launch in sorted(launches)]
        if not fits:
            continue
        g = _figure([np.array([f[0]]) for f in fits])
        big_g = _figure([np.array([f[1]]) for f in fits])
        line = [g.value + (s - 1) * big_g.value for s in span]
        residuals = tuple((figures[lo + i] - f) / f for i, f in enumerate(line))
        out.append(GapRange(tuple(span), g, big_g, residuals))
    return tuple(out)


def model(data: RunData, variant: str, np_: int = 2) -> LogGPModel | None:
    """A variant's LogGP parameters from its loggp cells at np_ ranks, or None if it has none."""
    groups = sorted((key.size, g) for key, cell in data.cells.items()
                    if key.bench == BENCH and key.np == np_
                    and measured(g := cell.get(variant)) and g.extras)
    points, per_launch, n = [], [], 0
    for size, group in groups:
        by_launch = _sample(group, gap)
        if not by_launch:
            continue
        n = int(next(x["prtt_n"][0] for x in group.extras if "prtt_n" in x))
        figure = {name: _figure(list(_sample(group, of).values()))
                  for name, of in (("half_rtt", half_rtt), ("o_s", o_s),
                                   ("o_s_prtt", o_s_prtt), ("o_r", o_r), ("g", gap))}
        points.append(SizePoint(size, **figure))
        per_launch.append({launch: float(np.median(v)) for launch, v in by_launch.items()})
    if not points:
        return None
    return LogGPModel(variant, np_, n, tuple(points),
                      _ranges([p.size for p in points], per_launch))


def loggp(data: RunData, np_: int = 2) -> dict[str, LogGPModel]:
    """Every variant's LogGP parameters from a run's loggp cells at np_ ranks."""
    models = {v: model(data, v, np_) for v in data.variants}
    return {v: m for v, m in models.items() if m is not None}
