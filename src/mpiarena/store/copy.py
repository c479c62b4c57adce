"""Runs copied from one store into another (`mpiarena store copy`), a SQLite file or a
PostgreSQL server either side: each run with every row of it, in one transaction of the
target's, under the ids the target gives; a run the target holds already (the same start, host,
process and command) is left out, so a copy can be repeated."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..base.status import RunStatus
from . import Store
from .backend import Connection


@dataclass(frozen=True)
class RunTable:
    """A table of a run's rows: how they are found from the run, which of their columns name
    a copied row (column -> the table of that row), and whether the target numbers them."""

    name: str
    of_run: str  # the WHERE clause that finds them, ? the run's id in the source
    refs: tuple[tuple[str, str], ...]
    numbered: bool = False
    order: str = "rowid"


# In the order a run's rows refer to each other: a row's references are copied before it
TABLES = (
    RunTable("implementations", "run_id=?", (("run_id", "runs"),)),
    RunTable("variants", "run_id=?", (("run_id", "runs"),)),
    RunTable("jobs", "run_id=?", (("run_id", "runs"),), numbered=True, order="id"),
    RunTable("cells", "run_id=?", (("run_id", "runs"), ("job_id", "jobs")), numbered=True,
             order="id"),
    RunTable("rank_seconds", "cell_id IN (SELECT id FROM cells WHERE run_id=?)",
             (("cell_id", "cells"),), order="cell_id, obs"),
    RunTable("rank_extras", "cell_id IN (SELECT id FROM cells WHERE run_id=?)",
             (("cell_id", "cells"),), order="cell_id, obs, name"),
    RunTable("summaries", "cell_id IN (SELECT id FROM cells WHERE run_id=?)",
             (("cell_id", "cells"),), order="cell_id"),
    RunTable("app_launches", "run_id=?", (("run_id", "runs"),), numbered=True, order="id"),
    RunTable("app_calls", "launch_id IN (SELECT id FROM app_launches WHERE run_id=?)",
             (("launch_id", "app_launches"),), order="launch_id, rank, function"),
    RunTable("app_configs", "run_id=?", (("run_id", "runs"),)),
)
SAME_RUN = ("started", "host", "pid", "command")  # what tells a copied run from another


@dataclass
class Copied:
    """What a copy did: the runs it copied (source id -> target id), those the target held
    already, and those still running, left out."""

    runs: dict[int, int] = field(default_factory=dict)
    there: list[int] = field(default_factory=list)
    running: list[int] = field(default_factory=list)


def copy(source: Store, target: Store) -> Copied:
    """Every run of `source` that `target` lacks and that is not running, into `target`."""
    done = Copied()
    held = {tuple(r) for r in target.db.execute(f"SELECT {', '.join(SAME_RUN)} FROM runs")}
    for run, _ in source.runs():
        if source.status(run) == RunStatus.RUNNING:
            done.running.append(run.id)
        elif (run.started, run.host, run.pid, run.command) in held:
            done.there.append(run.id)
        else:
            done.runs[run.id] = _copy_run(source.db, target.db, run.id)
    configs = _rows(source.db, "SELECT * FROM configs ORDER BY hash", ())
    if configs:
        with target.tx() as db:
            _insert(db, "configs", configs, " ON CONFLICT DO NOTHING")
    return done


def _copy_run(source: Connection, target: Connection, run_id: int) -> int:
    """One run and every row of it, in one transaction of the target: its id there."""
    ids: dict[str, dict[int, int]] = {}
    with target.transaction():
        run = _rows(source, "SELECT * FROM runs WHERE id=?", (run_id,))
        ids["runs"] = {run_id: _insert_numbered(target, "runs", run[0], {})}
        for table in TABLES:
            rows = _rows(source, f"SELECT * FROM {table.name} WHERE {table.of_run} "
                         f"ORDER BY {table.order}", (run_id,))
            refs = dict(table.refs)
            if table.numbered:
                ids[table.name] = {row["id"]: _insert_numbered(
                    target, table.name, row, {c: ids[t] for c, t in refs.items()})
                    for row in rows}
            elif rows:
                _insert(target, table.name, [_mapped(row, {c: ids[t] for c, t in refs.items()})
                                             for row in rows])
    return ids["runs"][run_id]


def _rows(db: Connection, sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
    """Rows as column -> value, without the ids a database numbers rows by."""
    return [{k: v for k, v in zip(row.keys(), row, strict=True) if k != "rowid"}
            for row in db.execute(sql, params).fetchall()]


def _mapped(row: dict[str, Any], maps: dict[str, dict[int, int]]) -> dict[str, Any]:
    """`row` with each reference to a copied row replaced by that row's id in the target."""
    return {k: maps[k][v] if k in maps and v is not None else v for k, v in row.items()}


def _insert_numbered(db: Connection, table: str, row: dict[str, Any],
                     maps: dict[str, dict[int, int]]) -> int:
    """One row under the id the target gives it: that id."""
    values = {k: v for k, v in _mapped(row, maps).items() if k != "id"}
    sql = f"INSERT INTO {table} ({', '.join(values)}) VALUES ({', '.join('?' * len(values))})"
    return int(db.execute(f"{sql} RETURNING id", list(values.values())).fetchone()[0])


def _insert(db: Connection, table: str, rows: list[dict[str, Any]], tail: str = "") -> None:
    columns = list(rows[0])
    db.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES "
                   f"({', '.join('?' * len(columns))}){tail}", [list(r.values()) for r in rows])
