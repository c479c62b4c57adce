"""The HTML report: one self-contained file (figures as base64 PNG, CSS inline, no script).

It holds what the terminal summary says (the same verdict lines, corrected across the report)
and everything behind it: the machine, the implementations and their wrapper flags, the
variants, each job's rank binding, the figures, full statistics per cell, the method and every
warning.
"""

from __future__ import annotations

import base64
import json
import struct
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

import jinja2

from .. import __version__
from ..analysis.fingerprint import fingerprints, tuned_of
from ..analysis.interference import Finding, finding
from ..analysis.loggp import loggp
from ..analysis.models import fit_models
from ..analysis.predict import run_predictions
from ..analysis.run import Analysis, Level, Notice, analyse, scoreboard
from ..analysis.stats import CONFIDENCE, Verdict
from ..analysis.verdicts import Speed
from ..analysis.whatran import run_configs
from ..base import units
from ..base.records import Cell, VariantRecord
from ..base.sizes import format_size
from ..base.status import CellStatus, JobStatus
from ..model.benchmarks import BENCHMARKS, element_type
from ..store.results import RunData
from ..suites import label
from . import drawing, plot_table, plots
from .costs import costs_text
from .counterparts import counterparts
from .fingerprint import line as fingerprint_line
from .guidelines import guidelines
from .interference import warning_lines
from .models import heading as models_heading
from .models import loggp_lines, prediction_lines, regime_text
from .overlap import overlap_text
from .summary import (
    answer_lines,
    cell_text,
    floor_heading,
    floor_text,
    machine_line,
    method_lines,
    rule_text,
    scoreboard_lines,
    variant_rows,
    variant_settings,
    verdict_text,
)
from .topology import placement_lines
from .whatran import HEADING, binding_line, diff_text

TEMPLATE = "template.html.j2"


@dataclass
class Image:
    name: str
    title: str
    caption: str
    src: str  # data: URI
    width: int
    height: int
    kind: plots.FigureKind
    bench: str | None
    np: int | None


def png_image(plot: plots.Plot, dpi: int) -> Image:
    data = plots.png(plot.figure, dpi)
    width, height = struct.unpack(">II", data[16:24])  # the PNG IHDR chunk
    return Image(plot.name, plot.title, plot.caption,
                 "data:image/png;base64," + base64.b64encode(data).decode("ascii"), width,
                 height, plot.kind, plot.bench, plot.np)


def _verdict(a: Analysis, key: Cell, v: Verdict) -> dict[str, Any]:
    return {"label": a.label(key), "fast": v.fast, "slow": v.slow, "outcome": v.outcome,
            "ratio": f"{v.ratio:.2f}", "ci": f"{CONFIDENCE:.0%} CI {v.ci_low:.2f}-{v.ci_high:.2f}",
            "launches_fast": v.launches_fast, "launches_slow": v.launches_slow,
            "p": f"{v.p_adjusted:.2g}",
            "text": verdict_text(a.label(key), v)}


def _stats_rows(a: Analysis, keys: list[Cell]) -> list[dict[str, Any]]:
    rows = []
    for key in keys:
        cell = a.data.cells[key]
        entries: list[dict[str, Any]] = []
        for variant in a.data.variants:
            group = cell.get(variant)
            s = a.summaries[key].get(variant)
            if s is None:
                status = "n/a" if group is None else \
                    "no observation" if group.status == CellStatus.OK else group.status
                entries.append({"variant": variant, "missing": status,
                                "reason": group.reason if group else ""})
                continue
            between = "-" if s.between is None else f"{s.between:.0%}"
            entries.append({
                "variant": variant, "launches": s.launches, "n": s.n,
                "median": units.seconds(s.median),
                "ci": f"{units.seconds(s.ci_low)} - {units.seconds(s.ci_high)}",
                "rerun": f"{units.seconds(s.rerun_low)} - {units.seconds(s.rerun_high)}",
                "min": units.seconds(s.min), "max": units.seconds(s.max),
                "between": between, "noisy": (s.between or 0) > 0.5,
                "iterations": group.iterations if group else None})
        spec = BENCHMARKS[key[0]]
        rows.append({"size": spec.size_text(key[1]) if spec.sized else "",
                     "entries": entries})
    return rows


