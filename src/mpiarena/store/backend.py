"""What the store asks of a database, whichever it is: a SQLite file (store/sqlite.py) or a
PostgreSQL server (store/postgres.py), chosen by how --db names it.

The store writes its SQL once, with `?` placeholders and what both dialects read alike (ON
CONFLICT, RETURNING); a connection translates the rest: placeholders, the schema's column types,
which tables and columns exist, the lock a schema change holds, and whether a run's process is
still alive.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from ..base.records import RunRecord

SERVER = re.compile(r"postgres(?:ql)?://", re.IGNORECASE)  # a libpq connection URI
PASSWORD = re.compile(r"(://[^:/@]*:)[^@]*@|(password=)[^&\s]*")


def is_server(where: str) -> bool:
    """Whether `where` names a PostgreSQL server (a libpq URI) rather than a SQLite file."""
    return SERVER.match(where) is not None


def shown(uri: str) -> str:
    """A connection URI with its password left out."""
    return PASSWORD.sub(lambda m: f"{m[1] or m[2]}***{'@' if m[1] else ''}", uri)


class Cursor(Protocol):
    """Rows read: each indexed by position or by column name."""

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(ABC):
    """One open store database. `where` names it in messages (a server's password left out)."""

    where: str
    errors: tuple[type[Exception], ...]  # what this database raises on a store it cannot use

    @abstractmethod
    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        """One statement, `?` placeholders; outside transaction() each is its own."""

    @abstractmethod
    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None: ...

    @abstractmethod
    def transaction(self) -> AbstractContextManager[None]:
        """A transaction: committed at the end of the block, rolled back on an exception."""

    @abstractmethod
    def locked(self) -> AbstractContextManager[None]:
        """A transaction holding the store's schema lock: one process creates or upgrades it."""

    @abstractmethod
    def tables(self) -> set[str]: ...

    @abstractmethod
    def columns(self, table: str) -> set[str]: ...

    @abstractmethod
    def create(self, schema: str) -> None:
        """Each statement of `schema` (SQLite's types) in this database's types."""

    @abstractmethod
    def unless_read_only(self) -> AbstractContextManager[None]:
        """A block of writes that a store this user cannot write (or that is busy) skips."""

    @abstractmethod
    def hold(self, run_id: int) -> None:
        """Inside the transaction that inserted run `run_id`: this process owns it now."""

    @abstractmethod
    def release(self, run_id: int) -> None:
        """Run `run_id` ended: this process no longer owns it."""

    @abstractmethod
    def running(self, run: RunRecord) -> bool | None:
        """Whether the process of a run stored as running still is: None where this host
        cannot tell (a SQLite file's run of another host)."""

    @abstractmethod
    def compact(self) -> None:
        """Give back the space a schema upgrade freed."""

    @abstractmethod
    def close(self) -> None: ...
