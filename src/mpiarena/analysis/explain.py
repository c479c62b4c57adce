"""Why one variant is faster than another, size range by size range, from the fitted models.

The sizes are cut where either variant's model changes regime. In each range the two variants
are judged on the geometric mean of their cells per launch (one figure per launch, so the
launch stays the unit), and the models' parameters (start-up alpha in the first regime, cost
per byte beta everywhere) on their per-launch fits: all through `stats.judge` as one family
(corrected across the whole explanation), with LogGP's overheads and gap where both ran the loggp
benchmark. For a collective, each cell's closest algorithm shape
under the variant's pingpong model (analysis/predict.py) comes with it. Each clause names the
stored cells it rests on."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..base.errors import ArenaError
from ..base.records import Cell
from ..model.benchmarks import BENCHMARKS, Kind
from ..store.results import RunData
from .comparison import Comparison
from .floor import LatencyTerm, latency_terms
from .groups import figure, measured
from .loggp import loggp
from .models import Estimate, P2pModel, Regime, fit_models
from .predict import SHAPES, CellFit, run_predictions
from .stats import Pair, Sample, judge


@dataclass(frozen=True)
class Parameter:
    """One fitted parameter of both variants, judged: b's over a's."""

    name: str  # alpha | beta, or LogGP's o_s | o_r | g
    a: float
    b: float
    judged: Comparison
    at: int | None = None  # LogGP's: the size it was measured at


@dataclass(frozen=True)
class Range:
    """A size range inside one regime of each variant, with what the run measured there."""

    first: int
    last: int
    cells: tuple[Cell, ...]  # the cells both variants measured in the range
    figures: tuple[tuple[float, float], ...]  # per cell: a's figure, b's figure
    measured: Comparison  # b over a, the geometric mean of the range's cells per launch
    parameters: tuple[Parameter, ...]
    per_byte_share: float  # at the range's last size: the share of b - a that beta accounts for
    first_regime: bool  # both variants' first regime: alpha is a start-up cost
    shapes_a: tuple[CellFit, ...] = ()  # a collective: each cell's closest algorithm shape
    shapes_b: tuple[CellFit, ...] = ()


@dataclass(frozen=True)
class Explanation:
    run_id: int
    a: str
    b: str
    bench: str
    np: int
    ranges: tuple[Range, ...]
    switches_a: tuple[Regime, ...]  # the regimes that start at a protocol switch
    switches_b: tuple[Regime, ...]
    loggp: tuple[Parameter, ...] = ()  # both ran the loggp benchmark: its overheads and gap
    floor: tuple[LatencyTerm, ...] = ()  # each one's latency term against the machine floor's

    def cells(self) -> list[Cell]:
        """Every stored cell a clause rests on."""
        return [k for r in self.ranges for k in r.cells]

    def judged(self) -> list[Comparison]:
        """Every comparison of the explanation (one corrected family)."""
        return [j for r in self.ranges for j in (r.measured, *(p.judged for p in r.parameters))] \
            + [p.judged for p in self.loggp]


def _cuts(a: P2pModel, b: P2pModel, sizes: Sequence[int]) -> list[tuple[int, int]]:
    """The measured sizes cut where either model opens a regime: (first, last) per range. Two
    openings within one of NetPIPE's steps (size-3, size, size+3) make one cut, at the first."""
    opened = sorted({r.first for r in (*a.regimes[1:], *b.regimes[1:])} | {sizes[0]})
    starts: list[int] = []
    for s in opened:
        if not starts or s > 1.1 * starts[-1] + 3:
            starts.append(s)
    out = []
    for i, first in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else None
        inside = [s for s in sizes if s >= first and (end is None or s < end)]
        if inside:
            out.append((inside[0], inside[-1]))
    return out


def _ratio_scale(*estimates: Estimate) -> bool:
    """Whether parameters can be compared as a ratio: every fit, and every launch's, above 0."""
    return all(e.value > 0 and e.per_launch and min(e.per_launch) > 0 for e in estimates)


def _pairs(ra: Regime, rb: Regime, first_regime: bool) -> list[tuple[str, float, float, Pair]]:
    """The parameters worth comparing between two regimes: alpha where it is a start-up cost
    (both first regimes), beta where both lines rise; each only where every launch's fit is
    above 0 (a ratio of a zero or negative intercept says nothing)."""
    out = []
    if first_regime and _ratio_scale(ra.alpha, rb.alpha):
        out.append(("alpha", ra.alpha.value, rb.alpha.value,
                    Pair(ra.alpha.sample, rb.alpha.sample)))
    if _ratio_scale(ra.beta, rb.beta):
        out.append(("beta", ra.beta.value, rb.beta.value, Pair(ra.beta.sample, rb.beta.sample)))
    return out


