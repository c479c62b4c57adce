"""`mpiarena export`: one run's observations, or its summary, as CSV or JSON; its figures as
ReFrame perflog lines."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..errors import ArenaError
from ..report import export
from ..results import load
from . import options
from .options import db_option, output_option


@click.command("export")
@click.argument("run", default="latest")
@click.option("--format", "fmt", type=click.Choice(["csv", "json", "perflog"]), default="csv",
              show_default=True)
@click.option("--summary", is_flag=True,
              help="what the tables and verdicts say (one record per variant and cell) instead "
                   "of every observation")
@output_option("file (default: stdout)")
@db_option
def export_cmd(run: str, fmt: str, summary: bool, output: str | None, db: str) -> None:
    """Every observation of one run, every rank, as CSV or JSON; or, with --summary, its
    figures, intervals and verdicts (schema: report/summary.schema.json); --format perflog:
    ReFrame performance log lines, one per cell, variant and figure. An app run: every launch
    and the MPI calls of the profiled ones (CSV: a `record` column tells them apart)."""
    from ..analysis.program import analyze, is_app_run
    from ..report import program_export

    store = options.existing_store(db)
    run_id = store.resolve(run)
    app = is_app_run(store.run(run_id))
    if fmt == "perflog" and app:
        raise ArenaError(f"run {run_id} is an app run; --format perflog writes a benchmark run's "
                         "figures (export an app run as csv or json)")
    if fmt == "perflog":
        from ..analysis.run import analyse
        from ..report.perflog import to_perflog

        text = to_perflog(analyse(load(store, run_id)))
    elif summary and app:
        from ..analysis.tuned_app import is_tune_run, tune_result
        from ..report.tuned_app import tuned_summary

        result = analyze(store, run_id)
        tuned = tuned_summary(tune_result(store, run_id)) if is_tune_run(result.run) else None
        text = program_export.summary_csv(result) if fmt == "csv" else \
            program_export.summary_json(result, load(store, run_id), tuned)
    elif summary:
        from ..analysis.run import analyse
        from ..report import summary_export

        a = analyse(load(store, run_id))
        text = summary_export.to_csv(a) if fmt == "csv" else summary_export.to_json(a)
    elif app:
        text = program_export.to_csv(store, run_id) if fmt == "csv" else \
            program_export.to_json(store, run_id)
    else:
        text = export.to_csv(store, run_id) if fmt == "csv" else export.to_json(store, run_id)
    if output:
        Path(output).write_text(text)
    else:
        sys.stdout.write(text)
