"""The terminal summary: the scoreboard and a line per kind of warning first; then, asked for, a
table per benchmark with verdict lines in hyperfine's manner."""

from __future__ import annotations

import math

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ..analysis.answer import wall_seconds
from ..analysis.compare import MIN_CELLS, Change, Drift
from ..analysis.run import Analysis, Level, against_reference, analyse, notice_kinds
from ..analysis.sampling import precision_reached
from ..analysis.stats import CONFIDENCE
from ..analysis.verdicts import Movement, Speed
from ..analysis.whatran import run_configs
from ..base import units
from ..base.records import Cell
from ..base.sizes import format_size
from ..model.benchmarks import BENCHMARKS
from ..store.results import RunData
from ..suites import label
from . import interference
from .app_kernels import app_kernels
from .costs import costs_text
from .counterparts import counterparts
from .guidelines import guidelines
from .overlap import overlap_text
from .summary import (
    answer_lines,
    cell_text,
    derived_text,
    floor_heading,
    floor_text,
    implementation_line,
    machine_line,
    method_lines,
    scoreboard_lines,
    steadiness_line,
    switch_text,
    verdict_text,
)
from .tables import show
from .text import NO_BREAK, wrapped
from .topology import placement_lines
from .whatran import binding_line

COLOURS = {Level.ERROR: "red", Level.WARN: "yellow", Level.INFO: "dim"}
# a change's colour where decided, and the order changes are listed in
MOVEMENT_COLOURS = {Movement.REGRESSION: "red", Movement.IMPROVEMENT: "green"}
MOVEMENT_ORDER = {Movement.REGRESSION: 0, Movement.IMPROVEMENT: 1, Movement.UNDECIDED: 2,
                  Movement.INDISTINGUISHABLE: 3}
HELD = "; within the run drift"  # after a change that the launches decided and the drift did not


def render(data: RunData, console: Console, all_verdicts: bool = False,
           tables: bool = False, method: bool = False, costs: bool = False) -> None:
    """The answer first (the fastest MPI library, where that holds, the ranking, what is not MPI
    beside it), then one line per kind of warning and who won each benchmark; the machine, the
    versions and the method with `method`; the tables per benchmark with their verdicts with
    `tables`; the costs table with `costs`; with `all_verdicts` all of it, and also every
    size's verdict and every warning's details."""
    a = analyse(data)
    run = data.run
    took = wall_seconds(data)
    say(console, f"Run {data.run_id} ({data.status}) {label(run.suite)}, {run.started}"
                 + (f", took {units.duration(took)}" if took is not None else "")
                 + f", seed {run.seed}", "bold")
    for line in answer_lines(a):
        say(console, line, "" if line.startswith(" ") else "bold")
    for line in interference.run_lines(data):
        say(console, line, "yellow")
    notices = a.warnings if all_verdicts else notice_kinds(a.warnings)
    for notice in notices:
        say(console, notice.text, lead=(f"{notice.level}:", COLOURS[notice.level]))
    configs = run_configs(data)
    for line in [*configs.warnings, *map(binding_line, configs.binding)]:
        say(console, f"{line} (mpiarena show {data.run_id} --config)",
            lead=("warn:", COLOURS[Level.WARN]))
    for line in scoreboard_lines(a):
        say(console, line, "" if line.startswith(" ") else "bold")
    for line in placement_lines(data):  # off this machine: where the ranks ran
        say(console, line, "dim")
    if method or all_verdicts:
        _setup(data, console)
    if tables or all_verdicts:
        _tables(a, console, all_verdicts)
    if costs or all_verdicts:
        _costs(data, console)
    _overlap(data, console)
    _guidelines(data, console)
    _counterparts(data, console)
    _app_kernels(data, console)
    if precision := data.settings.precision:
        _precision_summary(data, precision, console)
    more = [f"{flag} ({what})" for flag, what, shown in (
        ("--tables", "a table per benchmark with its verdicts", tables),
        ("--method", "machine, versions, how calls were timed", method),
        ("--costs", "CPU, memory, threads", costs)) if not (shown or all_verdicts)]
    if more:
        rid = data.run_id
        say(console, f"More: mpiarena show{NO_BREAK}{rid} {', '.join(more)}; --all for every "
                     f"verdict and warning; HTML report: mpiarena report{NO_BREAK}{rid}", "dim")


def _setup(data: RunData, console: Console) -> None:
    """The machine, each implementation's version and the method."""
    say(console, f"Machine: {machine_line(data)}", "dim")
    for impl in data.implementations:
        say(console, f"  {implementation_line(impl)}", "dim")
    for line in method_lines(data):
        say(console, line, "dim")


