"""Hockney's alpha-beta model per protocol regime: t(s) = alpha + beta * s, fitted to a
variant's time-against-size curve between the protocol switches `curves.switches` finds, and
split further where one line misses a cell by more than RESIDUAL_TARGET (a change the switch
detector does not call a protocol switch: a cache level, a pipeline), each side keeping at least
two size steps and three sizes.

A regime's fit is made twice: once to the cells' figures (the medians of launch medians), which
gives the line the reports draw and its relative residuals, and once per launch to that launch's
medians, which gives a Sample of alpha and of beta (one value per launch) whose centre and
interval come from `stats` like every other figure: the launch is the unit here too."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..store.results import Group, RunData
from .curves import Switch, protocol_switches, size_steps
from .groups import figure, measured
from .stats import Sample, center_ci

RESIDUAL_TARGET = 0.10  # a regime whose worst relative residual is above this fits poorly
MAX_REGIMES = 8


@dataclass(frozen=True)
class Estimate:
    """A fitted parameter: the fit to the cells' figures, and the 95% interval of the
    per-launch fits' centre."""

    value: float
    low: float
    high: float
    per_launch: tuple[float, ...]  # one fit per launch that measured the whole regime

    @property
    def sample(self) -> Sample:
        """The per-launch fits as a Sample (one observation per launch) for `stats.judge`."""
        return [np.array([v]) for v in self.per_launch]


@dataclass(frozen=True)
class Regime:
    """One protocol regime: sizes first..last fitted by alpha + beta * size."""

    first: int  # bytes
    last: int
    alpha: Estimate  # seconds
    beta: Estimate  # seconds per byte
    sizes: tuple[int, ...]
    residuals: tuple[float, ...]  # fit / figure - 1 at each size
    opened_by: Switch | None  # the protocol switch this regime starts at
    misfit_split: bool = False  # starts where one line over both sides missed by > the target

    def time(self, size: float) -> float:
        return self.alpha.value + self.beta.value * size

    @property
    def worst_residual(self) -> float:
        return max((abs(r) for r in self.residuals), default=math.nan)

    @property
    def rms_residual(self) -> float:
        return math.sqrt(sum(r * r for r in self.residuals) / len(self.residuals)) \
            if self.residuals else math.nan

    @property
    def bandwidth(self) -> float | None:
        """1 / beta in bytes per second: the asymptotic bandwidth of the regime."""
        return 1 / self.beta.value if self.beta.value > 0 else None


@dataclass(frozen=True)
class P2pModel:
    """A variant's curve of one benchmark at one rank count, regime by regime."""

    variant: str
    bench: str
    np: int
    regimes: tuple[Regime, ...]

    def regime(self, size: float) -> Regime:
        """The regime a size falls in (below the first: the first; above the last: the last)."""
        for r in reversed(self.regimes):
            if size >= r.first:
                return r
        return self.regimes[0]

    def time(self, size: float) -> float:
        """Predicted seconds at `size`, from its regime's line."""
        return self.regime(size).time(size)


def line(sizes: Sequence[float], times: Sequence[float]) -> tuple[float, float]:
    """alpha, beta of t = alpha + beta * s minimising relative squared residuals, with beta >= 0
    (a negative slope is set to 0 and alpha refitted). alpha is the line's intercept: the
    start-up cost in the first regime; above a switch it may be negative (the local line of a
    regime whose cost per byte rose)."""
    s, t = np.asarray(sizes, dtype=float), np.asarray(times, dtype=float)
    w = 1 / t  # relative residuals: (alpha + beta s - t) / t
    if len(s) >= 2 and np.ptp(s) > 0:
        coef, *_ = np.linalg.lstsq(np.column_stack([w, s * w]), np.ones_like(t), rcond=None)
        if coef[1] >= 0:
            return float(coef[0]), float(coef[1])
    return float(np.sum(w) / np.sum(w * w)), 0.0


def _estimate(value: float, per_launch: list[float]) -> Estimate:
    if not per_launch:
        return Estimate(value, math.nan, math.nan, ())
    lo, hi = center_ci([np.array([v]) for v in per_launch])
    return Estimate(value, float(lo), float(hi), tuple(per_launch))


def _per_launch(groups: dict[int, Group]) -> list[tuple[float, float]]:
    """alpha, beta fitted to each launch that measured every size of the regime."""
    by_launch: dict[int, dict[int, list[float]]] = {}
    for size, g in groups.items():
        for launch, value in zip(g.launches, g.values, strict=True):
            by_launch.setdefault(launch, {}).setdefault(size, []).append(value)
    out = []
    for cells in by_launch.values():
        if len(cells) == len(groups) and all(np.isfinite(v).all() for v in cells.values()):
            sizes = sorted(cells)
            out.append(line(sizes, [float(np.median(cells[s])) for s in sizes]))
    return out


def _residuals(sizes: Sequence[float], figures: Sequence[float]) -> tuple[float, ...]:
    """fit / figure - 1 at each size, for the line through them."""
    alpha, beta = line(sizes, figures)
    return tuple((alpha + beta * s) / f - 1 for s, f in zip(sizes, figures, strict=True))


def _worst(sizes: Sequence[float], figures: Sequence[float]) -> float:
    return max(abs(r) for r in _residuals(sizes, figures))


def _squares(sizes: Sequence[float], figures: Sequence[float]) -> float:
    return sum(r * r for r in _residuals(sizes, figures))


