"""The Markdown summary: machine, implementations, warnings, verdicts and a table per benchmark."""

from __future__ import annotations

from ..analysis.run import Analysis, analyse
from ..base.records import Cell, VariantRecord
from ..model.benchmarks import BENCHMARKS
from ..store.results import RunData
from ..suites import label
from . import interference
from .costs import costs_text
from .counterparts import counterparts
from .guidelines import guidelines
from .markdown_table import escape, table
from .overlap import overlap_text
from .summary import (
    answer_lines,
    cell_text,
    floor_heading,
    floor_text,
    machine_line,
    method_lines,
    scoreboard_lines,
    variant_rows,
    variant_settings,
    verdict_text,
)
from .topology import placement_lines


def _costs(data: RunData) -> list[str]:
    c = costs_text(data)
    if c is None:
        return []
    out = ["## Costs", "", *table([*map(escape, c.header)], ([*map(escape, row)] for row in c.rows),
                                  left=2)]
    same = [f"{c.same} more pairs of variants of one implementation are indistinguishable"]
    out += [""] + [f"- {escape(line)}" for line in c.verdicts + same[:bool(c.same)] + c.notes]
    return [*out, ""]


def _guidelines(data: RunData) -> list[str]:
    g = guidelines(data)
    if g is None:
        return []
    out = ["## Self-consistency guidelines", "", escape(g.lead), "",
           *table(["variant", "checked", "held", "violated", "undecided"],
                  ([row.variant, row.checked, row.held, row.violated, row.undecided]
                   for row in g.variants))]
    for row in g.variants:
        lines = ([f"violated: {x}" for x in row.violations] + [f"so: {x}" for x in row.advice]
                 + row.unchecked)
        if lines:
            out += ["", f"**{row.variant}**", ""] + [f"- {escape(x)}" for x in lines]
    return [*out, ""]


def _overlap(data: RunData) -> list[str]:
    o = overlap_text(data)
    if o is None:
        return []
    out = ["## Non-blocking collectives: what computation hides", "", escape(o.lead), "",
           *table([*map(escape, o.header)], ([*map(escape, row)] for row in o.rows))]
    return [*out, ""] + [f"- {escape(line)}" for line in o.background] + [""]


def _counterparts(data: RunData) -> list[str]:
    c = counterparts(data)
    if c is None:
        return []
    out = ["## Beside MPI-1", "", escape(c.lead), ""]
    out += [f"- **{line.variant}** {escape(line.pair)} ({escape(line.question)}): "
            f"{escape('; '.join(line.cells))}" for line in c.lines]
    return [*out, ""]


def _first_line(text: str) -> str:
    return text.splitlines()[0] if text else ""


def _result_row(a: Analysis, key: Cell) -> list[str]:
    """A size's figures, the lowest in bold and starred."""
    best = a.best(key)
    row = [BENCHMARKS[key.bench].size_text(key.size) if BENCHMARKS[key.bench].sized else ""]
    for variant in a.data.variants:
        text = cell_text(a, key, variant)
        row.append(f"**{text} \\***" if variant == best else text)
    return row


def render_markdown(data: RunData, baseline: str | None = None,
                    variants: list[VariantRecord] | None = None) -> str:
    """The summary as Markdown; `variants` are the store's variant rows (env, args, binding)."""
    a = analyse(data, baseline)
    run = data.run
    named = label(run.suite).replace(run.suite, f"**{run.suite}**")
    out = [f"# mpiarena run {data.run_id}", "",
           f"{named[0].upper()}{named[1:]}, {run.started}, {data.status}, seed {run.seed}, "
           f"mpiarena {run.version}  ",
           f"`{run.command}`", "",
           *(f"{escape(line)}  " for line in answer_lines(a)), "",
           *(f"**{escape(line)}**  " for line in interference.run_lines(data)), "",
           f"**Machine**: {escape(machine_line(data))}, topology "
           f"{data.settings.topology}", "",
           *(f"{escape(line)}  " for line in placement_lines(data)), "",
           "## Implementations", "",
           *table(["id", "library version", "origin", "wrapper"],
                  ([impl.impl_id, escape(_first_line(impl.version_string)), impl.origin,
                    f"`{impl.wrapper}`"] for impl in data.implementations), left=4)]
    rows = variant_rows(data, variants)
    if any(variant_settings(v) != "defaults" or v.binding != "auto" for v in rows):
        out += ["", *table(["variant", "settings", "binding"],
                           ([v.variant, f"`{variant_settings(v)}`", v.binding] for v in rows),
                           left=3)]
    out += ["", "## The answer", ""]
    out += [f"- {escape(line.strip())}" if line.startswith(" ") else f"\n{escape(line)}\n"
            for line in scoreboard_lines(a)]
    if a.warnings:
        out += ["", "## Warnings", ""]
        out += [f"- **{w.level}**: {escape(w.text)}" for w in a.warnings]
    out += ["", "## Verdicts", ""]
    for keys in a.tables.values():
        for key in a.summary_keys(keys):
            out += [f"- {escape(verdict_text(a.label(key), v))}" for v in a.judged.get(key, [])]
    if not a.judged:
        out.append("None: no cell has two variants that measured it.")
    out += ["", "## Results", "", "Medians of launch medians; **\\*** marks the lowest of a row.",
            ""]
    for (bench, np_), keys in a.tables.items():
        spec = BENCHMARKS[bench]
        floored = any(floor_text(a, key) for key in keys)
        out += [f"### {escape(a.title(bench, np_))}", "",
                *table(["size" if spec.sized else "", *a.data.variants,
                        *([floor_heading(a)] if floored else [])],
                       ([*_result_row(a, key), *([floor_text(a, key)] if floored else [])]
                        for key in keys), left=0), ""]
    out += _costs(data)
    out += _overlap(data)
    out += _guidelines(data)
    out += _counterparts(data)
    out += ["## Method", ""]
    for line in method_lines(data):
        out += [escape(line), ""]
    return "\n".join(out)


