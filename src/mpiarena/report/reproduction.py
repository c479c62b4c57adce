"""A study's published figures beside the measured ones, and its conclusions checked.

Measured figures are medians (or means, where the study reported means) of the cells of the
runs a reproduction made. A conclusion holds when every measured implementation standing for
the library it names bears it out by more than the noise margin (5% unless the claim says
otherwise), does not hold when none does, and holds partly in between; it cannot be tested
when the study's program, hardware or library is gone, or when nothing was measured for it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import product

import numpy as np

from ..analysis import derived, protocol_switches
from ..benchmarks import BENCHMARKS
from ..cluster.spec import parse
from ..profile import ProfileRun
from ..results import Group, RunData
from ..sizes import format_size, parse_size
from ..studies import Claim, Figure, Quantity, Study
from . import units
from .apps import call_times

MARGIN = 1.05  # a difference under 5% is noise on this machine
TBF_SLACK = 1.04  # tbf lets 64 KiB messages through 1.5-4% over its rate (measured)
TRUSTED_FROM = 1 << 20  # on an emulated link, the smallest size a peak may come from
SCALE = {"s": 1.0, "ms": 1e3, "us": 1e6, "Mbit/s": 8e-6, "MB": 1e-6, "%": 1.0, "x": 1.0}
HOLDS, FAILS, PARTLY, CANNOT = "holds", "does not hold", "partly", "cannot test"
Measured = RunData | ProfileRun  # what an experiment gave: a run, or a profiled program


@dataclass
class FigureRow:
    what: str
    source: str
    library: str  # as the study ran it
    published: str
    measured: list[tuple[str, str]]  # (variant, value) of each measured stand-in
    note: str = ""


@dataclass
class ClaimRow:
    text: str
    source: str
    status: str
    detail: str


@dataclass
class Evaluation:
    study: Study
    figures: list[FigureRow] = field(default_factory=list)
    claims: list[ClaimRow] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(c.status == status for c in self.claims)


# --- measured quantities --------------------------------------------------------------------


def _variants(data: Measured, selectors: Iterable[str]) -> list[str]:
    """Variants of the run standing for a library: `lam` (each LAM as it is), `lam:tcp`."""
    family = {i["impl_id"]: i["family"] for i in data.implementations}
    out = []
    for sel in selectors:
        fam, _, name = sel.partition(":")
        for v in data.variants:
            impl, _, vname = v.partition(":")
            if family.get(impl) == fam and vname == name and v not in out:
                out.append(v)
    return out


def _cell(data: RunData, q: Quantity, variant: str, size: int | None) -> Group | None:
    bench = BENCHMARKS[q.bench]
    nps = [n for (b, _, n), cell in data.cells.items() if b == q.bench and variant in cell]
    if not nps:
        return None
    np_ = q.np or (2 if bench.pair else max(nps))
    sizes = [s for (b, s, n) in data.cells if b == q.bench and n == np_]
    if not sizes:
        return None
    size = size if size is not None else (q.size if q.size is not None else max(sizes))
    group = data.cells.get((q.bench, size, np_), {}).get(variant)
    return group if group is not None and group.status == "ok" and group.values else None


def value(data: Measured, q: Quantity, variant: str, size: int | None = None,
          np_: int | None = None) -> float | None:
    """The quantity for one variant, in SI units (s, B/s, B, %), or None if not measured."""
    if isinstance(data, ProfileRun):
        return data.seconds.get(variant, {}).get(q.call) if q.kind == "profile" else None
    if q.kind == "profile":
        return None
    if q.kind in ("latency", "peak", "peak_size"):
        d = derived(data, q.bench, 2).get(variant)
        if d is None:
            return None
        if q.kind == "latency":
            return d.first_latency
        return _peak(d.throughput, link_mbps(data), q.kind == "peak_size")
    group = _cell(data, q if np_ is None else Quantity(**{**q.__dict__, "np": np_}), variant,
                  size)
    if group is None:
        return None
    x = group.array
    if q.kind == "median":
        return float(np.median(x))
    if q.kind == "mean":
        return float(np.mean(x))
    if q.kind == "call":
        return call_times(group).get(q.call)
    cpu = [np.nanmean(e["cpu"]) for e in group.extras if "cpu" in e]  # cpu_during
    return 100 * float(np.median(cpu)) if cpu else None


def link_mbps(data: RunData) -> float | None:
    """The emulated link's rate in Mbit/s, None on other topologies."""
    label = str(data.settings.get("topology", ""))
    if not label.startswith("emulated:"):
        return None
    return parse(label).rate_bits * 1e-6


