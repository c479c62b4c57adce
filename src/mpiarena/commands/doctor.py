"""`mpiarena doctor`: what is installed and usable, and how to fix what is not."""

from __future__ import annotations

import click
from rich.table import Table

from .. import doctor
from .options import console


@click.command("doctor")
def doctor_cmd() -> None:
    """What is installed and usable, and how to fix what is not."""
    table = Table("check", "", "detail", "fix")
    for c in doctor.checks():
        table.add_row(c.name, "[green]ok[/]" if c.ok else "[red]no[/]", c.detail, c.fix)
    console.print(table)
    console.print(f"data directory: {doctor.data_location()}")
