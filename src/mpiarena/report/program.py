"""What `mpiarena program`, `show`, `report` and `compare` say of a program run: per figure each
library's median and the verdicts, where a wall-time difference comes from, the profiler's
overhead, every failed launch and warning, each launch's output, and what changed between two
program runs."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..analysis.program import Decomposition, ProgramFigure, ProgramResult
from ..analysis.program_compare import ProgramChange
from ..analysis.stats import CONFIDENCE, Verdict
from ..base import units
from ..model.programs import WALL
from ..system.machine_load import BUSY
from .costs import cost_verdict_text
from .summary import verdict_text
from .terminal import MOVEMENT_COLOURS, MOVEMENT_ORDER

PROFILER = ("one profiled launch per library (PMPI library preloaded, apart from the timed "
            "launches); seconds are per rank, the mean over ranks")
TIMED = ("wall time: launch to exit of the library's launcher, measured by mpiarena around the "
         "whole launch (start-up and shut-down included); a launch is the unit of the statistics")
NO_FLOOR = ("no machine floor: a program's wall time has none (the floor bounds mpiarena's own "
            "message-passing figures)")


@dataclass
class ProgramText:
    """A program run in words and rows, for every renderer."""

    title: str
    method: list[str]
    header: list[str]
    rows: list[list[str]]  # one per variant: its median per figure
    verdicts: list[str]
    decompositions: list[str]
    overheads: list[str]
    failures: list[str]
    warnings: list[str] = field(default_factory=list)


def _value(fig: ProgramFigure, variant: str) -> str:
    values = fig.values.get(variant, [])
    if not values:
        return "-"
    mid = fig.center(variant)
    text = units.seconds(mid) if fig.name == WALL else f"{mid:.4g}"
    return f"{text} ({len(values)})"


def _verdict(fig: ProgramFigure, v: Verdict) -> str:
    if not fig.higher:
        return verdict_text(fig.name, v)
    return cost_verdict_text(fig.name, f"gave a {{r}}x higher {fig.name} than", v)


def decomposition_line(d: Decomposition) -> str:
    """'openmpi against mpich: +1.1 s wall per launch; MPI_Allreduce +0.8 s, ...; outside the
    profiled MPI calls: no difference'."""
    small = max(1e-3, 0.05 * abs(d.wall_delta))  # below this a difference is not named
    shown = [f for f in d.functions if abs(f.delta) >= small][:4]
    parts = [f"{f.function} {_signed(f.delta)}" for f in shown] or ["no MPI function differs"]
    outside = "no difference" if abs(d.outside) < small else _signed(d.outside)
    undecided = "" if d.decided else " (the wall-time difference itself is undecided)"
    return (f"{d.slow} against {d.fast}: {_signed(d.wall_delta)} wall per launch{undecided}; "
            f"{', '.join(parts)} (all MPI calls {_signed(d.mpi_delta)}); "
            f"outside the profiled MPI calls (compute, start-up, calls not wrapped): {outside}")