def _peak(throughput: dict[int, float], link: float | None, where: bool) -> float | None:
    """Peak bandwidth in B/s (or the size it is reached at). On an emulated link only sizes
    from TRUSTED_FROM count, and none over the link's rate: tbf's 4 KiB bucket lets part of a
    smaller message through at host speed (32 KiB ping-pongs read 104 Mbit/s on 100 Mbit/s,
    64 KiB ones 99 where TCP can carry 94), which no real link of that rate would carry."""
    kept = {s: mbps for s, mbps in throughput.items()
            if link is None or (s >= TRUSTED_FROM and mbps <= link * TBF_SLACK)}
    if not kept:
        return None
    size = max(kept, key=lambda s: kept[s])
    return float(size) if where else kept[size] / 8e-6


def _spread(data: RunData, q: Quantity, variant: str) -> float | None:
    group = _cell(data, q, variant, None)
    return float(np.std(group.array, ddof=1)) if group is not None and len(group.values) > 1 \
        else None


# --- figures --------------------------------------------------------------------------------


def _show(v: float | None, unit: str, spread: float | None = None) -> str:
    if v is None or not math.isfinite(v):
        return "-"
    text = f"{v:.3g}"
    if spread is not None:
        text += f" ± {spread:.2g}"
    return f"{text} {unit}" if unit != "x" else f"{text}x"


def _figure_rows(fig: Figure, runs: dict[str, Measured], study: Study) -> list[FigureRow]:
    if fig.quantity is None:
        return [FigureRow(fig.what, fig.source, study.libraries[lib].name,
                          _show(pub, fig.unit, spread), [("", f"cannot be measured: {fig.why}")],
                          fig.note) for lib, (pub, spread) in fig.published.items()]
    data = runs.get(fig.quantity.experiment)
    scale = SCALE[fig.unit]
    ref_key = fig.relative_to or fig.minus
    ref = None
    if data is not None and ref_key:
        ref_variants = _variants(data, study.libraries[ref_key].measured)
        ref = value(data, fig.quantity, ref_variants[0]) if ref_variants else None
    rows = []
    for lib, (pub, pub_spread) in fig.published.items():
        library = study.libraries[lib]
        if fig.relative_to:
            published = _show(pub / fig.published[fig.relative_to][0], "x")
        else:
            published = _show(pub, fig.unit, pub_spread)
        measured = []
        for v in _variants(data, library.measured) if data is not None else []:
            x = value(data, fig.quantity, v)
            if x is None:
                measured.append((v, "not measured"))
            elif fig.relative_to:
                measured.append((v, _show(x / ref, "x") if ref else "-"))
            elif fig.minus:
                measured.append((v, _show((x - ref) * scale, fig.unit) if ref is not None
                                 else "-"))
            else:
                spread = (_spread(data, fig.quantity, v)
                          if pub_spread is not None and isinstance(data, RunData) else None)
                measured.append((v, _show(x * scale, fig.unit,
                                          spread * scale if spread is not None else None)))
        if not measured:
            why = library.note or "no implementation standing for it was measured"
            measured.append(("", f"not measured: {why}"))
        name = f"{library.name} minus {study.libraries[fig.minus].name}" if fig.minus \
            else library.name
        rows.append(FigureRow(fig.what, fig.source, name, published, measured, fig.note))
    return rows


# --- conclusions ----------------------------------------------------------------------------


def _subject(text: str, q: Quantity) -> tuple[str, str]:
    """'lam@mtu1000' -> (library, experiment); 'lam' -> (library, the quantity's)."""
    lib, _, exp = text.partition("@")
    return lib, exp or q.experiment


def _values(study: Study, runs: dict[str, Measured], subject: str, q: Quantity,
            size: int | None = None) -> dict[str, float]:
    lib, exp = _subject(subject, q)
    data = runs.get(exp)
    if data is None:
        return {}
    out = {}
    for v in _variants(data, study.libraries[lib].measured):
        x = value(data, q, v, size)
        if x is not None and math.isfinite(x):
            out[f"{v}@{exp}" if "@" in subject else v] = x
    return out


def _gain(better: float, worse: float, higher: bool) -> float:
    """How many times better `better` is than `worse` (above 1: it is better)."""
    if higher:
        return better / worse if worse > 0 else math.inf
    return worse / better if better > 0 else math.inf


def _verdict(oks: list[bool]) -> str:
    return HOLDS if all(oks) else FAILS if not any(oks) else PARTLY


def _shown(v: float, q: Quantity) -> str:
    """A measured quantity in its natural unit."""
    if q.kind == "peak_size":
        return format_size(int(v))
    if q.kind == "peak":
        return units.bandwidth(v)
    if q.kind == "profile":
        return units.seconds(v)
    unit = BENCHMARKS[q.bench].unit
    if unit == "%" or q.kind == "cpu_during":
        return f"{v:.3g}%"
    return f"{v / 1e6:.3g} MB" if unit == "B" else units.seconds(v)


