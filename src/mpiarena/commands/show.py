"""`mpiarena show`: the summary of one run."""

from __future__ import annotations

import sys

import click

from ..report.renderers import Format, RenderOptions, render
from ..report.source import RunSource
from . import renames, stores
from .consoles import console
from .stores import db_option


@click.command("show")
@click.argument("run", default="latest")
@click.option("--all", "all_verdicts", is_flag=True,
              help="the tables with a verdict line for every size, and every warning in full")
@click.option("--tables", is_flag=True, help="a table per benchmark with its verdicts, after the "
              "scoreboard")
@click.option("--method", is_flag=True, help="the machine, each library's version, the method "
              "and the verdict rule in full")
@click.option("--costs", is_flag=True, help="what each library costs: thread level, CPU while "
              "waiting, memory, overlap, progress, message rate (where the suite measured them)")
@click.option("--launch-output", "launch_output", is_flag=True, help="program runs: every launch "
              "(library, kind, status, wall) and the end of its stored stdout and stderr")
@renames.renamed("--output", "--launch-output", "launch_output", is_flag=True)
@click.option("--lines", type=click.IntRange(min=1), default=20, show_default=True,
              help="with --launch-output: the last lines shown of each launch's stdout and "
              "stderr")
@click.option("--config", is_flag=True, help="what ran: each variant's transport and the control "
              "variables that differ from its library's defaults, settings that did not take")
@click.option("--models", is_flag=True, help="fitted models: alpha-beta per protocol regime of "
              "each variant's pingpong, LogGP from the loggp benchmark, collectives predicted "
              "from the models")
@db_option
def show_cmd(run: str, all_verdicts: bool, tables: bool, method: bool, costs: bool,
             launch_output: bool, lines: int, config: bool, models: bool, db: str) -> None:
    """The summary of one run (an id from 'list'; default: latest): the answer (the fastest MPI
    library, where that holds, the ranking), a line per kind of warning and who won each
    benchmark; --tables adds a table per benchmark, --method the machine, versions and method,
    --costs the costs, --all every verdict and warning;
    --config what ran; --models the fitted models. A program run: its medians, verdicts and
    decompositions; --launch-output each launch's output. A tune run: also what each library's
    default behaves like."""
    store = stores.existing_store(db)
    view = Format.OUTPUT if launch_output else Format.CONFIG if config else \
        Format.MODELS if models else Format.TERMINAL
    asked = RenderOptions(console, all_verdicts=all_verdicts, tables=tables, method=method,
                          costs=costs, lines=lines)
    sys.stdout.write(render(RunSource(store, store.resolve(run)), view, asked))
