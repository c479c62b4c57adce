"""`mpiarena list`: the runs in the store."""

from __future__ import annotations

import click
from rich.table import Table

from . import consoles, stores
from .consoles import console, json_option
from .stores import db_option


@click.command("list")
@json_option("the runs")
@db_option
def list_cmd(as_json: bool, db: str) -> None:
    """The runs in the store (a program run: its launches instead of cells)."""
    # here, not at the top: ~9 ms more start-up for every command
    from ..analysis.program import is_program_run

    store = stores.existing_store(db)
    rows = [(run, store.program_launch_count(run.id) if is_program_run(run) else None, ncells)
            for run, ncells in store.runs()]
    if as_json:
        consoles.print_json([{"id": run.id, "started": run.started,
                              "status": str(store.status(run)), "suite": run.suite,
                              "cells": None if launches is not None else ncells,
                              "launches": launches, "command": run.command}
                            for run, launches, ncells in rows])
        return
    table = Table("id", "started", "status", "suite", "cells", "command")
    for run, launches, ncells in rows:
        size = f"{launches} launches" if launches is not None else str(ncells)
        table.add_row(str(run.id), run.started, store.status(run), run.suite, size, run.command)
    console.print(table)
