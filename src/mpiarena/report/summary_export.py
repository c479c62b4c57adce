"""What the tables and verdicts say, for programs: one record per (variant, benchmark, size,
ranks), versioned and described by `summary.schema.json` beside this file."""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..analysis.counterparts import CounterpartCheck, counterpart_checks
from ..analysis.fingerprint import Fingerprint, fingerprints, tuned_of
from ..analysis.loggp import ParameterFigure, loggp
from ..analysis.models import P2pModel, fit_models
from ..analysis.overlap import Hidden, OverlapRow, overlap_rows
from ..analysis.predict import run_predictions
from ..analysis.run import Analysis
from ..analysis.run_spread import RunSpread
from ..analysis.stats import CONFIDENCE, THRESHOLD, Verdict
from ..analysis.whatran import run_configs
from ..model.benchmarks import BENCHMARKS, element_type
from ..store.results import RunData
from .summary import method_lines
from .whatran import binding_line

SCHEMA = Path(__file__).with_name("summary.schema.json")
VERSION = 7  # 2: undecided_why; launches_needed is an estimate at 80% power; 3: app; 4: models;
# 5: counterparts, overlap; 6: datatype (the run's, and each record's where it matters);
# 7: run_spread, intervals widened by it, undecided_why "spread"; verdicts from all pairs
UNITS = {"s": "seconds", "%": "percent", "B": "bytes"}
FIELDS = ["variant", "bench", "size", "np", "unit", "datatype", "timing", "status", "reason",
          "launches",
          "observations", "figure", "ci_low", "ci_high", "ci_confidence", "rerun_low", "rerun_high",
          "rerun_confidence", "between_launches", "fastest", "ratio_to_fastest", "ratio_ci_low",
          "ratio_ci_high", "p_adjusted", "verdict", "undecided_why", "launches_needed"]


