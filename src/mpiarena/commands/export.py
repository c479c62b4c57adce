"""`mpiarena export`: one run's observations, or its summary, as CSV or JSON; its figures as
ReFrame perflog lines."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..report.renderers import Format, RenderOptions, render
from ..report.source import RunSource
from . import stores
from .consoles import console
from .report_files import output_option
from .stores import db_option

# --summary: the summary in that format (perflog lines are one already)
SUMMARIES = {Format.CSV: Format.SUMMARY_CSV, Format.JSON: Format.SUMMARY_JSON}


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
    """Every observation of one run (an id from 'list'; default: latest), every rank, as CSV or
    JSON; or, with --summary, its figures, intervals and verdicts (schema:
    report/summary.schema.json); --format perflog: ReFrame performance log lines, one per cell,
    variant and figure. A program run: every launch
    and the MPI calls of the profiled ones (CSV: a `record` column tells them apart)."""
    store = stores.existing_store(db)
    asked = Format(fmt)
    if summary:
        asked = SUMMARIES.get(asked, asked)
    text = render(RunSource(store, store.resolve(run)), asked, RenderOptions(console))
    if output:
        Path(output).write_text(text)
    else:
        sys.stdout.write(text)