def _medians(a: Analysis, keys: list[Cell]) -> list[dict[str, Any]]:
    rows = []
    for key in keys:
        best = a.best(key)
        cells = []
        for variant in a.data.variants:
            text = cell_text(a, key, variant)
            time, _, bw = text.partition("  ")
            group = a.data.cells[key].get(variant)
            cells.append({"time": time, "bw": bw, "best": variant == best,
                          "status": group.status if group else CellStatus.NA,
                          "reason": group.reason if group else ""})
        spec = BENCHMARKS[key[0]]
        rows.append({"size": spec.size_text(key[1]) if spec.sized else "",
                     "cells": cells, "floor": floor_text(a, key)})
    return rows


def _jobs(data: RunData, found: Finding) -> list[dict[str, Any]]:
    out = []
    beside = {x.job_id: x.share for x in found.launches}
    busy = {x.job_id for x in found.above}
    for job in data.jobs:
        hosts = {r.get("host") for r in job.ranks}
        binding = ", ".join(
            f"{r.get('rank')}→{r.get('cpus', '?')}" + (f"@{r.get('host')}" if len(hosts) > 1
                                                      else "") for r in job.ranks)
        out.append({"variant": job.variant, "np": job.np, "topology": job.topology,
                    "binding": job.binding, "status": job.status,
                    "reason": job.why, "ranks": binding or "-",
                    "hosts": ", ".join(sorted(h for h in hosts if h)) or "-",
                    "tick": units.seconds(job.tick) if job.tick else "-",
                    "resolution": units.seconds(job.resolution) if job.resolution
                    else "-", "thread_level": job.thread_level or "-",
                    "beside": f"{beside[job.id]:.0%}" if job.id in beside else "-",
                    "busy": job.id in busy,
                    "command": " ".join(str(c) for c in job.command)})
    return out


def template_env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent),
                             autoescape=True, trim_blocks=True, lstrip_blocks=True,
                             undefined=jinja2.StrictUndefined)
    env.globals.update(Speed=Speed, CellStatus=CellStatus, JobStatus=JobStatus, Level=Level)
    return env


def context(data: RunData, baseline: str | None = None, variants: list[VariantRecord] | None = None,
            dpi: int = 100) -> dict[str, Any]:
    """Everything the template shows, already formatted."""
    a = analyse(data, baseline)
    benches = _benches(a)  # first: the drawing processes share the summaries they computed
    figures = plot_table.makers(data, baseline, a)
    with drawing.started(figures, partial(png_image, dpi=dpi)) as drawn:
        text = _text(data, a, variants)  # while the figures are drawn
        images = drawn()
    by_bench = {b["name"]: b for b in benches}
    by_table = {(b["name"], t["np"]): t for b in benches for t in b["tables"]}
    winners = None
    for image in images:
        if image.kind == plots.FigureKind.WINNERS:
            winners = image
        elif image.kind == plots.FigureKind.RANKS:
            by_bench[image.bench]["ranks_image"] = image
        elif (image.bench, image.np) in by_table:  # (a tuning heatmap may have no table)
            by_table[(image.bench, image.np)]["images"].append(image)
    return {**text, "benches": benches, "winners": winners}