def explain(data: RunData, a: str, b: str, bench: str = "pingpong",
            np_: int | None = None) -> Explanation:
    """Why `a` and `b` differ on `bench` (at its lowest rank count measured, unless `np_`)."""
    for v in (a, b):
        if v not in data.variants:
            raise ArenaError(f"run {data.run_id} has no variant '{v}'; it has "
                             f"{', '.join(data.variants)}")
    spec = BENCHMARKS.get(bench)
    if spec is None or not spec.sized or spec.kind not in (Kind.P2P, Kind.COLL):
        raise ArenaError(f"explain needs a point-to-point or collective benchmark measured over "
                         f"sizes, not '{bench}'")
    nps = sorted({k.np for k in data.cells if k.bench == bench})
    if not nps:
        raise ArenaError(f"run {data.run_id} did not measure {bench}; pick one it measured with "
                         "--bench")
    np_ = np_ if np_ is not None else nps[0]
    models = fit_models(data, bench, np_)
    missing = [v for v in (a, b) if v not in models]
    if missing:
        raise ArenaError(f"{' and '.join(missing)} measured under two sizes of {bench} at "
                         f"{np_} ranks in run {data.run_id}: no model to explain it with")
    ma, mb = models[a], models[b]
    keys = sorted((k for k, cell in data.cells.items() if k.bench == bench and k.np == np_
                   and measured(cell.get(a)) and measured(cell.get(b))), key=lambda k: k.size)
    ranges = _cuts(ma, mb, [k.size for k in keys])
    pairs: list[Pair] = []
    plan = []
    for first, last in ranges:
        inside = tuple(k for k in keys if first <= k.size <= last)
        ra, rb = ma.regime(last), mb.regime(last)  # the regime of most of the range's cells
        params = _pairs(ra, rb, ra is ma.regimes[0] and rb is mb.regimes[0])
        plan.append((first, last, inside, params, ra, rb))
        pairs += [Pair(_range_sample(data, inside, a), _range_sample(data, inside, b)),
                  *(p for *_, p in params)]
    overheads = _loggp_pairs(data, a, b)
    pairs += [p for *_, p in overheads]
    judged = iter(judge(pairs))
    fits = {(f.variant, f.size): f for f in (run_predictions(data) if bench in SHAPES else ())
            if f.bench == bench and f.np == np_}
    out = []
    for first, last, inside, params, ra, rb in plan:
        cell_judged = next(judged)
        parameters = tuple(Parameter(name, va, vb, next(judged)) for name, va, vb, _ in params)
        figures = tuple((figure(data.cells[k][a]), figure(data.cells[k][b])) for k in inside)
        out.append(Range(first, last, inside, figures, cell_judged, parameters,
                         _per_byte_share(ra, rb, last),
                         ra is ma.regimes[0] and rb is mb.regimes[0],
                         tuple(fits[a, k.size] for k in inside if (a, k.size) in fits),
                         tuple(fits[b, k.size] for k in inside if (b, k.size) in fits)))
    return Explanation(data.run_id, a, b, bench, np_, tuple(out),
                       tuple(r for r in ma.regimes if r.opened_by),
                       tuple(r for r in mb.regimes if r.opened_by),
                       tuple(Parameter(name, va, vb, next(judged), size)
                             for name, size, va, vb, _ in overheads),
                       tuple(t for t in latency_terms(data, models) if t.variant in (a, b)))


def _loggp_pairs(data: RunData, a: str, b: str) -> list[tuple[str, int, float, float, Pair]]:
    """LogGP's o_s, o_r and g(s) of both variants at the smallest and largest size both
    measured with the loggp benchmark (none when either did not run it)."""
    models = loggp(data)
    if a not in models or b not in models:
        return []
    pa = {p.size: p for p in models[a].points}
    pb = {p.size: p for p in models[b].points}
    common = sorted(set(pa) & set(pb))
    out = []
    for size in sorted({common[0], common[-1]} if common else set()):
        for name in ("o_s", "o_r", "g"):
            fa, fb = getattr(pa[size], name), getattr(pb[size], name)
            if fa.per_launch and fb.per_launch and min(*fa.per_launch, *fb.per_launch) > 0:
                out.append((name, size, fa.value, fb.value, Pair(fa.sample, fb.sample)))
    return out


def _range_sample(data: RunData, keys: Sequence[Cell], variant: str) -> Sample:
    """Per launch that measured every cell of `keys`: the geometric mean of its medians."""
    by_launch: dict[int, list[float]] = {}
    for key in keys:
        group = data.cells[key][variant]
        ids = sorted(set(group.launches)) if len(group.launches) == len(group.values) else [0]
        for launch, values in zip(ids, group.nested, strict=True):
            by_launch.setdefault(launch, []).append(float(np.median(values)))
    return [np.array([math.exp(sum(math.log(v) for v in vs) / len(vs))])
            for vs in by_launch.values() if len(vs) == len(keys) and min(vs) > 0]


def _per_byte_share(ra: Regime, rb: Regime, size: int) -> float:
    """How much of the difference of the two lines at `size` the cost per byte makes."""
    d_alpha, d_beta = rb.alpha.value - ra.alpha.value, (rb.beta.value - ra.beta.value) * size
    total = abs(d_alpha) + abs(d_beta)
    return abs(d_beta) / total if total > 0 else float("nan")
