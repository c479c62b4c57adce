"""The `report` and `plot` commands (registered in cli.py with `cli.add_command`)."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import ArenaError
from ..results import RunData, load
from ..store import Store

DB_HELP = "results store (SQLite file)"


def _open(db: str, run: str) -> tuple[RunData, list[dict]]:
    if not Path(db).exists():
        raise ArenaError(f"no store at {db}; give --db FILE or start one with 'mpiarena run'")
    store = Store(Path(db))
    run_id = store.resolve(run)
    return load(store, run_id), [dict(r) for r in store.variants(run_id)]


def _check_baseline(data: RunData, baseline: str | None) -> None:
    if baseline is not None and baseline not in data.variants:
        raise ArenaError(f"unknown baseline '{baseline}'; run {data.run_id} has "
                         f"{', '.join(data.variants) or 'no variants'}")


def write_report(path: Path, text: str) -> None:
    """Write a report file; a path that cannot be written is one line naming -o."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as e:
        raise ArenaError(f"cannot write {path}: {e.strerror}; choose another -o FILE") from e
    click.echo(f"wrote {path} ({len(text.encode()) / 1024:.0f} KiB)")


@click.command("report")
@click.argument("run", default="latest")
@click.option("--baseline", help="variant id the relative figures compare with (default: the "
              "first)")
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="file (default: report.html or report.md)")
@click.option("--format", "fmt", type=click.Choice(["html", "md"]), default="html",
              show_default=True)
@click.option("--db", default="mpiarena.db", show_default=True, help=DB_HELP)
def report_cmd(run: str, baseline: str | None, output: str | None, fmt: str, db: str) -> None:
    """A self-contained HTML report (or a Markdown summary) of one run."""
    data, variants = _open(db, run)
    _check_baseline(data, baseline)
    if fmt == "html":
        from .html import render_html
        text = render_html(data, baseline, variants)
    else:
        from .markdown import render_markdown
        text = render_markdown(data, baseline, variants)
    write_report(Path(output or f"report.{fmt}"), text)


@click.command("plot")
@click.argument("run", default="latest")
@click.option("-o", "--output", "out_dir", default="plots", show_default=True,
              type=click.Path(file_okay=False), help="directory for the PNG and SVG files")
@click.option("--baseline", help="variant id the relative figures compare with (default: the "
              "first)")
@click.option("--db", default="mpiarena.db", show_default=True, help=DB_HELP)
def plot_cmd(run: str, out_dir: str, baseline: str | None, db: str) -> None:
    """Every figure of one run as PNG and SVG (e.g. pingpong-np2-time.png)."""
    from . import plots

    data, _ = _open(db, run)
    _check_baseline(data, baseline)
    directory = Path(out_dir)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ArenaError(f"cannot create {directory}: {e.strerror}; choose another -o DIR") from e
    written = 0
    for plot in plots.figures(data, baseline):
        written += len(plots.save(plot, directory))
        plot.figure.clear()
    click.echo(f"wrote {written} files to {directory}")