def _number(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def records(a: Analysis) -> list[dict[str, object]]:
    """Every cell of every variant: its figure (median of launch medians, in the tables' unit:
    pingpong is half the round trip) and interval, and its verdict against the cell's fastest."""
    out: list[dict[str, object]] = []
    for key in sorted(a.data.cells, key=lambda k: (list(BENCHMARKS).index(k.bench), k.np, k.size)):
        bench, size, np_ = key
        against = {v.slow: v for v in a.judged.get(key, [])}
        for variant, group in sorted(a.data.cells[key].items()):
            s = a.summaries.get(key, {}).get(variant)
            v = against.get(variant)
            out.append({
                "variant": variant, "bench": bench, "size": size, "np": np_,
                "unit": UNITS[BENCHMARKS[bench].unit],
                "datatype": element_type(bench, a.data.settings), "timing": group.timing,
                "status": group.status, "reason": group.reason or None,
                "launches": s.launches if s else 0, "observations": s.n if s else 0,
                "figure": _number(s.median) if s else None,
                "ci_low": _number(s.ci_low) if s else None,
                "ci_high": _number(s.ci_high) if s else None,
                "ci_confidence": s.ci_confidence if s else None,
                "rerun_low": _number(s.rerun_low) if s else None,
                "rerun_high": _number(s.rerun_high) if s else None,
                "rerun_confidence": s.rerun_confidence if s else None,
                "between_launches": _number(s.between) if s else None,
                "fastest": a.best(key),
                **verdict_fields(v)})
    return out


def verdict_fields(v: Verdict | None) -> dict[str, Any]:
    """A record's verdict against the fastest, as both summary exports write it."""
    return {"ratio_to_fastest": _number(v.ratio) if v else None,
            "ratio_ci_low": _number(v.ci_low) if v else None,
            "ratio_ci_high": _number(v.ci_high) if v else None,
            "p_adjusted": _number(v.p_adjusted) if v else None,
            "verdict": v.outcome if v else None,
            "undecided_why": (v.why or None) if v else None,
            "launches_needed": (v.needed or None) if v else None}


def to_json(a: Analysis) -> str:
    data: RunData = a.data
    return json.dumps({
        "schema": "mpiarena-summary", "version": VERSION,
        "run": {"id": data.run_id, "status": data.status, "suite": data.run.suite,
                "started": data.run.started, "command": data.run.command,
                "machine": data.machine, "datatype": datatype_record(data)},
        "method": " ".join(method_lines(data)), "confidence": CONFIDENCE, "threshold": THRESHOLD,
        "run_spread": spread_record(a.spread),
        "what_ran": what_ran(data),
        "fingerprints": [fingerprint_record(f) for f in fingerprints(data, tuned_of(data))],
        **fitted_models(data),
        "counterparts": [counterpart_record(c) for c in counterpart_checks(data)],
        "overlap": [overlap_record(r) for r in overlap_rows(data)],
        "records": records(a)}, indent=1)


def spread_record(s: RunSpread | None) -> dict[str, Any] | None:
    """The run-to-run spread the run's intervals carry, by band."""
    return None if s is None else {"runs": s.runs, "bands": {
        str(band): {"level": b.level, "ratio": b.ratio, "source": str(b.source),
                    "series": b.series} for band, b in s.bands.items()}}


def datatype_record(data: RunData) -> dict[str, Any]:
    """The run's datatypes: what its sums added up and its datatype benchmarks' blocks were made
    of, and what --datatype asked (None: nothing; an imported run: the suite's)."""
    s = data.settings
    return {"sums": s.sums.mpi if s.sums else None, "blocks": s.blocks,
            "asked": s.datatype.value if s.datatype else None}


def _hidden(h: Hidden | None) -> dict[str, Any] | None:
    return None if h is None else {"median": _number(h.summary.median),
                                   "ci_low": _number(h.summary.ci_low),
                                   "ci_high": _number(h.summary.ci_high), "word": h.word,
                                   "launches": h.summary.launches}


def overlap_record(r: OverlapRow) -> dict[str, Any]:
    return {"collective": r.collective, "size": r.size, "np": r.np, "variant": r.variant,
            "background": _hidden(r.background), "tested": _hidden(r.tested)}


def fingerprint_record(f: Fingerprint) -> dict[str, Any]:
    """A cell's fingerprint, each algorithm unlike the default with its ratio and interval."""
    return asdict(f) | {"unlike": [{"algorithm": u.algorithm, "ratio": u.ratio,
                                    "ci_low": u.ci_low, "ci_high": u.ci_high}
                                   for u in f.unlike]}


def counterpart_record(c: CounterpartCheck) -> dict[str, Any]:
    return {"variant": c.variant, "bench": c.key.bench, "against": c.counterpart.against,
            "question": c.counterpart.question, "size": c.key.size, "np": c.key.np,
            "figure": _number(c.figure), "against_figure": _number(c.against),
            "ratio": _number(c.ratio), "ci_low": _number(c.ci_low),
            "ci_high": _number(c.ci_high), "p_adjusted": c.p_adjusted, "outcome": c.outcome,
            "launches": c.launches}


def _figure(f: ParameterFigure) -> dict[str, float | int | None]:
    return {"value": f.value, "low": _number(f.low), "high": _number(f.high),
            "launches": f.launches}


def loggp_export(data: RunData) -> list[dict[str, Any]]:
    """Per variant its LogGP parameters: L, per size o_s, o_r, g(s), and g, G per size range."""
    return [{"variant": v, "np": m.np, "n": m.n, "L": _figure(m.L),
             "sizes": [{"size": p.size, "half_rtt": _figure(p.half_rtt), "o_s": _figure(p.o_s),
                        "o_s_prtt": _figure(p.o_s_prtt), "o_r": _figure(p.o_r),
                        "g": _figure(p.g)} for p in m.points],
             "ranges": [{"first": r.sizes[0], "last": r.sizes[-1], "g": _figure(r.g),
                         "G": _figure(r.G), "worst_residual": r.max_residual,
                         "rms_residual": r.rms_residual} for r in m.ranges]}
            for v, m in loggp(data).items()]


def predictions(data: RunData, fitted: dict[str, P2pModel]) -> list[dict[str, Any]]:
    """Every collective cell against each algorithm shape's prediction from its variant's
    pingpong model."""
    return [{"variant": f.variant, "bench": f.bench, "size": f.size, "np": f.np,
             "measured": f.measured, "best": f.best, "error": _number(f.error),
             "alike": list(f.alike), "oversubscribed": f.oversubscribed, "forced": f.forced,
             "agrees": f.agrees, "shapes": {c.shape: c.seconds for c in f.predictions}}
            for f in run_predictions(data, fitted)]


def fitted_models(data: RunData) -> dict[str, list[dict[str, Any]]]:
    """Per variant its pingpong model (each regime's line with its intervals and residuals),
    its LogGP parameters, and every collective cell against each shape's prediction."""
    fitted = fit_models(data)
    return {"models": [_model(v, m) for v, m in fitted.items()], "loggp": loggp_export(data),
            "predictions": predictions(data, fitted)}


def _model(variant: str, m: P2pModel) -> dict[str, Any]:
    return {"variant": variant, "bench": m.bench, "np": m.np,
            "regimes": [{"first": r.first, "last": r.last,
                         "alpha": r.alpha.value, "alpha_low": _number(r.alpha.low),
                         "alpha_high": _number(r.alpha.high),
                         "beta": r.beta.value, "beta_low": _number(r.beta.low),
                         "beta_high": _number(r.beta.high),
                         "launches": len(r.alpha.per_launch),
                         "worst_residual": r.worst_residual, "rms_residual": r.rms_residual,
                         "switch": {"size": r.opened_by.size, "kind": r.opened_by.kind}
                         if r.opened_by else None,
                         "misfit_split": r.misfit_split} for r in m.regimes]}


def what_ran(data: RunData) -> list[dict[str, Any]]:
    """Per variant what its library reported: transport and how it was learned, every control
    variable (or why there are none), the differences from its library's default variant, and
    the warnings about its settings and binding."""
    c = run_configs(data)
    out = []
    for v in c.variants:
        w = v.what
        out.append({
            "variant": v.variant, "implementation": v.impl_id,
            "transport": w.transport if w else None,
            "transport_how": w.transport_how if w else None,
            "cvars": [asdict(x) for x in w.cvars] if w and w.cvars is not None else None,
            "cvars_unavailable": (w.cvars_why or None) if w else "not recorded",
            "defaults_from": v.defaults_from,
            "differs": [asdict(d) for d in v.differs],
            "warnings": [x for x in c.warnings if x.startswith(f"{v.variant}: ")]
            + [binding_line(b) for b in c.binding if b.variant == v.variant]})
    return out


def to_csv(a: Analysis) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, FIELDS)
    writer.writeheader()
    writer.writerows({k: ("" if v is None else v) for k, v in r.items()} for r in records(a))
    return out.getvalue()
