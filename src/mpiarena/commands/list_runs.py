"""`mpiarena list`: the runs in the store."""

from __future__ import annotations

import click
from rich.table import Table

from . import options
from .options import console, db_option


@click.command("list")
@db_option
def list_cmd(db: str) -> None:
    """The runs in the store (an app run: its launches instead of cells)."""
    from ..analysis.program import is_app_run

    store = options.existing_store(db)
    table = Table("id", "started", "status", "suite", "cells", "command")
    for run, ncells in store.runs():
        size = f"{store.app_launch_count(run.id)} launches" if is_app_run(run) else str(ncells)
        table.add_row(str(run.id), run.started, store.status(run), run.suite, size, run.command)
    console.print(table)
