"""`mpiarena show`: the summary of one run."""

from __future__ import annotations

import click

from ..results import load
from . import options
from .options import console, db_option


@click.command("show")
@click.argument("run", default="latest")
@click.option("--all", "all_verdicts", is_flag=True,
              help="the tables with a verdict line for every size, and every warning in full")
@click.option("--tables", is_flag=True, help="a table per benchmark with its verdicts, after the "
              "scoreboard")
@click.option("--method", is_flag=True, help="the method and the verdict rule in full")
@db_option
def show_cmd(run: str, all_verdicts: bool, tables: bool, method: bool, db: str) -> None:
    """The summary of one run (an id from 'list', or 'latest'): the scoreboard and a line per
    kind of warning; --tables adds a table per benchmark, --all every verdict and warning."""
    from ..report import terminal

    store = options.store(db)
    terminal.render(load(store, store.resolve(run)), console, all_verdicts, tables, method)
