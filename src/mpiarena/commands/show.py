"""`mpiarena show`: the summary of one run."""

from __future__ import annotations

import click

from ..errors import ArenaError
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
@click.option("--output", "output", is_flag=True, help="app runs: every launch (library, kind, "
              "status, wall) and the end of its stored stdout and stderr")
@click.option("--lines", type=click.IntRange(min=1), default=20, show_default=True,
              help="with --output: the last lines shown of each launch's stdout and stderr")
@click.option("--config", is_flag=True, help="what ran: each variant's transport and the control "
              "variables that differ from its library's defaults, settings that did not take")
@click.option("--models", is_flag=True, help="fitted models: alpha-beta per protocol regime of "
              "each variant's pingpong, LogGP from the loggp benchmark, collectives predicted "
              "from the models")
@db_option
def show_cmd(run: str, all_verdicts: bool, tables: bool, method: bool, output: bool, lines: int,
             config: bool, models: bool, db: str) -> None:
    """The summary of one run (an id from 'list', or 'latest'): the scoreboard and a line per
    kind of warning; --tables adds a table per benchmark, --all every verdict and warning;
    --config what ran; --models the fitted models. An app run: its medians, verdicts and
    decompositions; --output each launch's output. A tune run: also what each library's
    default behaves like."""
    from ..analysis.fingerprint import fingerprints, tuned_of
    from ..analysis.program import analyze, is_app_run
    from ..analysis.simulated import is_simulated
    from ..report import fingerprint, program, terminal

    store = options.existing_store(db)
    run_id = store.resolve(run)
    if is_app_run(store.run(run_id)) and not output:
        from ..analysis.tuned_app import is_tune_run, tune_result
        from ..report import tuned_app

        if is_tune_run(store.run(run_id)):
            tuned_app.render(tune_result(store, run_id), console)
            return
    if is_app_run(store.run(run_id)):
        result = analyze(store, run_id)
        if output:
            for line in program.output_lines(result, lines):
                console.print(line, soft_wrap=True, markup=False, highlight=False)
        else:
            program.render(result, console)
        return
    if output:
        raise ArenaError(f"run {run_id} is not an app run: --output shows the output of an "
                         "'mpiarena app' run's launches")
    data = load(store, run_id)
    if is_simulated(data.run):
        from ..report.simulated import render

        for line in render(data):
            console.print(line, soft_wrap=True, markup=False, highlight=False)
        return
    if config:
        from ..analysis.whatran import run_configs
        from ..report.summary import implementation_line
        from ..report.topology import rank_lines
        from ..report.whatran import config_lines

        for line in [*map(implementation_line, data.implementations),
                     *config_lines(run_configs(data)), *rank_lines(data)]:
            console.print(line, soft_wrap=True, markup=False, highlight=False)
        return
    if models:
        from ..analysis.loggp import loggp
        from ..analysis.models import fit_models
        from ..analysis.predict import run_predictions
        from ..report.models import loggp_lines, model_lines, prediction_lines

        cores = int(data.machine.get("cores", 1))
        fitted = fit_models(data)
        said = [*model_lines(fitted), *loggp_lines(loggp(data)),
                *prediction_lines(run_predictions(data, fitted), cores)]
        if not said:
            raise ArenaError(f"run {run_id} has nothing to fit a model to: run with --bench "
                             "pingpong (two sizes or more) or --bench loggp")
        for line in said:
            console.print(line, soft_wrap=True, markup=False, highlight=False)
        return
    terminal.render(data, console, all_verdicts, tables, method)
    fingerprint.render(fingerprints(data, tuned_of(data)), console)
