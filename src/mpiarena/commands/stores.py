"""The results store as the commands open it: --db (and $MPIARENA_DB), a store that must exist, a
run of it, and the line that says where runs were stored."""

from __future__ import annotations

import os
from pathlib import Path

import click
from click.core import ParameterSource

from ..base.errors import ArenaError
from ..base.records import VariantRecord
from ..store import Store
from ..store.backend import is_server, shown
from ..store.results import RunData, load
from .consoles import err
from .grouping import F

DB_DEFAULT = "mpiarena.db"  # in the working directory
DB_ENV = "MPIARENA_DB"
DB_HELP = (f"results store: a SQLite file, relative to the working directory, or a PostgreSQL "
           f"server's URI (postgresql://USER@HOST/DB); {DB_ENV} sets another default")


def db_option(f: F) -> F:
    """--db FILE: the results store, $MPIARENA_DB, else mpiarena.db."""
    return click.option("--db", default=DB_DEFAULT, show_default=True, metavar="FILE",
                        envvar=DB_ENV, help=DB_HELP)(f)


def db_from_environment(ctx: click.Context, param: click.Parameter,
                        value: tuple[str, ...]) -> tuple[str, ...]:
    """A repeatable --db's stores: $MPIARENA_DB (one path, spaces and all) where none is given."""
    if param.name and ctx.get_parameter_source(param.name) == ParameterSource.DEFAULT and \
            os.environ.get(DB_ENV):
        return (os.environ[DB_ENV],)
    return value


def store(db: str) -> Store:
    """The store in file `db`, or on the server its URI names."""
    return Store(db)


def exists(db: str) -> bool:
    """Whether the store `db` may hold runs: a file that exists, or any server."""
    return is_server(db) or Path(db).exists()


def existing_store(db: str) -> Store:
    """The store `db`, which must exist: a command that only reads never makes a file."""
    if not exists(db):
        raise ArenaError(f"no store at {db}; give --db FILE (or set {DB_ENV}) or start one with "
                         "'mpiarena run'")
    return store(db)


def existing_run(db: str, run: str) -> tuple[RunData, list[VariantRecord]]:
    """Run `run` of the store `db`, which must exist, and its variants' rows."""
    opened = existing_store(db)
    run_id = opened.resolve(run)
    return load(opened, run_id), opened.variants(run_id)


def check_baseline(data: RunData, baseline: str | None) -> None:
    """--baseline, when given, must name a variant of the run."""
    if baseline is not None and baseline not in data.variants:
        raise ArenaError(f"unknown baseline '{baseline}'; run {data.run_id} has "
                         f"{', '.join(data.variants) or 'no variants'}")


def say_stored(db: str, run_ids: list[int]) -> None:
    """After a command that stored runs: which, and the store's full path, once."""
    if not run_ids:
        return
    runs = f"run {run_ids[0]}" if len(run_ids) == 1 else f"runs {', '.join(map(str, run_ids))}"
    where = shown(db) if is_server(db) else Path(db).resolve()
    err.print(f"stored {runs} in {where}", soft_wrap=True, markup=False)
