"""`mpiarena doctor`: what is installed and usable, how to fix what is not, and what each
missing part would add."""

from __future__ import annotations

import click
from rich.table import Table

from ..platform import doctor
from . import consoles
from .consoles import console, json_option


@click.command("doctor")
@json_option("every check (name, ok, detail, fix, what it gives) and the data directory")
def doctor_cmd(as_json: bool) -> None:
    """What is installed and usable, how to fix what is not, and what each missing part adds."""
    checks = doctor.checks()
    if as_json:
        consoles.print_json({"checks": [{"name": c.name, "ok": c.ok, "detail": c.detail,
                                         "fix": c.fix, "gives": c.gives} for c in checks],
                            "data_directory": str(doctor.data_location())})
        return
    table = Table("check", "", "detail", "fix")
    for c in checks:
        table.add_row(c.name, "[green]ok[/]" if c.ok else "[red]no[/]", c.detail, c.fix)
    console.print(table)
    if missing := [c for c in checks if not c.ok and c.gives]:
        console.print("What each missing part would add:")
        for c in missing:
            console.print(f"  {c.name}: {c.gives}", soft_wrap=True, markup=False)
    console.print(f"data directory: {doctor.data_location()}")