def say(console: Console, text: str, style: str = "",
        lead: tuple[str, str] | None = None) -> None:
    """One line of plain text wrapped to the console's width, its continuation lines indented
    two more than it, a size or time never split from its unit; `lead` a word before it in its
    own style ("warn:", "yellow")."""
    head = f"{lead[0]} " if lead else ""
    for i, line in enumerate(wrapped(head + text, console.width)):
        out = Text(line, style=style)
        if i == 0 and lead:
            out = Text.assemble((lead[0], lead[1]), Text(line[len(lead[0]):], style=style))
        console.print(out, soft_wrap=True)


def _tables(a: Analysis, console: Console, all_verdicts: bool) -> None:
    """A table per benchmark and rank count, its verdicts under it."""
    for (bench, np_), keys in a.tables.items():
        _table(a, bench, np_, keys, console)
        for key in keys if all_verdicts else a.summary_keys(keys):
            for v in a.judged.get(key, []):
                colour = {Speed.FASTER: "green", Speed.UNDECIDED: "yellow"}.get(v.outcome, "")
                say(console, f"  {verdict_text(a.label(key), v)}", colour)
        if bench == "pingpong" and np_ == 2:
            _pingpong_figures(a, console)
    if line := steadiness_line(a):
        say(console, line, "dim")
    _against_the_reference(a.data, console)


def _table(a: Analysis, bench: str, np_: int, keys: list[Cell], console: Console) -> None:
    spec = BENCHMARKS[bench]
    table = Table()
    table.add_column("size" if spec.sized else "", justify="right")
    floored = any(floor_text(a, key) for key in keys)
    for variant in a.data.variants:
        table.add_column(variant, justify="right")
    if floored:
        table.add_column(floor_heading(a), justify="right", style="dim")
    for key in keys:
        best = a.best(key)
        row = [spec.size_text(key.size) if spec.sized else ""]
        for variant in a.data.variants:
            text = cell_text(a, key, variant)
            row.append(f"[bold green]{text} *[/]" if variant == best else text)
        table.add_row(*row, *([floor_text(a, key)] if floored else []))
    show(console, a.title(bench, np_), table)


def text_table(header: list[str], rows: list[list[str]], left: int) -> Table:
    """A table of plain text: the first `left` columns left-aligned (the first never wrapped),
    the others right-aligned."""
    table = Table()
    for i, name in enumerate(header):
        table.add_column(escape(name), justify="left" if i < left else "right", no_wrap=i == 0)
    for row in rows:
        table.add_row(*map(escape, row))
    return table


def _costs(data: RunData, console: Console) -> None:
    """What each library costs the program, with verdicts and details."""
    c = costs_text(data)
    if c is None:
        return
    show(console, c.title, text_table(c.header, c.rows, left=2))
    for line in c.verdicts:
        say(console, f"  {line}")
    if c.same:
        say(console, f"  {c.same} more pairs of variants of one implementation are "
                     "indistinguishable", "dim")
    for line in c.notes:
        say(console, f"  {line}", "dim")


def _guidelines(data: RunData, console: Console) -> None:
    """Per library: guidelines checked and held, each violation, what it means for the user."""
    g = guidelines(data)
    if g is None:
        return
    console.print("[bold]Self-consistency guidelines[/]: does a library's collective lose to "
                  "its own building blocks?")
    console.print(f"[dim]{escape(g.lead)}[/]")
    for row in g.variants:
        colour = "red" if row.violated else "green"
        console.print(f"  [bold]{escape(row.variant)}[/]: [{colour}]{escape(row.counts)}[/]")
        for line in row.violations:
            console.print(f"    [red]violated[/]: {escape(line)}")
        for line in row.advice:
            console.print(f"    [yellow]so[/]: {escape(line)}")
        for line in row.unchecked:
            console.print(f"    [dim]{escape(line)}[/]")


def _overlap(data: RunData, console: Console) -> None:
    """Non-blocking collectives: what computation hides, with and without MPI_Test."""
    o = overlap_text(data)
    if o is None:
        return
    show(console, "non-blocking collectives: % hidden by computation, without / with MPI_Test",
         text_table(o.header, o.rows, left=1))
    console.print(f"  [dim]{escape(o.lead)}[/]")
    for line in o.background:
        console.print(f"  {escape(line)}")


def _counterparts(data: RunData, console: Console) -> None:
    """MPI beyond MPI-1 beside its counterpart in the same library."""
    c = counterparts(data)
    if c is None:
        return
    console.print("[bold]Beside MPI-1[/]: each benchmark against its counterpart in the same "
                  "library")
    console.print(f"[dim]{escape(c.lead)}[/]")
    for line in c.lines:
        console.print(f"  [bold]{escape(line.variant)}[/] {escape(line.pair)} "
                      f"[dim]({escape(line.question)})[/]: {escape('; '.join(line.cells))}")


