"""`mpiarena explain`: why one variant is faster than another, from the fitted models."""

from __future__ import annotations

import click

from ..store.results import load
from . import stores, suite_options
from .consoles import console
from .stores import db_option
from .suite_options import RANK_COUNTS


@click.command("explain")
@click.argument("run")
@click.argument("variant_a")
@click.argument("variant_b")
@click.option("--bench", metavar="BENCHMARKS", default="pingpong", show_default=True,
              help="comma-separated point-to-point or collective benchmarks the run measured "
              "over sizes, each explained in turn")
@click.option("--np", "nps", type=RANK_COUNTS, help="comma-separated rank counts, each "
              "explained in turn (default: the lowest the run measured each benchmark at)")
@db_option
def explain_cmd(run: str, variant_a: str, variant_b: str, bench: str,
                nps: tuple[int, ...] | None, db: str) -> None:
    """Why VARIANT_A and VARIANT_B of RUN differ, per size range: the cells measured there, the
    start-up and per-byte costs of each one's fitted line with their intervals, and where each
    switches protocol; 'cannot tell' where the verdict rule does not decide."""
    # here, not at the top: ~60 ms more start-up for every command
    from ..analysis.explain import explain
    from ..report.explain import explanation_lines

    store = stores.existing_store(db)
    data = load(store, store.resolve(run))
    for one in suite_options.benchmarks(bench) or ():
        for np_ in nps or (None,):
            for line in explanation_lines(explain(data, variant_a, variant_b, one, np_)):
                console.print(line, soft_wrap=True, markup=False, highlight=False)
