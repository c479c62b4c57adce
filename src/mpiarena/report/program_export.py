"""Exports of a program run: every launch (and the MPI calls of the profiled ones) as CSV or JSON,
or its summary: per figure each library's median and the verdicts, the decompositions and the
profiler's overhead (the `app` object of `summary.schema.json`).

CSV has one table, so its rows say what they are in `record`: `launch` rows first (the launch
columns filled, a metric NAME in column `metric.NAME`), then `call` rows (launch, rank,
function, calls, seconds). JSON has `launches` (a launch's metrics in its `metrics` object) and
`calls`."""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any

from ..analysis.program import ProgramResult, function_calls, function_seconds
from ..analysis.stats import CONFIDENCE, THRESHOLD, Verdict
from ..model.programs import ProgramLaunch
from ..model.runs import ProgramSettings, program_settings
from ..store import Store
from ..store.results import RunData
from .program import program_text
from .summary_export import VERSION, verdict_fields

LAUNCH = ["launch", "variant", "np", "index", "kind", "status", "reason", "exit_code", "wall"]
CALL = ["rank", "function", "calls", "seconds"]
SUMMARY = ["figure", "higher_is_better", "variant", "launches", "median", "fastest",
           "ratio_to_fastest", "ratio_ci_low", "ratio_ci_high", "p_adjusted", "verdict",
           "undecided_why", "launches_needed"]


def _number(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def _metric_names(launches: list[ProgramLaunch], settings: ProgramSettings) -> list[str]:
    named = [m.name for m in settings.metrics]
    return named + sorted({k for x in launches for k in x.metrics} - set(named))


def _launch(x: ProgramLaunch, metrics: list[str]) -> dict[str, Any]:
    return {"launch": x.id, "variant": x.variant, "np": x.np, "index": x.index, "kind": x.kind,
            "status": x.status, "reason": x.reason or None, "exit_code": x.exit_code,
            "wall": _number(x.wall), "metrics": {m: _number(x.metrics[m]) for m in metrics
                                                 if m in x.metrics},
            "command": x.command}


def to_json(store: Store, run_id: int) -> str:
    run = store.run(run_id)
    launches = store.program_launches(run_id)
    metrics = _metric_names(launches, program_settings(run))
    calls = store.program_calls(run_id)
    return json.dumps({
        "run": run_id, "metrics": metrics,
        "launches": [_launch(x, metrics) for x in launches],
        "calls": [{"launch": launch, "rank": c.rank, "function": c.function, "calls": c.calls,
                   "seconds": c.seconds} for launch, cs in calls.items() for c in cs]}, indent=1)


def to_csv(store: Store, run_id: int) -> str:
    run = store.run(run_id)
    launches = store.program_launches(run_id)
    metrics = _metric_names(launches, program_settings(run))
    out = io.StringIO()
    writer = csv.DictWriter(out, ["record", *LAUNCH, *(f"metric.{m}" for m in metrics),
                                  "command", *CALL])
    writer.writeheader()
    for x in launches:
        row = _launch(x, metrics)
        row.update({f"metric.{m}": v for m, v in row.pop("metrics").items()})
        writer.writerow({"record": "launch", **{k: "" if v is None else v
                                                for k, v in row.items()}})
    for launch, cs in store.program_calls(run_id).items():
        writer.writerows({"record": "call", "launch": launch, "rank": c.rank,
                          "function": c.function, "calls": c.calls, "seconds": c.seconds}
                         for c in cs)
    return out.getvalue()


def _verdict(v: Verdict) -> dict[str, Any]:
    return {"fast": v.fast, "slow": v.slow, "ratio": _number(v.ratio),
            "ci_low": _number(v.ci_low), "ci_high": _number(v.ci_high),
            "p_adjusted": _number(v.p_adjusted), "outcome": v.outcome,
            "launches_fast": v.launches_fast, "launches_slow": v.launches_slow,
            "launches_needed": v.needed or None, "undecided_why": v.why or None}


def program_summary(r: ProgramResult) -> dict[str, Any]:
    """The `app` object of the summary export."""
    s = program_settings(r.run)
    return {
        "program": list(s.program), "np": r.np, "launches": s.launches,
        "warmup": s.warmup, "variants": r.variants,
        "runs": [{"launch": x.id, "variant": x.variant, "index": x.index, "kind": x.kind,
                  "status": x.status, "wall": _number(x.wall),
                  "metrics": {k: _number(v) for k, v in x.metrics.items()}}
                 for x in r.launches],
        "figures": [{"name": f.name, "higher_is_better": f.higher,
                     "medians": {v: _number(f.center(v)) for v in r.variants},
                     "launches": {v: len(f.values.get(v, [])) for v in r.variants},
                     "verdicts": [_verdict(v) for v in f.verdicts]} for f in r.figures],
        "mpi": [{"variant": v, "function": name, "calls": function_calls(r, v).get(name, 0),
                 "seconds_per_rank": seconds}
                for v in r.variants for name, seconds in sorted(function_seconds(r, v).items())],
        "decompositions": [{"fast": d.fast, "slow": d.slow, "wall_delta": _number(d.wall_delta),
                            "mpi_delta": _number(d.mpi_delta), "outside": _number(d.outside),
                            "decided": d.decided,
                            "functions": [{"function": f.function, "fast": f.fast,
                                           "slow": f.slow, "delta": f.delta}
                                          for f in d.functions]}
                           for d in r.decompositions],
        "overheads": [{"variant": o.variant, "profiled": _number(o.profiled),
                       "timed": _number(o.timed), "share": _number(o.share)}
                      for o in r.overheads]}


def summary_json(r: ProgramResult, data: RunData, tuned: dict[str, Any] | None = None) -> str:
    """The summary export of a program run: no kernel records, its `app` object (and an
    `program --tune` run's `tuned` object)."""
    return json.dumps({
        "schema": "mpiarena-summary", "version": VERSION,
        "run": {"id": data.run_id, "status": data.status, "suite": data.run.suite,
                "started": data.run.started, "command": data.run.command,
                "machine": data.machine},
        "method": " ".join(program_text(r).method), "confidence": CONFIDENCE,
        "threshold": THRESHOLD, "records": [], "app": program_summary(r),
        **({"tuned": tuned} if tuned is not None else {})}, indent=1)


def summary_csv(r: ProgramResult) -> str:
    """One row per figure and library: its median and its verdict against the fastest."""
    out = io.StringIO()
    writer = csv.DictWriter(out, SUMMARY)
    writer.writeheader()
    for f in r.figures:
        against = {v.slow: v for v in f.verdicts}
        fastest = f.verdicts[0].fast if f.verdicts else None
        for variant in r.variants:
            v = against.get(variant)
            row = {"figure": f.name, "higher_is_better": f.higher, "variant": variant,
                   "launches": len(f.values.get(variant, [])),
                   "median": _number(f.center(variant)), "fastest": fastest,
                   **verdict_fields(v)}
            writer.writerow({k: "" if x is None else x for k, x in row.items()})
    return out.getvalue()
