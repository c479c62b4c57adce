"""The conclusions of a study checked against what was measured.

A conclusion holds when every measured implementation standing for the library it names bears
it out by more than the noise margin (5% unless the claim says otherwise), does not hold when
none does, and holds partly in between; it cannot be tested when the study's program, hardware
or library is gone, or when nothing was measured for it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import product

from ..analysis import protocol_switches
from ..benchmarks import BENCHMARKS
from ..results import RunData
from ..sizes import format_size, parse_size
from ..studies import Claim, Quantity, Study
from . import units
from .quantities import (
    MARGIN,
    Measured,
    link_of,
    subject_of,
    trusted_from,
    value,
    values_of,
    variants_of,
)

HOLDS, FAILS, PARTLY, CANNOT = "holds", "does not hold", "partly", "cannot test"


@dataclass
class ClaimRow:
    text: str
    source: str
    status: str
    detail: str


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
        lib, exp = subject_of(s, q)
        if exp in skipped:
            return f"experiment {exp} did not run: {skipped[exp]}"
        if exp not in runs:
            return f"experiment {exp} did not run"
        if not values_of(study, runs, s, q):
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
    floor = max(trusted_from(link_of(d)) for s in c.subjects
                if isinstance(d := runs[subject_of(s, c.q)[1]], RunData))
    if high < floor:
        return CANNOT, (f"on this emulated link sizes under {format_size(floor)} pass partly "
                        "through tbf's bucket at host speed, so where the throughput peaks "
                        "below that is not the link's; rerun with --hosts on a real network")
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
        vals = {k: values_of(study, runs, s, q, _size(p.get(f"{k}_size")))
                for k, s in zip("ab", subjects, strict=True)}
    else:
        vals = {s: values_of(study, runs, s, q) for s in subjects}
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
        lib, exp = subject_of(s, q)
        if (data := runs.get(exp)) is not None:
            keys = (f"{v}@{exp}" if "@" in s else v
                    for v in variants_of(data, study.libraries[lib].measured))
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
        for v in variants_of(data, study.libraries[s].measured):
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
    for v in variants_of(data, study.libraries[c.subjects[0]].measured):
        sw = found.get(v, [])
        oks.append(any(x.last_before <= high and x.size >= low for x in sw))
        where = ", ".join(f"{format_size(x.last_before)}-{format_size(x.size)} ({x.kind})"
                          for x in sw) or "none found"
        parts.append(f"{v}: {where}")
    caveat = (" (on an emulated link tbf's bucket bends every curve too)"
              if link_of(data) else "")
    return (_verdict(oks), f"expected between {format_size(low)} and {format_size(high)}; "
            f"switches found{caveat}: {'; '.join(parts)}")
