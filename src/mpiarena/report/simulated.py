"""A simulated run in words: what was simulated and what it models, each cell's simulated time
per model, and the error against a measured run."""

from __future__ import annotations

import math
from html import escape

from ..analysis.simulated import Error, SimFigure, figures
from ..base.status import CellStatus
from ..base.units import seconds
from ..cluster.smpi import Factors
from ..model.benchmarks import BENCHMARKS
from ..store.results import RunData

CAVEAT = ("SMPI models each library's choice of collective algorithms (its selection logic), "
          "not the library itself: no figure here is a measurement of any library installed.")


NO_FLOOR = "No machine floor: a simulated run's figures come from a model, not this machine."


def header(data: RunData) -> list[str]:
    s = data.run.settings
    models = s.get("models", {})
    lines = [f"run {data.run_id}: {data.settings.topology}",
             "simulated, deterministic: one launch per cell, a rerun gives the same figures; "
             "no intervals or verdicts.",
             CAVEAT, NO_FLOOR]
    lines += [f"  {v}: simulated: SimGrid {s.get('simgrid', '?')}, {title}"
              for v, title in models.items()]
    if s.get("computation"):
        lines.append("computation simulated too (smpi/simulate-computation:yes)")
    return lines


def _cell(f: SimFigure) -> str:
    if f.status != CellStatus.OK:
        return f"{f.status}: {f.reason}"
    spread = f" (calls {f.spread:.0%} apart)" if f.spread > 0.005 else ""
    return seconds(f.seconds) + spread


def table(data: RunData) -> list[str]:
    """One line per cell: benchmark, size, ranks, then each model's simulated time."""
    figs = figures(data)
    variants = list(dict.fromkeys(f.variant for f in figs))
    width = max([len(v) for v in variants] + [10])
    out: list[str] = []
    last = None
    for f in figs:
        where = (f.key.bench, f.key.size, f.key.np)
        if where != last:
            size = BENCHMARKS[f.key.bench].size_text(f.key.size) if f.key.size else "-"
            out.append(f"{f.key.bench} {size}, {f.key.np} ranks (simulated):")
            last = where
        out.append(f"  {f.variant:<{width}}  {_cell(f)}")
    return out


def render(data: RunData) -> list[str]:
    return [*header(data), *table(data)]


def calibration(run: str, factors: Factors, measured: dict[int, float]) -> list[str]:
    return [f"calibrated from run {run}'s pingpong at {len(measured)} sizes: "
            f"{factors.label()}", "  " + " ".join(factors.cfg())]


def validation(errors: list[Error], against: int) -> list[str]:
    if not errors:
        return [f"run {against} measured none of the simulated cells (same benchmark, size and "
                "rank count): nothing to validate"]
    out = [f"simulated against run {against} (measured; error = simulated / measured - 1):"]
    for e in errors:
        size = BENCHMARKS[e.key.bench].size_text(e.key.size) if e.key.size else "-"
        err = f"{e.error:+.0%}" if math.isfinite(e.error) else "n/a"
        out.append(f"  {e.key.bench} {size}, {e.key.np} ranks: {e.simulated_variant} "
                   f"{seconds(e.simulated)} vs {e.measured_variant} {seconds(e.measured)}: "
                   f"{err}")
    worst = max(errors, key=lambda e: abs(e.error))
    out.append(f"  worst: {worst.key.bench} {worst.key.size} B at {worst.key.np} ranks, "
               f"{worst.error:+.0%}")
    return out


def markdown(data: RunData) -> str:
    """The Markdown summary of a simulated run: the same words as `show`."""
    head, cells = header(data), table(data)
    return "\n".join([f"# mpiarena run {data.run_id} (simulated)", "",
                      f"`{data.run.command}`", "", *(f"{line}  " for line in head), "",
                      "```", *cells, "```", ""])


def html(data: RunData) -> str:
    """A self-contained HTML page of a simulated run: the same words as `show`."""
    head = "".join(f"<p>{escape(line)}</p>\n" for line in header(data))
    cells = escape("\n".join(table(data)))
    title = f"mpiarena run {data.run_id} (simulated)"
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{title}</title>"
            f"</head><body>\n<h1>{title}</h1>\n<p><code>{escape(data.run.command)}</code></p>\n"
            f"{head}<pre>{cells}</pre>\n</body></html>\n")
