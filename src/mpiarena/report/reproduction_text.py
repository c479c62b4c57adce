"""A reproduction's report: in the terminal (rich) and as a Markdown file."""

from __future__ import annotations

import math

from rich.console import Console
from rich.table import Table

from ..analysis.quantities import Measured
from ..analysis.reproduction import Evaluation, FigureRow
from ..analysis.verdicts import ClaimResult
from ..base.status import RunStatus
from ..store.results import RunData
from .markdown_table import table
from .tables import show

COLOUR = {ClaimResult.HOLDS: "green", ClaimResult.FAILS: "red", ClaimResult.PARTLY: "yellow",
          ClaimResult.UNDECIDED: "yellow", ClaimResult.CANNOT: "dim"}


def _show(v: float | None, unit: str, sd: float | None = None) -> str:
    if v is None or not math.isfinite(v):
        return "-"
    text = f"{v:.3g}"
    if sd is not None:
        text += f" ± {sd:.2g}"
    return f"{text} {unit}" if unit != "x" else f"{text}x"


def published(row: FigureRow) -> str:
    """The published figure as the study printed it with its unit (a ratio's, computed)."""
    if row.published_ratio is not None:
        return _show(row.published_ratio, "x")
    return f"{row.published_text} {row.unit}" if row.unit != "x" else f"{row.published_text}x"


def _measured(row: FigureRow) -> list[str]:
    """Each stand-in's figure, or why there is none, named by its variant."""
    out = []
    for s in row.measured:
        text = s.missing or _show(s.value, row.unit, s.sd)
        out.append(f"{s.variant}: {text}" if s.variant else text)
    return out


def _where(runs: dict[str, Measured], skipped: dict[str, str]) -> list[tuple[str, str]]:
    """(experiment, where it ran and as which run) for each experiment."""
    out = []
    for name, d in runs.items():
        if isinstance(d, RunData):
            out.append((name, f"run {d.run_id}, {d.settings.topology}"
                        + ("" if d.status == RunStatus.COMPLETE else f" ({d.status})")))
        else:
            out.append((name, f"profiled on this machine: {', '.join(d.variants)}"))
    return out + [(name, f"not run: {why}") for name, why in skipped.items()]


def summary_line(ev: Evaluation) -> str:
    return (f"{len(ev.claims)} conclusions: {ev.count(ClaimResult.HOLDS)} hold, "
            f"{ev.count(ClaimResult.PARTLY)} partly, {ev.count(ClaimResult.FAILS)} do not hold, "
            f"{ev.count(ClaimResult.UNDECIDED)} undecided (the launches back neither), "
            f"{ev.count(ClaimResult.CANNOT)} cannot be tested here")


def render(ev: Evaluation, runs: dict[str, Measured], skipped: dict[str, str],
           notes: list[str], console: Console) -> None:
    s = ev.study
    console.print(f"[bold]{s.title}[/]\n{s.citation}\n[dim]seed {s.seed}[/]")
    console.print(f"the study ran on: {s.network}")
    for name, where in _where(runs, skipped):
        console.print(f"  {name}: {where}")
    for difference in s.differences:
        console.print(f"[yellow]differs from the study[/] {difference}")
    for note in notes:
        console.print(f"[yellow]note[/] {note}")
    if ev.figures:
        table = Table("figure", "source", "library (as published)", "published", "measured here")
        for row in ev.figures:
            table.add_row(row.what + (f"\n[dim]{row.note}[/]" if row.note else ""), row.source,
                          row.library, published(row), "\n".join(_measured(row)))
        show(console, "Published figures beside ours", table)
    table = Table("", "conclusion of the study", "source", "what we measured")
    for c in ev.claims:
        table.add_row(f"[{COLOUR[c.result]}]{c.result}[/]", c.text, c.source, c.detail)
    show(console, "Conclusions checked", table)
    console.print(summary_line(ev))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", "<br>")


def _figure_row(row: FigureRow) -> list[str]:
    what = row.what + (f" ({row.note})" if row.note else "")
    return [_cell(what), _cell(row.source), _cell(row.library), _cell(published(row)),
            "<br>".join(_cell(m) for m in _measured(row))]


def markdown(ev: Evaluation, runs: dict[str, Measured], skipped: dict[str, str],
             notes: list[str], db: str) -> str:
    s = ev.study
    lines = [f"# Reproduction: {s.title}", "", f"{s.citation} (seed `{s.seed}`).", "",
             f"The study ran on: {s.network}.", "",
             *table(["experiment", "where it ran here"],
                    ([name, _cell(where)] for name, where in _where(runs, skipped)), left=2), ""]
    if s.differences:
        lines += ["## How this rerun differs from the study", ""]
        lines += [f"- {d}" for d in s.differences]
        lines.append("")
    lines += [f"- note: {n}" for n in notes]
    lines += ["", f"Every observation is in `{db}`; `mpiarena show RUN` prints a run's full "
              "tables, `mpiarena report RUN` its HTML report.", ""]
    if ev.figures:
        lines += ["## Published figures beside ours", "",
                  *table(["figure", "source", "library (as published)", "published",
                          "measured here"], map(_figure_row, ev.figures), left=5), ""]
    lines += ["## Conclusions checked", "",
              *table(["status", "conclusion", "source", "what we measured"],
                     ([f"**{c.result}**", _cell(c.text), _cell(c.source), _cell(c.detail)]
                      for c in ev.claims), left=4)]
    lines += ["", summary_line(ev) + ".", ""]
    return "\n".join(lines)
