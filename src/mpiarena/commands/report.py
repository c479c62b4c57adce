"""`mpiarena report`: an HTML report or a Markdown summary of one run."""

from __future__ import annotations

from pathlib import Path

import click

from . import options
from .options import check_baseline, db_option, existing_run, output_option, write_report


@click.command("report")
@click.argument("run", default="latest")
@click.option("--baseline", help="variant id the relative figures compare with (default: the "
              "first)")
@output_option("file (default: report.html or report.md)")
@click.option("--format", "fmt", type=click.Choice(["html", "md"]), default="html",
              show_default=True)
@db_option
def report_cmd(run: str, baseline: str | None, output: str | None, fmt: str, db: str) -> None:
    """A self-contained HTML report (or a Markdown summary) of one run."""
    from ..analysis.program import analyze, is_app_run
    from ..analysis.simulated import is_simulated

    data, variants = existing_run(db, run)
    check_baseline(data, baseline)
    if is_app_run(data.run):
        result = analyze(options.store(db), data.run_id)
        if fmt == "html":
            from ..analysis.tuned_app import is_tune_run, tune_result
            from ..report.program_html import render_app_html
            tuned = tune_result(options.store(db), data.run_id) \
                if is_tune_run(data.run) else None
            text = render_app_html(result, data, tuned)
        else:
            from ..report.program_markdown import render_app_markdown
            text = render_app_markdown(result, data)
    elif is_simulated(data.run):  # deterministic: no intervals, verdicts or oversubscription
        from ..report import simulated
        text = simulated.html(data) if fmt == "html" else simulated.markdown(data)
    elif fmt == "html":
        from ..report.html import render_html
        text = render_html(data, baseline, variants)
    else:
        from ..report.markdown import render_markdown
        text = render_markdown(data, baseline, variants)
    write_report(Path(output or f"report.{fmt}"), text)
