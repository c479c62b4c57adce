"""The Markdown summary of a program run: the words of `program.program_text`, as Markdown."""

from __future__ import annotations

from ..analysis.program import ProgramResult
from ..store.results import RunData
from .markdown_table import escape, table
from .program import program_text
from .summary import machine_line


def render_program_markdown(r: ProgramResult, data: RunData) -> str:
    t = program_text(r)
    out = [f"# {escape(t.title)}", "", f"{data.status}, started {r.run.started}; "
           f"{escape(machine_line(data))}", "", f"`{r.run.command}`", "",
           "## Median (launches) per library", "",
           *table([*map(escape, t.header)], ([*map(escape, row)] for row in t.rows)), "",
           "## Verdicts", "", *(f"- {escape(line)}" for line in t.verdicts), ""]
    if t.decompositions:
        out += ["## Where the wall-time difference comes from", "",
                "Profiled launches, seconds per rank.", "",
                *(f"- {escape(line)}" for line in t.decompositions), ""]
    if t.overheads:
        out += ["## Profiler overhead", "", "One launch each: noisy.", "",
                *(f"- {escape(line)}" for line in t.overheads), ""]
    if t.failures or t.warnings:
        out += ["## Failures and warnings", "", *(f"- failed: {escape(x)}" for x in t.failures),
                *(f"- warning: {escape(x)}" for x in t.warnings), ""]
    out += ["## Method", "", *(f"{escape(p)}\n" for p in t.method)]
    return "\n".join(out)
