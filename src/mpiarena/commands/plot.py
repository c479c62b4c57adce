"""`mpiarena plot`: every figure of one run as PNG and SVG."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import click

from ..base.errors import ArenaError
from .report_files import dir_option
from .stores import check_baseline, db_option, existing_run


@click.command("plot")
@click.argument("run", default="latest")
@dir_option("directory for the PNG and SVG files", default="plots", show_default=True)
@click.option("--baseline", help="variant id the relative figures compare with (default: the "
              "first)")
@db_option
def plot_cmd(run: str, directory: str, baseline: str | None, db: str) -> None:
    """Every figure of one run (an id from 'list'; default: latest) as PNG and SVG (e.g.
    pingpong-np2-time.png)."""
    # here, not at the top: matplotlib, ~350 ms more start-up for every command
    from ..report import drawing, plot_table, plots

    data, _ = existing_run(db, run)
    check_baseline(data, baseline)
    folder = Path(directory)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ArenaError(f"cannot create {folder}: {e.strerror}; choose another --dir DIR") from e
    saved = drawing.drawn(plot_table.makers(data, baseline),
                          partial(plots.save, directory=folder))
    written = sum(len(paths) for paths in saved)
    click.echo(f"wrote {written} files to {folder}")