def _what_ran(data: RunData) -> dict[str, Any]:
    """The 'what ran' section: per variant its transport, control variables and differences
    from its library's defaults; the settings and bindings that did not take."""
    c = run_configs(data)
    rows = []
    for v in c.variants:
        w = v.what
        rows.append({"variant": v.variant, "transport": w.transport if w else "not recorded",
                     "how": w.transport_how if w else "",
                     "cvars": (f"{len(w.cvars)} (MPI_T)" if w and w.cvars is not None else
                               f"not available: {w.cvars_why}" if w else "not recorded"),
                     "against": v.defaults_from or "",
                     "differs": [diff_text(d) for d in v.differs],
                     "all": [f"{x.name} = {x.value} ({x.scope})" for x in (w.cvars or ())]
                     if w else []})
    return {"rows": rows, "warnings": [*c.warnings, *map(binding_line, c.binding)],
            "heading": HEADING,
            "fingerprints": [fingerprint_line(f) for f in fingerprints(data, tuned_of(data))]}


def _models(data: RunData) -> dict[str, Any] | None:
    """The 'models' section: per variant each regime's line, intervals and residuals; LogGP;
    the collectives predicted from the lines."""
    fitted, measured = fit_models(data), loggp(data)
    if not fitted and not measured:
        return None
    return {"heading": models_heading(fitted) if fitted else "",
            "variants": [{"variant": v, "regimes": [regime_text(r) for r in m.regimes]}
                         for v, m in fitted.items()],
            "loggp": loggp_lines(measured),
            "predictions": prediction_lines(run_predictions(data, fitted),
                                            int(data.machine.get("cores", 1)))}


def _benches(a: Analysis) -> list[dict[str, Any]]:
    """Per benchmark, its tables: medians, verdicts, statistics; their figures come later."""
    benches: list[dict[str, Any]] = []
    by_bench: dict[str, dict[str, Any]] = {}
    for (bench, np_), keys in a.tables.items():
        spec = BENCHMARKS[bench]
        entry = by_bench.get(bench)
        if entry is None:
            typed = element_type(bench, a.data.settings)
            entry = {"name": bench, "doc": f"{spec.doc} ({typed})" if typed else spec.doc,
                     "kind": spec.kind, "sized": spec.sized,
                     "tables": [], "ranks_image": None}
            by_bench[bench] = entry
            benches.append(entry)
        entry["tables"].append({
            "np": np_, "title": a.title(bench, np_), "oversubscribed": np_ > a.cores,
            "anchor": f"{bench}-np{np_}", "medians": _medians(a, keys), "images": [],
            "floored": any(floor_text(a, k) for k in keys), "floor_heading": floor_heading(a),
            "summary_verdicts": [_verdict(a, k, v) for k in a.summary_keys(keys)
                                 for v in a.judged.get(k, [])],
            "verdicts": [_verdict(a, k, v) for k in keys for v in a.judged.get(k, [])],
            "stats": _stats_rows(a, keys)})
    return benches


