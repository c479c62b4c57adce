"""The Markdown summary of an app run: the words of `program.program_text`, as Markdown."""

from __future__ import annotations

from ..analysis.program import AppResult
from ..results import RunData
from .markdown import _md
from .program import program_text
from .summary import machine_line


def render_app_markdown(r: AppResult, data: RunData) -> str:
    t = program_text(r)
    out = [f"# {_md(t.title)}", "", f"{data.status}, started {r.run.started}; "
           f"{_md(machine_line(data))}", "", f"`{r.run.command}`", "",
           "## Median (launches) per library", "",
           "| " + " | ".join(map(_md, t.header)) + " |",
           "| " + " | ".join(["---"] + ["---:"] * (len(t.header) - 1)) + " |",
           *("| " + " | ".join(map(_md, row)) + " |" for row in t.rows), "",
           "## Verdicts", "", *(f"- {_md(line)}" for line in t.verdicts), ""]
    if t.decompositions:
        out += ["## Where the wall-time difference comes from", "",
                "Profiled launches, seconds per rank.", "",
                *(f"- {_md(line)}" for line in t.decompositions), ""]
    if t.overheads:
        out += ["## Profiler overhead", "", "One launch each: noisy.", "",
                *(f"- {_md(line)}" for line in t.overheads), ""]
    if t.failures or t.warnings:
        out += ["## Failures and warnings", "", *(f"- failed: {_md(x)}" for x in t.failures),
                *(f"- warning: {_md(x)}" for x in t.warnings), ""]
    out += ["## Method", "", *(f"{_md(p)}\n" for p in t.method)]
    return "\n".join(out)
