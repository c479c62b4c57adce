"""The Markdown summary: machine, implementations, warnings, verdicts and a table per benchmark."""

from __future__ import annotations

from ..analysis.run import analyse
from ..benchmarks import BENCHMARKS
from ..records import VariantRecord
from ..results import RunData
from . import interference
from .costs import costs_text
from .counterparts import counterparts
from .guidelines import guidelines
from .overlap import overlap_text
from .summary import (
    answer_lines,
    cell_text,
    machine_line,
    method_lines,
    scoreboard_lines,
    variant_rows,
    variant_settings,
    verdict_text,
)
from .topology import placement_lines


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("*", "\\*").replace("_", "\\_")


def _costs(data: RunData) -> list[str]:
    c = costs_text(data)
    if c is None:
        return []
    out = ["## Costs", "", "| " + " | ".join(map(_md, c.header)) + " |",
           "| " + " | ".join(["---", "---"] + ["---:"] * (len(c.header) - 2)) + " |"]
    out += ["| " + " | ".join(map(_md, row)) + " |" for row in c.rows]
    same = [f"{c.same} more pairs of variants of one implementation are indistinguishable"]
    out += [""] + [f"- {_md(line)}" for line in c.verdicts + same[:bool(c.same)] + c.notes]
    return [*out, ""]


def _guidelines(data: RunData) -> list[str]:
    g = guidelines(data)
    if g is None:
        return []
    out = ["## Self-consistency guidelines", "", _md(g.lead), "",
           "| variant | checked | held | violated | undecided |",
           "| --- | ---: | ---: | ---: | ---: |"]
    out += [f"| {lib.variant} | {lib.checked} | {lib.held} | {lib.violated} | {lib.undecided} |"
            for lib in g.libraries]
    for lib in g.libraries:
        lines = ([f"violated: {x}" for x in lib.violations] + [f"so: {x}" for x in lib.advice]
                 + lib.unchecked)
        if lines:
            out += ["", f"**{lib.variant}**", ""] + [f"- {_md(x)}" for x in lines]
    return [*out, ""]


def _overlap(data: RunData) -> list[str]:
    o = overlap_text(data)
    if o is None:
        return []
    out = ["## Non-blocking collectives: what computation hides", "", _md(o.lead), "",
           "| " + " | ".join(map(_md, o.header)) + " |",
           "| " + " | ".join(["---"] + ["---:"] * (len(o.header) - 1)) + " |"]
    out += ["| " + " | ".join(map(_md, row)) + " |" for row in o.rows]
    return [*out, ""] + [f"- {_md(line)}" for line in o.background] + [""]


def _counterparts(data: RunData) -> list[str]:
    c = counterparts(data)
    if c is None:
        return []
    out = ["## Beside MPI-1", "", _md(c.lead), ""]
    out += [f"- **{line.variant}** {_md(line.pair)} ({_md(line.question)}): "
            f"{_md('; '.join(line.cells))}" for line in c.lines]
    return [*out, ""]


def render_markdown(data: RunData, baseline: str | None = None,
                    variants: list[VariantRecord] | None = None) -> str:
    """The summary as Markdown; `variants` are the store's variant rows (env, args, binding)."""
    a = analyse(data, baseline)
    run = data.run
    out = [f"# mpiarena run {data.run_id}", "",
           f"Suite **{run.suite}**, {run.started}, {data.status}, seed {run.seed}, "
           f"mpiarena {run.version}  ",
           f"`{run.command}`", "",
           *(f"{_md(line)}  " for line in answer_lines(a)), "",
           *(f"**{_md(line)}**  " for line in interference.run_lines(data)), "",
           f"**Machine**: {_md(machine_line(data))}, topology "
           f"{data.settings.topology}", "",
           *(f"{_md(line)}  " for line in placement_lines(data)), "",
           "## Implementations", "", "| id | library version | origin | wrapper |",
           "| --- | --- | --- | --- |"]
    for impl in data.implementations:
        first = impl.version_string.splitlines()[0] if impl.version_string else ""
        out.append(f"| {impl.impl_id} | {_md(first)} | {impl.origin} | `{impl.wrapper}` |")
    rows = variant_rows(data, variants)
    if any(variant_settings(v) != "defaults" or v.binding != "auto" for v in rows):
        out += ["", "| variant | settings | binding |", "| --- | --- | --- |"]
        out += [f"| {v.variant} | `{variant_settings(v)}` | {v.binding} |" for v in rows]
    out += ["", "## The answer", ""]
    out += [f"- {_md(line.strip())}" if line.startswith(" ") else f"\n{_md(line)}\n"
            for line in scoreboard_lines(a)]
    if a.warnings:
        out += ["", "## Warnings", ""]
        out += [f"- **{w.level}**: {_md(w.text)}" for w in a.warnings]
    out += ["", "## Verdicts", ""]
    for keys in a.tables.values():
        for key in a.summary_keys(keys):
            out += [f"- {_md(verdict_text(a.label(key), v))}" for v in a.judged.get(key, [])]
    if not a.judged:
        out.append("None: no cell has two variants that measured it.")
    out += ["", "## Results", "", "Medians of launch medians; **\\*** marks the lowest of a row.",
            ""]
    for (bench, np_), keys in a.tables.items():
        spec = BENCHMARKS[bench]
        out += [f"### {_md(a.title(bench, np_))}", "",
                "| " + " | ".join(["size" if spec.sized else "", *data.variants]) + " |",
                "| " + " | ".join(["---:"] * (len(data.variants) + 1)) + " |"]
        for key in keys:
            best = a.best(key)
            row = [spec.size_text(key.size) if spec.sized else ""]
            for variant in data.variants:
                text = cell_text(a, key, variant)
                row.append(f"**{text} \\***" if variant == best else text)
            out.append("| " + " | ".join(row) + " |")
        out.append("")
    out += _costs(data)
    out += _overlap(data)
    out += _guidelines(data)
    out += _counterparts(data)
    out += ["## Method", ""]
    for line in method_lines(data):
        out += [_md(line), ""]
    return "\n".join(out)


