"""`mpiarena compare`: the same implementations across two runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ..analysis.compare import compare_runs, summed_differently, timed_differently
from ..base.errors import ArenaError
from ..base.records import RunKind
from ..imports.records import imported_suite
from ..model.runs import program_settings
from ..store.results import load
from . import grouping, stores
from .ci import CI, ci_options, finish
from .consoles import console, err
from .stores import db_option

if TYPE_CHECKING:
    from ..analysis.program import ProgramResult


@click.command("compare", cls=grouping.Sectioned)
@click.argument("run_a")
@click.argument("run_b")
@click.option("--pair", "pairs", multiple=True, help="A=B: compare variant A of run A with "
              "variant B of run B (e.g. mpich-4.0.2=mpich-5.0.2 after an upgrade)")
@click.option("--all", "show_all", is_flag=True, help="also list cells that did not change")
@db_option
@click.option("--db-b", help="store of RUN_B, if not the same file (another machine's)")
@ci_options
def compare_cmd(run_a: str, run_b: str, pairs: tuple[str, ...], show_all: bool, db: str,
                db_b: str | None, ci: CI) -> None:
    """The same implementations across two runs: regressions and improvements, with statistics.
    Two program runs: each figure of each library, run B's launches against run A's. With
    --fail-on-regression the exit status is 3 when a regression is decided."""
    # here, not at the top: ~80 ms more start-up for every command
    from ..report import terminal

    store_a = stores.existing_store(db)
    store_b = stores.existing_store(db_b) if db_b else store_a
    id_a, id_b = store_a.resolve(run_a), store_b.resolve(run_b)
    mapping = dict(p.split("=", 1) for p in pairs if "=" in p)
    if len(mapping) != len(pairs):
        raise ArenaError("--pair takes VARIANT_A=VARIANT_B, e.g. mpich-4.0.2=mpich-5.0.2")
    kinds = store_a.run(id_a).kind, store_b.run(id_b).kind
    for run_id, kind in zip((id_a, id_b), kinds, strict=True):
        if kind == RunKind.SIMULATED:
            raise ArenaError(f"run {run_id} is simulated (deterministic, one launch a cell): "
                             "hold it against a measured run with 'mpiarena simulate "
                             "--validate-against RUN', or show it with 'mpiarena show'")
    programs = [kind.runs_a_program for kind in kinds]
    if programs[0] != programs[1]:
        program, other = (id_a, id_b) if programs[0] else (id_b, id_a)
        raise ArenaError(f"run {program} is a program run and run {other} is not: compare two "
                         "program runs, or two benchmark runs")
    if programs[0]:
        # here, not at the top: ~9 ms more start-up for every command
        from ..analysis.program import analyze

        _compare_programs(analyze(store_a, id_a), analyze(store_b, id_b), mapping or None,
                      show_all, ci)
        return
    a = load(store_a, id_a)
    b = load(store_b, id_b)
    changes = compare_runs(a, b, mapping or None, threshold=ci.threshold)
    for (ta, tb), n in timed_differently(a, b, mapping or None).items():
        err.print(f"warn: {n} cells were timed by {ta} in run {a.run_id} and by {tb} in run "
                  f"{b.run_id}: not compared (the method changes the figure); rerun one with "
                  f"the other's method (--sync {ta} or --sync {tb}) to compare them",
                  soft_wrap=True)
    if unlike := summed_differently(a, b):
        kept = (a if imported_suite(a.run.suite) else b).settings.sums  # an import stays
        err.print(f"warn: run {a.run_id} summed {a.settings.sums_name} and run {b.run_id} "
                  f"{b.settings.sums_name}: {', '.join(unlike)} not compared (the datatype "
                  "changes the figure)" + (f"; measure with --datatype {kept.value} to compare "
                                           "like with like" if kept else ""),
                  soft_wrap=True, markup=False)
    if not changes:
        raise ArenaError(f"runs {a.run_id} and {b.run_id} share no cell of the same variant; "
                         "match variants with --pair A=B")
    terminal.render_changes(a, b, changes, console, show_all)
    # here, not at the top: ~6 ms more start-up for every command
    from ..analysis.whatran import run_changes
    from ..report.whatran import change_lines

    shared = mapping or {v: v for v in a.variants if v in b.variants}
    took = change_lines(run_changes(a, b, shared))
    if took:
        console.print("What ran differently (as the libraries reported it):")
        for line in took:
            console.print(f"  {line}", soft_wrap=True, markup=False, highlight=False)
    # here, not at the top: matplotlib, ~460 ms more start-up for every command
    from ..report.junit import compare_cases, to_xml

    cases = compare_cases(changes)
    finish(ci, lambda: to_xml(f"mpiarena compare {a.run_id} {b.run_id}", cases),
           [f"{c.name}: {c.failure}" for c in cases if c.failure])


def _compare_programs(a: ProgramResult, b: ProgramResult, pairs: dict[str, str] | None,
                      show_all: bool, ci: CI) -> None:
    # here, not at the top: ~90 ms more start-up for every command
    from ..analysis.program_compare import compare_programs
    from ..report import program

    id_a, id_b = a.run.id, b.run.id
    programs = [list(program_settings(r.run).program) for r in (a, b)]
    for what, x, y in (("program", *programs), ("ranks", a.np, b.np)):
        if x != y:
            err.print(f"warn: the {what} differs: {_words(x)} in run {id_a}, {_words(y)} in "
                      f"run {id_b}",
                      soft_wrap=True, markup=False)
    changes = compare_programs(a, b, pairs, threshold=ci.threshold)
    if not changes:
        raise ArenaError(f"program runs {id_a} and {id_b} share no figure of the same library; "
                         "match libraries with --pair A=B")
    program.render_changes(a, b, changes, console, show_all)
    # here, not at the top: matplotlib, ~460 ms more start-up for every command
    from ..report.junit import program_cases, to_xml

    cases = program_cases(changes)
    finish(ci, lambda: to_xml(f"mpiarena compare {id_a} {id_b}", cases),
           [c.failure for c in cases if c.failure])


def _words(x: object) -> str:
    return " ".join(map(str, x)) if isinstance(x, list) else str(x)
