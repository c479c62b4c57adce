"""The store as one SQLite file: in write-ahead-log mode on a local filesystem, synchronised at
checkpoints rather than at every cell (a power cut may lose the last cells, never the file);
with a rollback journal, synchronised at every commit, on a network filesystem, where the log's
shared-memory index cannot reach the other hosts."""

from __future__ import annotations

import contextlib
import socket
import sqlite3
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..base.errors import ArenaError
from ..base.records import RunRecord
from ..system.procs import alive
from . import filesystems
from .backend import Connection, Cursor

WAL_HEADER = b"\x02\x02"  # bytes 18-19 of a database file in WAL mode (file format 2)
_TOLD: set[Path] = set()  # stores this process said are on a network filesystem


def in_wal(path: Path) -> bool:
    """Whether the database file at `path` is in write-ahead-log mode, read from its header."""
    try:
        with path.open("rb") as f:
            return f.read(20)[18:20] == WAL_HEADER
    except OSError:
        return False


class SqliteFile(Connection):
    errors = (sqlite3.DatabaseError,)

    def __init__(self, path: Path):
        self.path = path
        self.where = str(path)
        kind = filesystems.fstype(path.parent)
        try:
            self.db = sqlite3.connect(path, timeout=30)
            self.db.row_factory = sqlite3.Row
            if filesystems.is_network(kind):
                self._no_wal(kind)
            else:
                with contextlib.suppress(sqlite3.OperationalError):  # a read-only store: its own
                    self.db.execute("PRAGMA journal_mode=WAL")
                self.db.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.DatabaseError as e:
            raise ArenaError(f"{path} is not a usable mpiarena store ({e}); use another --db "
                             "file") from e

    def _no_wal(self, kind: str) -> None:
        """On a network filesystem: a rollback journal, said once; a file left in WAL mode is
        taken out of it, which only works where no other process has it open."""
        if (path := self.path.resolve()) not in _TOLD:
            _TOLD.add(path)
            print(f"note: {self.path} is on {kind}, a network filesystem: the store uses SQLite's "
                  "rollback journal, not its write-ahead log (which needs every process on one "
                  "host)", file=sys.stderr)
        if not in_wal(self.path):
            return
        try:
            mode = self.db.execute("PRAGMA journal_mode=DELETE").fetchone()[0]
        except sqlite3.OperationalError:
            mode = "wal"
        if mode != "delete":
            self.db.close()
            raise ArenaError(f"{self.path} is in write-ahead-log mode on {kind}, a network "
                             "filesystem, and open in another process, maybe on another host, "
                             "which cannot share its log: read it on the host that writes it, "
                             "or once no mpiarena has it open")

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        return self.db.execute(sql, params)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self.db.executemany(sql, rows)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self.db:
            yield

    @contextmanager
    def locked(self) -> Iterator[None]:
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            yield

    def tables(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}

    def columns(self, table: str) -> set[str]:
        return {r[1] for r in self.db.execute(f"PRAGMA table_info({table})")}

    def create(self, schema: str) -> None:
        for statement in schema.split(";"):
            if statement.strip():
                self.db.execute(statement)

    @contextmanager
    def unless_read_only(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.OperationalError as e:
            if "readonly" not in str(e) and "locked" not in str(e):
                raise

    def hold(self, run_id: int) -> None:
        """The run's pid and host, stored in its row, say who owns it."""

    def release(self, run_id: int) -> None:
        """Nothing held: see hold."""

    def running(self, run: RunRecord) -> bool | None:
        if run.host != socket.gethostname():
            return None
        return alive(run.pid)

    def compact(self) -> None:
        self.db.execute("VACUUM")

    def close(self) -> None:
        self.db.close()
