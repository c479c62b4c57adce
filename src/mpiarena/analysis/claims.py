"""The conclusions of a study checked against what was measured.

A conclusion holds when every measured implementation standing for the library it names bears
it out: by more than the noise margin (5% unless the claim says otherwise), or, where the study
states a magnitude (1.40x, about 10%, up to 4x), within the range the study file gives and
justifies. It does not hold when none does, and holds partly in between; a conclusion of
several parts holds when every part does. It cannot be tested when the study's program,
hardware or library is gone, or when nothing was measured for it.

Where a conclusion compares the median or mean figures of cells measured in at least
stats.MIN_LAUNCHES launches a side (better, best, order), each comparison is decided by the
verdicts' interval: Moses' 95% interval over launches of the ratio of the cells' figures
(medians of launch medians, also where the study stated means). It bears the conclusion out when
the whole interval lies within what the conclusion needs, contradicts it when the whole interval
lies outside, and is undecided otherwise; a conclusion with undecided comparisons and no
contradicted ones (or no backed ones) is undecided, and says how many launches its comparisons
had. A claim's range is its own (a stated magnitude, or the margin), so claims are not a family
of the verdicts' corrected test: each interval speaks for its comparison alone.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise, product
from typing import Any

import numpy as np

from ..base import units
from ..base.records import impl_of
from ..base.sizes import format_size, parse_size
from ..model.benchmarks import BENCHMARKS
from ..store.results import RunData
from ..studies import Claim, ClaimCheck, Quantity, QuantityKind, Study
from .curves import Jump, Switch, protocol_switches
from .quantities import (
    MARGIN,
    Measured,
    link_of,
    sample_of,
    samples_of,
    sizes_of,
    subject_of,
    throughput,
    trusted_from,
    value,
    values_of,
    variants_of,
)
from .stats import MIN_LAUNCHES, Sample, center, center_ci, center_coverage, ratio_ci
from .verdicts import ClaimResult

# fewer than MIN_LAUNCHES launches a side give no interval: the point figures decide, as the
# study did
Backed = bool | None  # a comparison backed, contradicted, or undecided by the launches


@dataclass
class ClaimRow:
    text: str
    source: str
    result: ClaimResult
    detail: str


def _gain(better: float, worse: float, higher: bool) -> float:
    """How many times better `better` is than `worse` (above 1: it is better)."""
    if higher:
        return better / worse if worse > 0 else math.inf
    return worse / better if better > 0 else math.inf


def _verdict(oks: Sequence[Backed]) -> ClaimResult:
    if all(o is True for o in oks):
        return ClaimResult.HOLDS
    if all(o is False for o in oks):
        return ClaimResult.FAILS
    return ClaimResult.PARTLY if True in oks and False in oks else ClaimResult.UNDECIDED


def _launch_interval(c: _Case, better: Sample | None, worse: Sample | None
                     ) -> tuple[float, float] | None:
    """The 95% interval over launches of how many times `better` beats `worse`, or None with
    fewer than MIN_LAUNCHES launches on a side (or a quantity that is not a cell's figure)."""
    if better is None or worse is None or min(len(better), len(worse)) < MIN_LAUNCHES:
        return None
    if c.q.higher_is_better:
        _, lo, hi = ratio_ci(worse, better)
    else:
        _, lo, hi = ratio_ci(better, worse)
    return lo, hi


def _judge(point_ok: bool, interval: tuple[float, float] | None, need: tuple[float, float]
           ) -> Backed:
    """A comparison by its launch interval against the range it needs; by its point figures
    where there is no interval."""
    if interval is None:
        return point_ok
    (lo, hi), (low, high) = interval, need
    if low <= lo and hi <= high:
        return True
    return False if hi < low or lo > high else None


def _intervals_text(intervals: list[tuple[str, tuple[float, float] | None]]) -> str:
    shown = [f"{who} {lo:.3g}-{hi:.3g}x" for who, i in intervals if i is not None
             for lo, hi in [i]]
    return f"; 95% CI over launches: {', '.join(shown)}" if shown else ""


def _shown(v: float, q: Quantity) -> str:
    """A measured quantity in its natural unit."""
    if q.kind in (QuantityKind.PEAK, QuantityKind.ASYMPTOTE):
        return units.bandwidth(v)
    if q.kind == QuantityKind.PROFILE:
        return units.seconds(v)
    unit = BENCHMARKS[q.bench].unit
    if unit == "%" or q.kind == QuantityKind.CPU_DURING:
        return f"{v:.3g}%"
    return f"{v / 1e6:.3g} MB" if unit == "B" else units.seconds(v)


def _listing(values: dict[str, float], q: Quantity) -> str:
    return ", ".join(f"{k} {_shown(v, q)}" for k, v in values.items())


def _ranked(values: dict[str, float], q: Quantity) -> str:
    higher = q.higher_is_better
    ranked = dict(sorted(values.items(), key=lambda kv: -kv[1] if higher else kv[1]))
    return f"{'highest' if higher else 'lowest'} first: {_listing(ranked, q)}"


def _missing(study: Study, runs: dict[str, Measured], skipped: dict[str, str],
             subjects: list[str], q: Quantity) -> str:
    for s in subjects:
        impl, exp = subject_of(s, q)
        if exp in skipped:
            return f"experiment {exp} did not run: {skipped[exp]}"
        if exp not in runs:
            return f"experiment {exp} did not run"
        if not values_of(study, runs, s, q):
            library = study.libraries[impl]
            return (f"nothing measured for {library.name}"
                    + (f" ({library.note})" if library.note else ""))
    return "nothing measured"


def _impl(variant: str) -> str:
    """The implementation a variant belongs to: 'impi-2021.19.0:wait@exp' -> 'impi-2021.19.0'."""
    return impl_of(variant.split("@")[0])


@dataclass(frozen=True)
class _Case:
    """A claim with what was measured for each library it names."""

    claim: Claim
    q: Quantity
    subjects: list[str]
    vals: dict[str, dict[str, float]]  # subject (or a, b) -> variant -> value
    study: Study
    runs: dict[str, Measured]
    samples: dict[str, dict[str, Sample]]  # as vals: each launch's observations (cells only)

    @property
    def p(self) -> dict[str, Any]:
        return self.claim.params

    @property
    def margin(self) -> float:
        return float(self.p.get("factor", MARGIN))

    def pooled(self) -> dict[str, float]:
        return {k: v for s in self.subjects for k, v in self.vals[s].items()}

    def at(self, subject: str, size: int | None) -> dict[str, float]:
        """What each variant of the library measured at another size."""
        return values_of(self.study, self.runs, subject, self.q, size)

    def samples_at(self, subject: str, size: int | None) -> dict[str, Sample]:
        return samples_of(self.study, self.runs, subject, self.q, size)

    def sizes(self) -> list[int | None]:
        """The sizes the claim speaks of: its `sizes` list, "all" measured, or the quantity's
        own (None)."""
        wanted = self.p.get("sizes")
        if wanted == "all":
            return list(sizes_of(self.runs[self.q.experiment], self.q))
        return [_size(s) for s in wanted] if wanted else [None]

    def pairs(self, a: dict[str, float], b: dict[str, float]) -> list[tuple[str, str]]:
        """Which variants of a and b are compared: the same variant (one library at two sizes),
        the same implementation in two modes (`paired`), or every variant of one with every
        variant of the other."""
        if self.subjects[0] == self.subjects[1]:
            return [(v, v) for v in a if v in b]
        if self.p.get("paired"):
            return [(x, y) for x, y in product(a, b) if _impl(x) == _impl(y)]
        return list(product(a, b))


def _at(c: _Case, size: int | None) -> str:
    return f"at {BENCHMARKS[c.q.bench].size_text(size)}: " if size is not None else ""


def _best(c: _Case) -> tuple[ClaimResult, str]:
    """The expected library beats every rival, at each size the claim names."""
    expect = str(c.p["expect"])
    oks, parts = [], []
    for size in c.sizes():
        vals = {s: c.at(s, size) for s in c.subjects}
        if not vals[expect]:
            parts.append(f"{_at(c, size)}not measured")
            continue
        samples = {v: x for s in c.subjects for v, x in c.samples_at(s, size).items()}
        rivals = {v: x for s in c.subjects if s != expect for v, x in vals[s].items()}
        lost, intervals = [], []
        for e, x in vals[expect].items():
            judged = {}
            for r, y in rivals.items():
                interval = _launch_interval(c, samples.get(e), samples.get(r))
                judged[r] = _judge(_gain(x, y, c.q.higher_is_better) >= c.margin, interval,
                                   (c.margin, math.inf))
                intervals.append((f"{e} over {r}", interval))
            oks.append(False if False in judged.values() else
                       None if None in judged.values() else True)
            if beaten := [r for r, j in judged.items() if j is False]:
                lost.append(f"{e} does not beat {', '.join(beaten)} by {c.margin:.3g}x")
            if open_ := [r for r, j in judged.items() if j is None]:
                lost.append(f"{e} against {', '.join(open_)}: undecided over launches")
        pooled = {v: x for s in c.subjects for v, x in vals[s].items()}
        parts.append(_at(c, size) + _ranked(pooled, c.q) + "".join(f"; {x}" for x in lost)
                     + _intervals_text(intervals))
    return (_verdict(oks) if oks else ClaimResult.CANNOT), "; ".join(parts)


def _order(c: _Case) -> tuple[ClaimResult, str]:
    """Each library beats the next in the stated order (every variant of one against every
    variant of the next); the order holds partly when some of its steps do."""
    oks: list[Backed] = []
    steps = []
    for a, b in pairwise(c.subjects):
        pairs = list(product(c.vals[a], c.vals[b]))
        gains = [_gain(c.vals[a][x], c.vals[b][y], c.q.higher_is_better) for x, y in pairs]
        intervals = [(f"{x} over {y}", _launch_interval(c, c.samples[a].get(x),
                                                         c.samples[b].get(y))) for x, y in pairs]
        judged = [_judge(g >= c.margin, i, (c.margin, math.inf))
                  for g, (_, i) in zip(gains, intervals, strict=True)]
        ok = _verdict(judged)
        oks.append(True if ok == ClaimResult.HOLDS else None if ok == ClaimResult.UNDECIDED
                   else False)
        said = {ClaimResult.HOLDS: "yes",
                ClaimResult.UNDECIDED: "undecided over launches"}.get(ok, "no")
        steps.append(f"{a} before {b} by {_range(gains)}: {said}{_intervals_text(intervals)}")
    return _verdict(oks), f"{'; '.join(steps)} (needs {c.margin:.3g}x); {_ranked(c.pooled(), c.q)}"


def _needs(c: _Case) -> tuple[tuple[float, float], str]:
    """What a gain must be: within the stated magnitude's accepted range, or at least the
    margin."""
    if "accept" in c.p:
        lo, hi = (float(x) for x in c.p["accept"])
        why = f" ({c.p['accept_why']})" if "accept_why" in c.p else ""
        return (lo, hi), f"needs {lo:.3g}-{hi:.3g}x{why}"
    return (c.margin, math.inf), f"needs {c.margin:.3g}x"


def _better(c: _Case) -> tuple[ClaimResult, str]:
    a, b = c.vals["a"], c.vals["b"]
    pairs = c.pairs(a, b)
    if not pairs:
        return ClaimResult.CANNOT, "no variant measured on both sides"
    gains = [_gain(a[x], b[y], c.q.higher_is_better) for x, y in pairs]
    (low, high), needs = _needs(c)
    intervals = [(f"{x} over {y}", _launch_interval(c, c.samples["a"].get(x),
                                                     c.samples["b"].get(y))) for x, y in pairs]
    judged = [_judge(low <= g <= high, i, (low, high))
              for g, (_, i) in zip(gains, intervals, strict=True)]
    published = (f" (published {float(c.p['published_ratio']):.3g}x)"
                 if "published_ratio" in c.p else "")
    at = {k: f" at {c.p[f'{k}_size']} B" if c.p.get(f"{k}_size") is not None else ""
          for k in "ab"}
    listed = {f"{v}{at[k]}": x for k in "ab" for v, x in c.vals[k].items()}
    return (_verdict(judged),
            f"{c.subjects[0]}{at['a']} better than {c.subjects[1]}{at['b']} by "
            f"{_range(gains)}{published}; {needs}: {_listing(listed, c.q)}"
            f"{_intervals_text(intervals)}")


def _grows(c: _Case) -> tuple[ClaimResult, str]:
    """a is better than b by the margin at the largest size, and its lead grows with size
    (largest over smallest by the margin too)."""
    sizes = sizes_of(c.runs[c.q.experiment], c.q)
    if len(sizes) < 2:
        return ClaimResult.CANNOT, "fewer than two sizes measured"
    a = {s: c.at(c.subjects[0], s) for s in sizes}
    b = {s: c.at(c.subjects[1], s) for s in sizes}
    oks, parts = [], []
    for x, y in c.pairs(a[sizes[-1]], b[sizes[-1]]):
        gains = [(s, _gain(a[s][x], b[s][y], c.q.higher_is_better)) for s in sizes
                 if x in a[s] and y in b[s]]
        first, last = gains[0][1], gains[-1][1]
        oks.append(len(gains) > 1 and last >= c.margin and last >= first * c.margin)
        parts.append(f"{x} over {y}: " + ", ".join(
            f"{BENCHMARKS[c.q.bench].size_text(s)}: {g:.3g}x" for s, g in gains))
    if not oks:
        return ClaimResult.CANNOT, "no variant measured on both sides"
    return _verdict(oks), (f"{c.subjects[0]}'s lead over {c.subjects[1]} by size (needs "
                           f"{c.margin:.3g}x at the largest and growing by {c.margin:.3g}x): "
                           f"{'; '.join(parts)}")


def _spread(values: dict[str, float]) -> float:
    return max(values.values()) / min(values.values()) if min(values.values()) > 0 \
        else math.inf


def _similar(c: _Case) -> tuple[ClaimResult, str]:
    """Within `within` of each other: the libraries at each size, each implementation's modes
    (`paired`), or each variant across the sizes (`across_sizes`)."""
    within = float(c.p.get("within", MARGIN - 1))
    groups: dict[str, dict[str, float]] = {}
    samples: dict[str, dict[str, Sample]] = {}  # as groups
    for size in c.sizes():
        at = BENCHMARKS[c.q.bench].size_text(size) if size is not None else ""
        for s in c.subjects:
            measured = c.samples_at(s, size)
            for v, x in c.at(s, size).items():
                if c.p.get("across_sizes"):
                    key, member = v, at
                else:
                    key = " ".join(filter(None, [f"at {at}" if at else "",
                                                 _impl(v) if c.p.get("paired") else ""]))
                    member = v
                groups.setdefault(key, {})[member] = x
                if v in measured:
                    samples.setdefault(key, {})[member] = measured[v]
    groups = {k: g for k, g in groups.items() if len(g) > 1}
    if not groups:
        return ClaimResult.CANNOT, "nothing to compare: fewer than two figures measured"
    spreads = {k: _spread(g) for k, g in groups.items()}
    intervals = []  # the largest figure over the smallest, over launches
    for k, g in groups.items():
        low, high = sorted(g, key=g.__getitem__)[::len(g) - 1]
        lowest, highest = samples.get(k, {}).get(low), samples.get(k, {}).get(high)
        better, worse = (highest, lowest) if c.q.higher_is_better else (lowest, highest)
        intervals.append((k or f"{high} over {low}", _launch_interval(c, better, worse)))
    judged = [_judge(x <= 1 + within, i, (0.0, 1 + within))
              for x, (_, i) in zip(spreads.values(), intervals, strict=True)]
    return (_verdict(judged),
            f"largest over smallest (within {1 + within:.3g}x counts as the same): "
            + "; ".join(f"{k + ': ' if k else ''}{spreads[k]:.3g}x ({_listing(g, c.q)})"
                        for k, g in groups.items()) + _intervals_text(intervals))


def _curves(c: _Case) -> tuple[dict[str, dict[int, float]], str]:
    """Each variant's NetPIPE throughput per size the link cannot flatter, and a note of the
    floor on an emulated link."""
    curves, floor = {}, 0
    for s in c.subjects:
        impl, exp = subject_of(s, c.q)
        data = c.runs.get(exp)
        if isinstance(data, RunData):
            floor = max(floor, trusted_from(link_of(data)))
            for v in variants_of(data, c.study.libraries[impl].measured):
                if thr := throughput(data, v, c.q.bench):
                    curves[v] = thr
    note = (f" (on this emulated link sizes under {format_size(floor)} are left out: its "
            "bucket lets their first bytes through at host speed)" if floor else "")
    return curves, note


def _mbps(x: float) -> str:
    return f"{x:.3g} Mbit/s"


def _peak_within(c: _Case) -> tuple[ClaimResult, str]:
    """Throughput inside [low, high] beats every size outside it by the margin."""
    low, high = _size(c.p["low"]), _size(c.p["high"])
    assert low is not None and high is not None
    curves, note = _curves(c)
    oks, parts = [], []
    for v, thr in curves.items():
        inside = {s: x for s, x in thr.items() if low <= s <= high}
        outside = {s: x for s, x in thr.items() if not low <= s <= high}
        if not inside or not outside:
            parts.append(f"{v}: not measured {'inside' if not inside else 'outside'} the range")
            continue
        best_in = max(inside, key=lambda s: inside[s])
        best_out = max(outside, key=lambda s: outside[s])
        oks.append(inside[best_in] >= c.margin * outside[best_out])
        parts.append(f"{v} {_mbps(inside[best_in])} at {format_size(best_in)}, outside "
                     f"{_mbps(outside[best_out])} at {format_size(best_out)}")
    if not oks:
        return ClaimResult.CANNOT, "; ".join(parts) + note
    return _verdict(oks), (f"best between {format_size(low)} and {format_size(high)} against "
                           f"the best elsewhere (needs {c.margin:.3g}x): {'; '.join(parts)}"
                           f"{note}")


def _reduced(c: _Case) -> tuple[ClaimResult, str]:
    """The largest size's throughput falls below the peak by the margin."""
    curves, note = _curves(c)
    oks, parts = [], []
    for v, thr in curves.items():
        peak, last = max(thr, key=lambda s: thr[s]), max(thr)
        oks.append(thr[peak] >= c.margin * thr[last])
        parts.append(f"{v} {_mbps(thr[last])} at {format_size(last)}, peak "
                     f"{_mbps(thr[peak])} at {format_size(peak)}")
    if not oks:
        return ClaimResult.CANNOT, "no throughput measured" + note
    return _verdict(oks), (f"largest size against the peak (needs {c.margin:.3g}x lower): "
                           f"{'; '.join(parts)}{note}")


def _bound(c: _Case) -> tuple[ClaimResult, str]:
    bound, most = float(c.p["value"]), c.claim.check == ClaimCheck.AT_MOST
    flat = c.vals[c.subjects[0]]
    oks = [(v <= bound) if most else (v >= bound) for v in flat.values()]
    return _verdict(oks), f"needs {'<=' if most else '>='} {bound:g}: {_listing(flat, c.q)}"


def _all(claim: Claim, study: Study, runs: dict[str, Measured],
         skipped: dict[str, str]) -> ClaimRow:
    """Every part of the conclusion: holds when all do, cannot be tested when none can."""
    rows = [check(p, study, runs, skipped) for p in claim.parts]
    tested = [r.result for r in rows if r.result != ClaimResult.CANNOT]
    if not tested:
        result = ClaimResult.CANNOT
    elif len(tested) == len(rows) and all(s == ClaimResult.HOLDS for s in tested):
        result = ClaimResult.HOLDS
    elif all(s == ClaimResult.FAILS for s in tested):
        result = ClaimResult.FAILS
    elif all(s == ClaimResult.UNDECIDED for s in tested):
        result = ClaimResult.UNDECIDED
    else:
        result = ClaimResult.PARTLY
    return ClaimRow(claim.text, claim.source, result,
                    "; ".join(f"{r.text}: {r.result} ({r.detail})" for r in rows))


def check(claim: Claim, study: Study, runs: dict[str, Measured],
          skipped: dict[str, str]) -> ClaimRow:
    """One conclusion against the measurements."""
    p, q = claim.params, claim.quantity
    if claim.parts:
        return _all(claim, study, runs, skipped)
    if claim.check == ClaimCheck.CANNOT or q is None:
        return ClaimRow(claim.text, claim.source, ClaimResult.CANNOT, str(p.get("why", "")))
    if claim.check in (ClaimCheck.BETTER, ClaimCheck.GROWS):
        subjects = [str(p["a"]), str(p["b"])]
    elif claim.check == ClaimCheck.ORDER:
        subjects = [str(x) for x in p["order"]]
    elif "lib" in p:
        subjects = [str(p["lib"])]
    else:
        subjects = [str(x) for x in p.get("among", [])]
    if claim.check in (ClaimCheck.BETTER, ClaimCheck.GROWS):
        at = {k: (s, _size(p.get(f"{k}_size"))) for k, s in zip("ab", subjects, strict=True)}
    else:
        at = {s: (s, None) for s in subjects}
    vals = {k: values_of(study, runs, s, q, size) for k, (s, size) in at.items()}
    samples = {k: samples_of(study, runs, s, q, size) for k, (s, size) in at.items()}
    if not all(vals.values()):
        return ClaimRow(claim.text, claim.source, ClaimResult.CANNOT,
                        _missing(study, runs, skipped, subjects, q))
    case = _Case(claim, q, subjects, vals, study, runs, samples)
    missing = _unmeasured(study, runs, subjects, q, vals)
    result, detail = CHECKED_BY[claim.check](case)
    if missing:
        detail += f"; not measured (failed or n/a): {', '.join(missing)}"
    return ClaimRow(claim.text, claim.source, result, detail)


def _unmeasured(study: Study, runs: dict[str, Measured], subjects: list[str], q: Quantity,
                vals: dict[str, dict[str, float]]) -> list[str]:
    """Variants standing for a library of the claim that gave no figure."""
    seen = {k for v in vals.values() for k in v}
    out = []
    for s in subjects:
        impl, exp = subject_of(s, q)
        if (data := runs.get(exp)) is not None:
            keys = (f"{v}@{exp}" if "@" in s else v
                    for v in variants_of(data, study.libraries[impl].measured))
            out += [k for k in keys if k not in seen and k not in out]
    return out


def _size(text: object) -> int | None:
    return parse_size(str(text)) if text is not None else None


def _range(xs: list[float]) -> str:
    lo, hi = min(xs), max(xs)
    return f"{lo:.3g}x" if math.isclose(lo, hi, rel_tol=0.005) else f"{lo:.3g}-{hi:.3g}x"


def _flat(c: _Case) -> tuple[ClaimResult, str]:
    within = float(c.p.get("within", 0.25))
    data = c.runs[c.q.experiment]
    assert isinstance(data, RunData)
    growth, parts = [], []
    for s in c.subjects:
        for v in variants_of(data, c.study.libraries[s].measured):
            nps = sorted({n for (b, _, n), cell in data.cells.items()
                          if b == c.q.bench and v in cell})
            pts = [(n, x) for n in nps
                   if (x := value(data, c.q, v, np_=n)) is not None and x > 0]
            if len(pts) < 2:
                continue
            growth.append(pts[-1][1] / pts[0][1])
            parts.append(f"{v} " + ", ".join(f"{n}: {units.seconds(x)}" for n, x in pts))
    if not growth:
        return ClaimResult.CANNOT, "fewer than two rank counts measured"
    return (_verdict([g <= 1 + within for g in growth]),
            f"most ranks over fewest {_range(growth)} (within {1 + within:.3g}x counts as "
            f"flat): {'; '.join(parts)}")


def _flat_fit(c: _Case) -> tuple[ClaimResult, str]:
    """Flat, judged on a line t(p) = a + b p fitted over the rank counts: the growth it gives
    from the fewest ranks to the most, fitted again to each launch replicate (the k-th launch
    at every rank count) for a 95% interval of its centre; flat when that interval lies within
    `within` either way, not flat when it lies wholly outside."""
    within = float(c.p.get("within", 0.25))
    data = c.runs[c.q.experiment]
    assert isinstance(data, RunData)
    stat = np.mean if c.q.kind == QuantityKind.MEAN else np.median
    oks: list[Backed] = []
    parts = []
    for s in c.subjects:
        for v in variants_of(data, c.study.libraries[s].measured):
            nps = sorted({n for (b, _, n), cell in data.cells.items()
                          if b == c.q.bench and v in cell})
            per_np = {n: x for n in nps if (x := sample_of(data, replace(c.q, np=n), v))}
            if len(per_np) < 2:
                continue
            ranks = sorted(per_np)
            growth = [_growth(ranks, [float(stat(per_np[n][k])) for n in ranks])
                      for k in range(min(len(x) for x in per_np.values()))]
            sample = [np.array([g]) for g in growth if math.isfinite(g)]
            if not sample:
                continue
            lo, hi = center_ci(sample)
            oks.append(True if 1 / (1 + within) <= lo and hi <= 1 + within else
                       False if lo > 1 + within or hi < 1 / (1 + within) else None)
            cover = min(center_coverage(len(sample)), 0.95)
            parts.append(f"{v} {ranks[0]} to {ranks[-1]} ranks x{center(sample):.3g} "
                         f"({cover:.0%} interval {lo:.3g}-{hi:.3g}, {len(sample)} launch "
                         f"replicates)")
    if not oks:
        return ClaimResult.CANNOT, "fewer than two rank counts measured"
    return (_verdict(oks), f"fitted t = a + b * ranks, most ranks over fewest (within "
                           f"{1 + within:.3g}x either way counts as flat): {'; '.join(parts)}")


def _growth(ranks: list[int], times: list[float]) -> float:
    """t(most ranks) / t(fewest) on the least-squares line through (ranks, times)."""
    b, a = np.polyfit(np.asarray(ranks, dtype=float), np.asarray(times), 1)
    first, last = a + b * ranks[0], a + b * ranks[-1]
    return float(last / first) if first > 0 else math.nan


def _explained(x: Switch, data: RunData) -> bool:
    """A bend the emulated link makes: where messages outgrow its bucket (up to twice its size)
    their cost per byte changes from the host's to the link's own (within -20%/+30%: frame
    headers add 2-6%)."""
    link = link_of(data)
    if link is None or x.kind != Jump.PER_BYTE:
        return False
    per_byte = 8 / link.rate_bits
    return x.last_before <= 2 * link.burst and 0.8 * per_byte <= x.after <= 1.3 * per_byte


def _switch(c: _Case) -> tuple[ClaimResult, str]:
    """A protocol switch whose sizes bracket the stated one (the last size measured before it
    and the first after it), among the bends the link does not explain."""
    at = _size(c.p["at"])
    assert at is not None
    data = c.runs[c.q.experiment]
    assert isinstance(data, RunData)
    found = protocol_switches(data, c.q.bench, 2)
    oks, parts = [], []
    for v in variants_of(data, c.study.libraries[c.subjects[0]].measured):
        sw = found.get(v, [])
        oks.append(any(x.last_before <= at <= x.size and not _explained(x, data) for x in sw))
        link = "; the link's: messages outgrow its bucket"
        where = ", ".join(f"{format_size(x.last_before)}-{format_size(x.size)} ({x.kind}"
                          f"{link if _explained(x, data) else ''})" for x in sw) or "none found"
        parts.append(f"{v}: {where}")
    measured = sizes_of(data, c.q)
    if not any(s < at for s in measured) or not any(s > at for s in measured):
        return ClaimResult.CANNOT, f"no sizes measured on both sides of {format_size(at)}"
    return (_verdict(oks), f"expected at {format_size(at)}, between the sizes measured on its "
            f"two sides; switches found: {'; '.join(parts)}")


# how each check of a measured conclusion is made (all: by its parts; cannot: not measured)
CHECKED_BY: dict[ClaimCheck, Callable[[_Case], tuple[ClaimResult, str]]] = {
    ClaimCheck.BEST: _best, ClaimCheck.ORDER: _order, ClaimCheck.BETTER: _better,
    ClaimCheck.GROWS: _grows, ClaimCheck.SIMILAR: _similar, ClaimCheck.AT_MOST: _bound,
    ClaimCheck.AT_LEAST: _bound, ClaimCheck.PEAK_WITHIN: _peak_within,
    ClaimCheck.REDUCED: _reduced, ClaimCheck.FLAT: _flat, ClaimCheck.FLAT_FIT: _flat_fit,
    ClaimCheck.SWITCH: _switch}
