"""`mpiarena compare`: the same implementations across two runs."""

from __future__ import annotations

import click

from ..errors import ArenaError
from ..results import load
from . import options
from .options import console, db_option, err


@click.command("compare")
@click.argument("run_a")
@click.argument("run_b")
@click.option("--pair", "pairs", multiple=True, help="A=B: compare variant A of run A with "
              "variant B of run B (e.g. mpich-4.0.2=mpich-5.0.2 after an upgrade)")
@click.option("--all", "show_all", is_flag=True, help="also list cells that did not change")
@db_option
@click.option("--db-b", help="store of RUN_B, if not the same file (another machine's)")
def compare_cmd(run_a: str, run_b: str, pairs: tuple[str, ...], show_all: bool, db: str,
                db_b: str | None) -> None:
    """The same implementations across two runs: regressions and improvements, with statistics."""
    from ..analysis.compare import compare_runs, timed_differently
    from ..report import terminal

    store_a = options.store(db)
    store_b = options.store(db_b) if db_b else store_a
    a = load(store_a, store_a.resolve(run_a))
    b = load(store_b, store_b.resolve(run_b))
    mapping = dict(p.split("=", 1) for p in pairs if "=" in p)
    if len(mapping) != len(pairs):
        raise ArenaError("--pair takes VARIANT_A=VARIANT_B, e.g. mpich-4.0.2=mpich-5.0.2")
    changes = compare_runs(a, b, mapping or None)
    for (ta, tb), n in timed_differently(a, b, mapping or None).items():
        err.print(f"warn: {n} cells were timed by {ta} in run {a.run_id} and by {tb} in run "
                  f"{b.run_id}: not compared (the method changes the figure); rerun one with "
                  f"the other's method (--sync {ta} or --sync {tb}) to compare them",
                  soft_wrap=True)
    if not changes:
        raise ArenaError(f"runs {a.run_id} and {b.run_id} share no cell of the same variant; "
                         "match variants with --pair A=B")
    terminal.render_changes(a, b, changes, console, show_all)