def _misfit_splits(sizes: list[int], figures: list[float], room: int) -> list[int]:
    """Indices where the regime sizes[0..] is split further: where a cut most lowers the worst
    residual, recursively, while a side misses by more than the target and both keep two size
    steps and three sizes (two sizes fit any line exactly). A cut may fall inside one of
    NetPIPE's steps (Open MPI switches between 256 and 259 B), which the switch detector's
    segments never do."""
    if room <= 0 or _worst(sizes, figures) <= RESIDUAL_TARGET:
        return []
    steps = size_steps(np.asarray(sizes, dtype=float))
    cuts = [i for i in range(3, len(sizes) - 2)
            if steps[i - 1] - steps[0] >= 1 and steps[-1] - steps[i] >= 1]
    if not cuts:
        return []
    worst = {i: max(_worst(sizes[:i], figures[:i]), _worst(sizes[i:], figures[i:])) for i in cuts}
    cut = min(worst, key=lambda i: worst[i])
    if worst[cut] >= _worst(sizes, figures):
        return []
    left = _misfit_splits(sizes[:cut], figures[:cut], room - 1)
    right = _misfit_splits(sizes[cut:], figures[cut:], room - 1 - len(left))
    return [*left, cut, *(cut + i for i in right)]


def _regimes(groups: dict[int, Group], opened_by: Switch | None, room: int) -> list[Regime]:
    """The regime opened at groups' first size, split where one line misfits."""
    sizes = sorted(groups)
    figures = [figure(groups[s]) for s in sizes]
    cuts = _misfit_splits(sizes, figures, room)
    out = []
    for n, (i, j) in enumerate(zip([0, *cuts], [*cuts, len(sizes)], strict=True)):
        part = {s: groups[s] for s in sizes[i:j]}
        out.append(_regime(part, opened_by if n == 0 else None, misfit=n > 0))
    return out


def _regime(groups: dict[int, Group], opened_by: Switch | None, misfit: bool) -> Regime:
    sizes = sorted(groups)
    figures = [figure(groups[s]) for s in sizes]
    alpha, beta = line(sizes, figures)
    launches = _per_launch(groups)
    return Regime(sizes[0], sizes[-1], _estimate(alpha, [a for a, _ in launches]),
                  _estimate(beta, [b for _, b in launches]), tuple(sizes),
                  _residuals(sizes, figures), opened_by, misfit)


def fit(groups: dict[int, Group], switches: Sequence[Switch], variant: str, bench: str,
        np_: int) -> P2pModel | None:
    """A variant's regimes from its groups by size, split at `switches`; None with under two
    sizes measured. Lines are fitted from 1 B: a 0-byte message takes a path of its own in
    several libraries (Open MPI's is 12% faster than its 1-byte one here), and alpha is the
    first line's value at 0 anyway."""
    sizes = sorted(s for s, g in groups.items() if s > 0 and measured(g) and figure(g) > 0)
    if len(sizes) < 2:
        return None
    bounds = sorted((sw for sw in switches if sizes[0] < sw.size <= sizes[-1]),
                    key=lambda sw: sw.size)
    figures = [figure(groups[s]) for s in sizes]
    starts: list[tuple[int, Switch | None]] = [(sizes[0], None)]
    for n, sw in enumerate(bounds):
        end = bounds[n + 1].size if n + 1 < len(bounds) else math.inf
        starts.append((_refined(sizes, figures, starts[-1][0], sw.size, end), sw))
    regimes: list[Regime] = []
    for i, (first, opened) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else math.inf
        inside = {s: groups[s] for s in sizes if first <= s < end}
        if len(inside) >= 2:
            regimes += _regimes(inside, opened, MAX_REGIMES - len(starts) - len(regimes))
    return P2pModel(variant, bench, np_, tuple(regimes)) if regimes else None


def _refined(sizes: list[int], figures: list[float], prev: float, at: int, end: float) -> int:
    """Where a switch's regime starts: the switch's size, or a neighbour up to three sizes
    either way if the two lines then miss less (sum of squared relative residuals). The switch
    detector cuts between NetPIPE's steps (size-3, size, size+3) only, and a library may switch
    inside one (Open MPI: 256 and 259 B); each side keeps three sizes."""
    i = sizes.index(at)
    lo = next(k for k, s in enumerate(sizes) if s >= prev)
    hi = next((k for k, s in enumerate(sizes) if s >= end), len(sizes))

    def cost(j: int) -> float:
        return _squares(sizes[lo:j], figures[lo:j]) + _squares(sizes[j:hi], figures[j:hi])

    options = [j for j in range(i - 3, i + 4) if lo + 3 <= j <= hi - 3]
    if i not in options:
        return at
    return sizes[min(options, key=lambda j: (cost(j) - (j == i) * 1e-9, abs(j - i)))]


def fit_models(data: RunData, bench: str = "pingpong", np_: int = 2) -> dict[str, P2pModel]:
    """Every variant's model of `bench` at `np_` ranks, split at the protocol switches found
    in its curve of fastest observations (see `curves.protocol_switches`)."""
    found = protocol_switches(data, bench, np_)
    out = {}
    for variant in data.variants:
        groups = {k.size: cell[variant] for k, cell in data.cells.items()
                  if k.bench == bench and k.np == np_ and variant in cell}
        model = fit(groups, found.get(variant, []), variant, bench, np_)
        if model is not None:
            out[variant] = model
    return out