def _listing(values: dict[str, float], q: Quantity) -> str:
    return ", ".join(f"{k} {_shown(v, q)}" for k, v in values.items())


def _missing(study: Study, runs: dict[str, Measured], skipped: dict[str, str],
             subjects: list[str], q: Quantity) -> str:
    for s in subjects:
        lib, exp = _subject(s, q)
        if exp in skipped:
            return f"experiment {exp} did not run: {skipped[exp]}"
        if exp not in runs:
            return f"experiment {exp} did not run"
        if not _values(study, runs, s, q):
            library = study.libraries[lib]
            return (f"nothing measured for {library.name}"
                    + (f" ({library.note})" if library.note else ""))
    return "nothing measured"


@dataclass(frozen=True)
class _Case:
    """A claim with what was measured for each library it names."""

    claim: Claim
    q: Quantity
    subjects: list[str]
    vals: dict[str, dict[str, float]]  # subject (or a, b) -> variant -> value

    @property
    def p(self) -> dict:
        return self.claim.params

    @property
    def margin(self) -> float:
        return float(self.p.get("factor", MARGIN))

    def pooled(self) -> dict[str, float]:
        return {k: v for s in self.subjects for k, v in self.vals[s].items()}


def _best(c: _Case) -> tuple[str, str]:
    higher = c.q.higher_is_better
    expect = str(c.p["expect"])
    rivals = [v for s in c.subjects if s != expect for v in c.vals[s].values()]
    oks = [_gain(e, r, higher) >= c.margin for e, r in product(c.vals[expect].values(), rivals)]
    ranked = dict(sorted(c.pooled().items(), key=lambda kv: -kv[1] if higher else kv[1]))
    return _verdict(oks), f"{'highest' if higher else 'lowest'} first: {_listing(ranked, c.q)}"


def _better(c: _Case) -> tuple[str, str]:
    a, b = c.vals["a"], c.vals["b"]
    pairs = ([(a[v], b[v]) for v in a if v in b] if c.subjects[0] == c.subjects[1]
             else list(product(a.values(), b.values())))  # same library: same variants
    if not pairs:
        return CANNOT, "no variant measured at both sizes"
    gains = [_gain(x, y, c.q.higher_is_better) for x, y in pairs]
    published = (f" (published {float(c.p['published_ratio']):.3g}x)"
                 if "published_ratio" in c.p else "")
    at = {k: f" at {c.p[f'{k}_size']} B" if c.p.get(f"{k}_size") is not None else ""
          for k in "ab"}
    listed = {f"{v}{at[k]}": x for k in "ab" for v, x in c.vals[k].items()}
    return (_verdict([g >= c.margin for g in gains]),
            f"{c.subjects[0]}{at['a']} better than {c.subjects[1]}{at['b']} by "
            f"{_range(gains)}{published}; needs {c.margin:.3g}x: {_listing(listed, c.q)}")


def _similar(c: _Case) -> tuple[str, str]:
    within = float(c.p.get("within", MARGIN - 1))
    flat = c.pooled()
    spread = max(flat.values()) / min(flat.values()) if min(flat.values()) > 0 else math.inf
    return (HOLDS if spread <= 1 + within else FAILS,
            f"largest over smallest {spread:.3g}x (within {1 + within:.3g}x counts as the "
            f"same): {_listing(flat, c.q)}")


def _peak_within(c: _Case, runs: dict[str, Measured]) -> tuple[str, str]:
    low, high = _size(c.p["low"]), _size(c.p["high"])
    assert low is not None and high is not None
    emulated = any(isinstance(d := runs[_subject(s, c.q)[1]], RunData) and link_mbps(d)
                   for s in c.subjects)
    if emulated and low < TRUSTED_FROM:
        return CANNOT, (f"on an emulated link sizes under {format_size(TRUSTED_FROM)} pass "
                        "partly through tbf's bucket at host speed, so where the throughput "
                        "peaks below that is not the link's; rerun with --hosts on a real "
                        "network")
    flat = c.pooled()
    return (_verdict([low <= v <= high for v in flat.values()]),
            f"throughput peaks at: {_listing(flat, c.q)}")


def _bound(c: _Case) -> tuple[str, str]:
    bound, most = float(c.p["value"]), c.claim.check == "at_most"
    flat = c.vals[c.subjects[0]]
    oks = [(v <= bound) if most else (v >= bound) for v in flat.values()]
    return _verdict(oks), f"needs {'<=' if most else '>='} {bound:g}: {_listing(flat, c.q)}"


