"""Tables under their titles: a title on a line of its own, never wrapped to the table's width."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text


def show(console: Console, title: str, table: Table) -> None:
    """Print the title (plain text, bold, unwrapped) and then the table."""
    console.print(Text(title, style="bold"), soft_wrap=True)
    console.print(table)
