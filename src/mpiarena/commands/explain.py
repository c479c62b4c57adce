"""`mpiarena explain`: why one variant is faster than another, from the fitted models."""

from __future__ import annotations

import click

from ..results import load
from . import options
from .options import console, db_option


@click.command("explain")
@click.argument("run")
@click.argument("variant_a")
@click.argument("variant_b")
@click.option("--bench", default="pingpong", show_default=True,
              help="a point-to-point or collective benchmark the run measured over sizes")
@click.option("--np", "np_", type=click.IntRange(min=1),
              help="rank count (default: the lowest the run measured the benchmark at)")
@db_option
def explain_cmd(run: str, variant_a: str, variant_b: str, bench: str, np_: int | None,
                db: str) -> None:
    """Why VARIANT_A and VARIANT_B of RUN differ, per size range: the cells measured there, the
    start-up and per-byte costs of each one's fitted line with their intervals, and where each
    switches protocol; 'cannot tell' where the verdict rule does not decide."""
    from ..analysis.explain import explain
    from ..report.explain import explanation_lines

    store = options.existing_store(db)
    data = load(store, store.resolve(run))
    for line in explanation_lines(explain(data, variant_a, variant_b, bench, np_)):
        console.print(line, soft_wrap=True, markup=False, highlight=False)