def _text(data: RunData, a: Analysis, variants: list[VariantRecord] | None) -> dict[str, Any]:
    """Everything the template shows but the benchmarks' tables and the figures."""
    all_verdicts = [v for vs in a.judged.values() for v in vs]
    board = [vars(b) for b in scoreboard(a)]
    counts = {o: sum(v.outcome == o for v in all_verdicts)
              for o in (Speed.FASTER, Speed.INDISTINGUISHABLE, Speed.UNDECIDED)}
    run = data.run
    settings = data.settings
    m = data.machine
    machine = [("host", m.get("hostname")), ("CPU", m.get("cpu_model")),
               ("cores", m.get("cores")),
               ("memory", f"{int(m.get('memory_bytes', 0)) / 2**30:.1f} GiB"),
               ("kernel", m.get("kernel")), ("OS", m.get("os")),
               ("governor", m.get("governor")), ("Python", m.get("python")),
               ("topology", settings.topology), ("ranks run as", settings.ranks_run_as)]
    extra = {k: v for k, v in m.items() if k not in {"hostname", "cpu_model", "cores",
                                                     "memory_bytes", "kernel", "os",
                                                     "governor", "python"}}
    machine += [(k, v if isinstance(v, str | int | float) else json.dumps(v))
                for k, v in extra.items()]
    shown_settings = [
        ("suite", run.suite), ("seed (interleaving order)", run.seed),
        ("observations per cell", settings.observations),
        ("target time per observation", units.seconds(settings.target_time)),
        ("cell time limit", f"{settings.max_cell_time} s"),
        ("bibw window", settings.window),
        ("off-cache buffers", "yes" if settings.offcache else "no"),
        ("data validated", "yes" if settings.validate else "no"),
        ("hang timeout", f"{settings.timeout} s"),
        ("rank counts", ", ".join(str(n) for n in settings.nps)),
        ("sizes", ", ".join(format_size(s) for s in settings.sizes)),
        ("datatype of the sums", settings.sums_name),
        ("datatype benchmarks' blocks", f"8 bytes of {settings.blocks}"),
    ]
    n_comparisons = len(all_verdicts)
    found = finding(data.jobs)
    method = [
        *method_lines(data),
        f"The interval of a median is distribution-free, from the order statistics of the "
        f"launch medians ({CONFIDENCE:.0%} from 6 launches; below that their range, which "
        f"holds less: the export gives its confidence). A ratio is median over median; its "
        f"interval is Moses' over the launch medians, and each cell's fastest variant is "
        f"compared with every other: "
        f"{rule_text(f'the {n_comparisons} comparisons of this report')}",
        "Bandwidth is bytes moved per iteration (both directions for sendrecv and bibw, times "
        "the window for bibw) over the median time per iteration (pingpong: the full round "
        "trip, so bandwidth is size over half the round trip). Relative performance is the "
        "baseline's median over the variant's, in percent, as in Dimitrov and Skjellum's "
        "Fig. 3: above 100% is faster than the baseline.",
        "Ranks are bound one per core when they fit and unbound when oversubscribed; a rank "
        "count above the core count is marked wherever it appears.",
    ]
    impls = []
    for impl in data.implementations:
        vs = impl.version_string or ""
        impls.append({**asdict(impl), "first": vs.splitlines()[0] if vs else "",
                      "rest": "\n".join(vs.splitlines()[1:])})
    return {
        "run": run, "run_id": data.run_id, "status": data.status, "version": __version__,
        "suite_label": label(run.suite),
        "machine_line": machine_line(data), "machine": machine, "settings": shown_settings,
        "placement": placement_lines(data),
        "what_ran": _what_ran(data),
        "models": _models(data),
        "implementations": impls,
        "variants": [{**asdict(v), "settings": variant_settings(v)}
                     for v in variant_rows(data, variants)],
        "variants_known": bool(variants), "jobs": _jobs(data, found),
        "warnings": [*_interference_notices(found), *a.warnings],
        "baseline": a.baseline, "baseline_given": a.baseline_given, "counts": counts,
        "rule": rule_text(f"all {len(all_verdicts)} comparisons in this report"),
        "n_cells": len(data.cells), "n_variants": len(data.variants),
        "scoreboard": board, "n_judged": len(a.judged), "costs": costs_text(data),
        "guidelines": guidelines(data), "counterparts": counterparts(data),
        "overlap": overlap_text(data),
        "method": method, "headline": answer_lines(a), "answer": scoreboard_lines(a),
        "interference": warning_lines(found),
        "variant_names": a.data.variants,  # the tables' columns: the floor has its own
        "colors": {v: plots.Styles(data.variants)(v)["color"] for v in data.variants},
        "color_index": {v: i for i, v in enumerate(data.variants)}, "cores": a.cores,
    }


def _interference_notices(found: Finding) -> list[Notice]:
    """The summary's interference lines as the Warnings section lists them, so that its count
    holds them too."""
    return [Notice(Level.WARN, line.removeprefix("warn: "), "interference")
            for line in warning_lines(found)]


def render_html(data: RunData, baseline: str | None = None,
                variants: list[VariantRecord] | None = None, dpi: int = 100) -> str:
    """The whole report as one HTML document; `variants` are the store's variant rows."""
    return template_env().get_template(TEMPLATE).render(**context(data, baseline, variants, dpi))