def _signed(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "?"
    return ("+" if seconds >= 0 else "-") + units.seconds(abs(seconds))


def program_text(r: ProgramResult) -> ProgramText:
    s = r.run.settings
    program = " ".join(s.get("program", [])) or "(prebuilt binaries, no arguments)"
    how = {k: p.get("how", "") for k, p in s.get("programs", {}).items()}
    title = (f"program run {r.run.id}: {program} on {r.np} ranks, "
             f"{s.get('launches')} timed launches per library"
             + (f" after {s['warmup']} warm-up" if s.get("warmup") else "")
             + f" ({', '.join(sorted(set(how.values())))})")
    header = ["library", *(f"{f.name}{' (higher is better)' if f.higher else ''}"
                           for f in r.figures)]
    rows = [[v, *(_value(f, v) for f in r.figures)] for v in r.variants]
    verdicts = [_verdict(f, v) for f in r.figures for v in f.verdicts]
    warnings = []
    for f in r.figures:
        if f.name != WALL and not any(f.values.values()):
            warnings.append(f"metric '{f.name}' never matched the output of any launch: check "
                            "its pattern against the stored output ('mpiarena show "
                            "--launch-output')")
        elif f.name != WALL:
            warnings += [f"metric '{f.name}' not found in {n} of {v}'s good launches"
                         for v, n in f.missing.items() if n]
    warnings += [f"{v}: in {n} timed launches other processes took over {BUSY:.0%} of the "
                 "machine: those figures are not the library's alone" for v, n in r.busy.items()
                 if n]
    if r.np > 2:
        warnings.append(f"{r.np} ranks on {r.run.machine.get('cores', '?')} cores: libraries "
                        "that poll while waiting measure the scheduler as well")
    failures = [f"{v}: {x.kind} launch {x.index} {x.status}: {x.reason}"
                for v, xs in r.failed().items() for x in xs]
    overheads = [f"{o.variant}: profiled launch {units.seconds(o.profiled)} against the timed "
                 f"median {units.seconds(o.timed)}: {o.share:+.1%}" for o in r.overheads]
    return ProgramText(title, [TIMED, PROFILER, NO_FLOOR], header, rows, verdicts,
                       [decomposition_line(d) for d in r.decompositions], overheads, failures,
                       warnings)


def render(r: ProgramResult, console: Console) -> None:
    t = program_text(r)
    console.print(f"[bold]{t.title}[/]", soft_wrap=True)
    table = Table()
    for h in t.header:
        table.add_column(h, justify="left" if h == "library" else "right")
    for row in t.rows:
        table.add_row(*row)
    console.print("median (launches) per library:")
    console.print(table)
    for line in t.verdicts:
        console.print(line, soft_wrap=True, markup=False)
    if t.decompositions:
        console.print("[bold]where the wall-time difference comes from[/] "
                      "(profiled launches, seconds per rank):")
        for line in t.decompositions:
            console.print(f"  {line}", soft_wrap=True, markup=False)
    if t.overheads:
        console.print("[bold]profiler overhead[/] (one launch each: noisy):")
        for line in t.overheads:
            console.print(f"  {line}", soft_wrap=True, markup=False)
    for line in t.failures:
        console.print(f"[red]failed:[/] {line}", soft_wrap=True)
    for line in t.warnings:
        console.print(f"[yellow]warning:[/] {line}", soft_wrap=True)


def change_line(c: ProgramChange) -> str:
    """'regression wall, mpich-4.0.2: x1.20 (95% CI 1.10-1.31, p=0.004, launches 6/6)'; a
    higher-is-better figure as its own ratio (x0.83 bw: lower after)."""
    name = c.variant if c.variant == c.other else f"{c.variant} -> {c.other}"
    ratio, lo, hi = (1 / c.ratio, 1 / c.ci_high, 1 / c.ci_low) if c.higher else \
        (c.ratio, c.ci_low, c.ci_high)
    return (f"{c.outcome} {c.figure}, {name}: x{ratio:.2f} {c.figure} "
            f"({CONFIDENCE:.0%} CI {lo:.2f}-{hi:.2f}, p={c.p_adjusted:.2g}, "
            f"launches {c.launches_a}/{c.launches_b})")


def render_changes(a: ProgramResult, b: ProgramResult, changes: list[ProgramChange],
                   console: Console, show_all: bool) -> None:
    """What changed from program run a to program run b, regressions first."""
    console.print(f"[bold]Program run {a.run.id}[/] ({a.run.started}) against [bold]program run "
                  f"{b.run.id}[/] ({b.run.started}); a ratio is b over a", soft_wrap=True)
    shown = [c for c in changes if show_all or c.outcome.decided]
    for c in sorted(shown, key=lambda c: (MOVEMENT_ORDER[c.outcome], -abs(math.log(c.ratio)))):
        colour = MOVEMENT_COLOURS.get(c.outcome, "dim")
        console.print(f"  [{colour}]{escape(change_line(c))}[/]", soft_wrap=True)
    counts = {k: sum(c.outcome == k for c in changes) for k in MOVEMENT_ORDER}
    console.print(", ".join(f"{n} {k}" for k, n in counts.items())
                  + f" of {len(changes)} figures and libraries")


def output_lines(r: ProgramResult, lines: int) -> list[str]:
    """Every launch: what it was and how it ended, then the last `lines` lines of its stored
    stdout and stderr."""
    out = []
    for x in r.launches:
        out.append(f"launch {x.id}: {x.variant} {x.kind} {x.index}, {x.status}"
                   + (f" ({x.reason})" if x.reason else "")
                   + f", exit {x.exit_code if x.exit_code is not None else '-'}, wall "
                   + (units.seconds(x.wall) if math.isfinite(x.wall) else "-"))
        for name, text in (("stdout", x.stdout), ("stderr", x.stderr)):
            kept = text.splitlines()
            if not kept:
                continue
            shown = kept[-lines:]
            out.append(f"  {name} (last {len(shown)} of {len(kept)} lines kept):"
                       if len(shown) < len(kept) else f"  {name}:")
            out += [f"    {line}" for line in shown]
    return out
