"""`mpiarena store copy FROM TO`: runs copied between stores, SQLite files and PostgreSQL
servers alike."""

from __future__ import annotations

import click

from ..store.copy import copy
from . import stores
from .consoles import console


@click.group("store")
def store_cmd() -> None:
    """Work on whole stores: SQLite files and PostgreSQL servers."""


@store_cmd.command("copy")
@click.argument("source", metavar="FROM")
@click.argument("target", metavar="TO")
def copy_cmd(source: str, target: str) -> None:
    """Copy every run of store FROM into store TO (each a file or a postgresql:// URI), each
    under the id TO gives it; runs TO holds already, and runs still going, are left out."""
    origin = stores.existing_store(source)
    into = stores.store(target)
    try:
        done = copy(origin, into)
    finally:
        origin.close()
        into.close()
    ids = sorted(done.runs.values())
    said = f"copied {len(ids)} run{'' if len(ids) == 1 else 's'} from {origin.where} to " \
           f"{into.where}"
    if ids:
        said += f" (there: {', '.join(map(str, ids))})"
    if done.there:
        said += f"; {len(done.there)} {'was' if len(done.there) == 1 else 'were'} there already"
    if done.running:
        said += f"; left out {len(done.running)} still running: copy again once they end"
    console.print(said, soft_wrap=True, markup=False)
