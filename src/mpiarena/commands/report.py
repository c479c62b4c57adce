"""`mpiarena report`: an HTML report or a Markdown summary of one run."""

from __future__ import annotations

from pathlib import Path

import click

from ..report.renderers import Format, RenderOptions, render
from ..report.source import RunSource
from . import stores
from .consoles import console
from .report_files import output_option, write_report
from .stores import check_baseline, db_option


@click.command("report")
@click.argument("run", default="latest")
@click.option("--baseline", help="variant id the relative figures compare with (default: the "
              "first)")
@output_option("file (default: report.html or report.md)")
@click.option("--format", "fmt", type=click.Choice(["html", "md"]), default="html",
              show_default=True)
@db_option
def report_cmd(run: str, baseline: str | None, output: str | None, fmt: str, db: str) -> None:
    """A self-contained HTML report (or a Markdown summary) of one run (an id from 'list';
    default: latest)."""
    store = stores.existing_store(db)
    source = RunSource(store, store.resolve(run))
    check_baseline(source.data, baseline)
    text = render(source, Format(fmt), RenderOptions(console, baseline=baseline))
    write_report(Path(output or f"report.{fmt}"), text)