def check(claim: Claim, study: Study, runs: dict[str, Measured],
          skipped: dict[str, str]) -> ClaimRow:
    """One conclusion against the measurements."""
    p, q = claim.params, claim.quantity
    if claim.check == "cannot" or q is None:
        return ClaimRow(claim.text, claim.source, CANNOT, str(p.get("why", "")))
    if claim.check in ("best", "similar", "peak_within", "flat"):
        subjects = [str(x) for x in p.get("among", [])]
    elif claim.check == "better":
        subjects = [str(p["a"]), str(p["b"])]
    else:
        subjects = [str(p["lib"])]
    if claim.check == "better":
        vals = {k: _values(study, runs, s, q, _size(p.get(f"{k}_size")))
                for k, s in zip("ab", subjects, strict=True)}
    else:
        vals = {s: _values(study, runs, s, q) for s in subjects}
    if not all(vals.values()):
        return ClaimRow(claim.text, claim.source, CANNOT,
                        _missing(study, runs, skipped, subjects, q))
    case = _Case(claim, q, subjects, vals)
    missing = _unmeasured(study, runs, subjects, q, vals)
    checks = {"best": _best, "better": _better, "similar": _similar, "at_most": _bound,
              "at_least": _bound,
              "peak_within": lambda c: _peak_within(c, runs),
              "flat": lambda c: _flat(c, study, runs),
              "switch": lambda c: _switch(c, study, runs)}
    status, detail = checks[claim.check](case)
    if missing:
        detail += f"; not measured (failed or n/a): {', '.join(missing)}"
    return ClaimRow(claim.text, claim.source, status, detail)


def _unmeasured(study: Study, runs: dict[str, Measured], subjects: list[str], q: Quantity,
                vals: dict[str, dict[str, float]]) -> list[str]:
    """Variants standing for a library of the claim that gave no figure."""
    seen = {k for v in vals.values() for k in v}
    out = []
    for s in subjects:
        lib, exp = _subject(s, q)
        if (data := runs.get(exp)) is not None:
            keys = (f"{v}@{exp}" if "@" in s else v
                    for v in _variants(data, study.libraries[lib].measured))
            out += [k for k in keys if k not in seen and k not in out]
    return out


def _size(text: object) -> int | None:
    return parse_size(str(text)) if text is not None else None


def _range(xs: list[float]) -> str:
    lo, hi = min(xs), max(xs)
    return f"{lo:.3g}x" if math.isclose(lo, hi, rel_tol=0.005) else f"{lo:.3g}-{hi:.3g}x"


def _flat(c: _Case, study: Study, runs: dict[str, Measured]) -> tuple[str, str]:
    within = float(c.p.get("within", 0.25))
    data = runs[c.q.experiment]
    growth, parts = [], []
    for s in c.subjects:
        for v in _variants(data, study.libraries[s].measured):
            nps = sorted({n for (b, _, n), cell in data.cells.items()
                          if b == c.q.bench and v in cell})
            pts = [(n, value(data, c.q, v, np_=n)) for n in nps]
            pts = [(n, x) for n, x in pts if x is not None and x > 0]
            if len(pts) < 2:
                continue
            growth.append(pts[-1][1] / pts[0][1])
            parts.append(f"{v} " + ", ".join(f"{n}: {units.seconds(x)}" for n, x in pts))
    if not growth:
        return CANNOT, "fewer than two rank counts measured"
    return (_verdict([g <= 1 + within for g in growth]),
            f"most ranks over fewest {_range(growth)} (within {1 + within:.3g}x counts as "
            f"flat): {'; '.join(parts)}")


def _switch(c: _Case, study: Study, runs: dict[str, Measured]) -> tuple[str, str]:
    low, high = _size(c.p["low"]), _size(c.p["high"])
    assert low is not None and high is not None
    data = runs[c.q.experiment]
    found = protocol_switches(data, c.q.bench, 2)
    oks, parts = [], []
    for v in _variants(data, study.libraries[c.subjects[0]].measured):
        sw = found.get(v, [])
        oks.append(any(x.last_before <= high and x.size >= low for x in sw))
        where = ", ".join(f"{format_size(x.last_before)}-{format_size(x.size)} ({x.kind})"
                          for x in sw) or "none found"
        parts.append(f"{v}: {where}")
    caveat = (" (on an emulated link tbf's 4 KiB bucket bends every curve too)"
              if link_mbps(data) else "")
    return (_verdict(oks), f"expected between {format_size(low)} and {format_size(high)}; "
            f"switches found{caveat}: {'; '.join(parts)}")


def evaluate(study: Study, runs: dict[str, Measured], skipped: dict[str, str]) -> Evaluation:
    out = Evaluation(study)
    for fig in study.figures:
        out.figures += _figure_rows(fig, runs, study)
    out.claims = [check(c, study, runs, skipped) for c in study.claims]
    return out