def _app_kernels(data: RunData, console: Console) -> None:
    """The application kernels: wall time, time per kind of call and the correctness check."""
    a = app_kernels(data)
    if a is None:
        return
    table = Table()
    for name in a.header:
        table.add_column(name, justify="right" if name in ("size", "ranks", "wall") else "left")
    for row in a.rows:
        table.add_row(*map(escape, row))
    show(console, "application kernels: wall time, time inside each kind of call (slowest rank, "
         "share of the wall time), correctness", table)
    for line in a.invalid:
        console.print(f"  [red]{escape(line)}[/]")


def _pingpong_figures(a: Analysis, console: Console) -> None:
    """Derived figures and protocol switches under the pingpong table."""
    for variant, d in a.derived.items():
        say(console, f"  {derived_text(variant, d)}", "dim")
    for variant, found in a.switches.items():
        for switch in found:
            say(console, f"  {switch_text(variant, switch)}", "dim")


def _against_the_reference(data: RunData, console: Console) -> None:
    """Each library's pingpong bandwidth in times the reference's (raw TCP), at the largest size
    the reference measured: a reference, not a ceiling (shared memory beats it)."""
    found = against_reference(data)
    if found is None:
        return
    ref, size, times = found
    for variant, x in times.items():
        console.print(f"{variant}: {x:.2f} times the pingpong bandwidth of {ref} "
                      f"(the reference) at {format_size(size)}")


def _precision_summary(data: RunData, precision: float, console: Console) -> None:
    """How many launches each cell needed for the precision asked, and which never got it."""
    console.print(f"[bold]Adaptive sampling[/] to +-{precision:.1%} of the figure (95% CI over "
                  f"launches), at most {data.settings.max_time} s per cell:")
    for p in precision_reached(data, precision):
        console.print(f"  {p.variant}: {p.cells - len(p.missed)} of {p.cells} cells reached "
                      f"it (launches {p.launches[0]}-{p.launches[-1]})")
        for m in p.missed:
            size = BENCHMARKS[m.key.bench].size_text(m.key.size)
            console.print(f"    [yellow]never[/]: {m.key.bench} {size} at {m.key.np} ranks "
                          f"({m.launches} launches, {m.observations} observations, "
                          f"+-{m.halfwidth:.1%})")


def render_changes(a: RunData, b: RunData, changes: list[Change], console: Console,
                   show_all: bool) -> None:
    """What changed from run a to run b, regressions first."""
    console.print(f"[bold]Run {a.run_id}[/] ({a.run.started}, {escape(machine_line(a))})",
                  soft_wrap=True)
    console.print(f"against [bold]run {b.run_id}[/] ({b.run.started}, "
                  f"{escape(machine_line(b))})", soft_wrap=True)
    shown = [c for c in changes if show_all or c.outcome.decided]
    for c in sorted(shown, key=lambda c: (MOVEMENT_ORDER[c.outcome], -abs(np.log(c.ratio)))):
        bench, size, np_ = c.key
        where = f"{bench} {BENCHMARKS[bench].size_text(size)}" if BENCHMARKS[bench].sized else bench
        name = c.variant if c.variant == c.other else f"{c.variant} -> {c.other}"
        colour = MOVEMENT_COLOURS.get(c.outcome, "dim")
        console.print(f"  [{colour}]{c.outcome}[/] {where}, {np_} ranks, {name}: x{c.ratio:.2f} "
                      f"time ({CONFIDENCE:.0%} CI {c.ci_low:.2f}-{c.ci_high:.2f}, "
                      f"p={c.p_adjusted:.2g}, launches {c.launches_a}/{c.launches_b}"
                      f"{HELD if c.held else ''})")
    counts = {k: sum(c.outcome == k for c in changes) for k in MOVEMENT_ORDER}
    console.print(", ".join(f"{n} {k}" for k, n in counts.items()) + f" of {len(changes)} cells")
    if changes:
        console.print(escape(drift_line(changes[0].drift, sum(c.held for c in changes))),
                      soft_wrap=True)


def drift_line(drift: Drift, held: int, between: str = "the runs",
               measured: str = "cells") -> str:
    """How far figures drifted between runs beyond their launches' noise, and how that widened
    the rule (or that drift is not covered)."""
    if not drift.covered:
        return (f"Run drift between {between}: not covered (only {drift.cells} of the "
                f"{MIN_CELLS} {measured} it takes to measure it): drift that no launch saw lies "
                "outside every interval")
    where = f"robust sd over {drift.cells} {measured} of {drift.variants} variants" + (
        ", so a change common to all of them counts as drift" if drift.variants == 1 else "")
    if drift.spread == 0:
        return (f"Run drift between {between}: none beyond the launches' noise ({where}): the "
                "launches' rule alone")
    return (f"Run drift between {between}: {drift.spread:.1%} beyond the launches' noise "
            f"({where}); each interval widened by x{math.exp(drift.allowance):.2f} "
            f"({drift.reach:.2f} sd, in quadrature) before a change or indistinguishable is "
            f"called: {held} that the launches alone decided stay undecided")
