"""The results store: one SQLite file holding every run, implementation, variant and observation.

Every write is its own transaction, so a run killed half-way leaves a valid file holding what
it measured; a run whose process is gone while still marked running is reported incomplete.
"""

from __future__ import annotations

import json
import math
import os
import socket
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from .errors import ArenaError

SCHEMA_VERSION = 3  # 2: extras (CPU, memory, overlap and progress figures per observation);
# 3: cells.launch (which launch of its variant a cell was measured in) and cells.timing (how a
# call was timed: loop, barrier or window)
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY, started TEXT NOT NULL, finished TEXT, status TEXT NOT NULL,
  suite TEXT NOT NULL, command TEXT NOT NULL, seed INTEGER NOT NULL, version TEXT NOT NULL,
  machine TEXT NOT NULL, settings TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL,
  note TEXT);
CREATE TABLE IF NOT EXISTS implementations (
  run_id INTEGER NOT NULL REFERENCES runs(id), impl_id TEXT NOT NULL, family TEXT NOT NULL,
  version TEXT NOT NULL, version_string TEXT NOT NULL, origin TEXT NOT NULL, prefix TEXT,
  wrapper TEXT NOT NULL, launcher TEXT NOT NULL, wrapper_flags TEXT NOT NULL,
  cflags TEXT NOT NULL, PRIMARY KEY (run_id, impl_id));
CREATE TABLE IF NOT EXISTS variants (
  run_id INTEGER NOT NULL REFERENCES runs(id), variant TEXT NOT NULL, impl_id TEXT NOT NULL,
  name TEXT NOT NULL, env TEXT NOT NULL, args TEXT NOT NULL, binding TEXT NOT NULL,
  PRIMARY KEY (run_id, variant));
CREATE TABLE IF NOT EXISTS jobs (
  id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id), variant TEXT NOT NULL,
  np INTEGER NOT NULL, topology TEXT NOT NULL, binding TEXT NOT NULL, command TEXT NOT NULL,
  status TEXT NOT NULL, reason TEXT, tick REAL, resolution REAL, thread_level TEXT,
  ranks TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cells (
  id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id), job_id INTEGER,
  variant TEXT NOT NULL, bench TEXT NOT NULL, size INTEGER NOT NULL, np INTEGER NOT NULL,
  iterations INTEGER, status TEXT NOT NULL, reason TEXT, seq INTEGER NOT NULL,
  launch INTEGER NOT NULL DEFAULT 0, timing TEXT NOT NULL DEFAULT 'loop');
CREATE TABLE IF NOT EXISTS observations (
  cell_id INTEGER NOT NULL REFERENCES cells(id), obs INTEGER NOT NULL, rank INTEGER NOT NULL,
  seconds REAL NOT NULL, PRIMARY KEY (cell_id, obs, rank)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS extras (
  cell_id INTEGER NOT NULL REFERENCES cells(id), obs INTEGER NOT NULL, rank INTEGER NOT NULL,
  name TEXT NOT NULL, value REAL NOT NULL, PRIMARY KEY (cell_id, obs, name, rank))
  WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS cells_by_run ON cells(run_id, bench, np, size);
"""

# What upgrades a store of schema v to v + 1 (the extras table of schema 2 comes from SCHEMA
# itself). Cells stored before schema 3 were measured in one launch each, timed as a loop.
_UPGRADES = {1: "", 2: "ALTER TABLE cells ADD COLUMN launch INTEGER NOT NULL DEFAULT 0;"
                       "ALTER TABLE cells ADD COLUMN timing TEXT NOT NULL DEFAULT 'loop';"}


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Obs:
    """One observation: every rank's seconds per iteration, and every rank's extra figures
    (name -> value per rank: cpu, rss, peak, pure, overlapped, transfer, after...)."""

    index: int
    per_rank: list[float]
    extras: dict[str, list[float]] = field(default_factory=dict)


class Store:
    def __init__(self, path: Path):
        self.path = path
        try:
            self.db = sqlite3.connect(path, timeout=30)
            self.db.row_factory = sqlite3.Row
            # a cell is one transaction: with a write-ahead log a commit costs no fsync (0.3 ms
            # here against 14 ms), and what was committed survives mpiarena being killed
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            version = self._schema_version()
            if version is None:
                with self.db:
                    self.db.executescript(SCHEMA)
                    self.db.execute("INSERT INTO meta VALUES ('schema_version', ?)",
                                    (str(SCHEMA_VERSION),))
            elif version in _UPGRADES:
                with self.db:
                    for step in range(version, SCHEMA_VERSION):
                        self.db.executescript(_UPGRADES[step])
                    self.db.executescript(SCHEMA)
                    self.db.execute("UPDATE meta SET value=? WHERE key='schema_version'",
                                    (str(SCHEMA_VERSION),))
            elif version != SCHEMA_VERSION:
                raise ArenaError(f"{path} has store schema {version}, this mpiarena reads "
                                 f"{SCHEMA_VERSION}; use another --db file")
        except sqlite3.DatabaseError as e:
            raise ArenaError(f"{path} is not a usable mpiarena store ({e}); use another --db "
                             "file") from e

    def _schema_version(self) -> int | None:
        has = self.db.execute("SELECT name FROM sqlite_master WHERE name='meta'").fetchone()
        if not has:
            return None
        row = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        return int(row[0]) if row else None

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        with self.db:
            yield self.db

    # --- writing -------------------------------------------------------------------------
    def begin_run(self, suite: str, command: str, seed: int, version: str, machine: dict,
                  settings: dict) -> int:
        with self.tx() as db:
            cur = db.execute(
                "INSERT INTO runs (started, status, suite, command, seed, version, machine, "
                "settings, pid, host) VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?, ?)",
                (now(), suite, command, seed, version, json.dumps(machine), json.dumps(settings),
                 os.getpid(), socket.gethostname()))
            return int(cur.lastrowid or 0)

    def end_run(self, run_id: int, status: str, note: str | None = None) -> None:
        with self.tx() as db:
            db.execute("UPDATE runs SET status=?, finished=?, note=? WHERE id=?",
                       (status, now(), note, run_id))

    def add_implementation(self, run_id: int, row: dict) -> None:
        with self.tx() as db:
            db.execute("INSERT OR REPLACE INTO implementations VALUES (:run_id, :impl_id, "
                       ":family, :version, :version_string, :origin, :prefix, :wrapper, "
                       ":launcher, :wrapper_flags, :cflags)", {"run_id": run_id, **row})

    def add_variant(self, run_id: int, variant: str, impl_id: str, name: str,
                    env: dict, args: list, binding: str) -> None:
        with self.tx() as db:
            db.execute("INSERT OR REPLACE INTO variants VALUES (?, ?, ?, ?, ?, ?, ?)",
                       (run_id, variant, impl_id, name, json.dumps(env), json.dumps(args),
                        binding))

    def add_job(self, run_id: int, variant: str, np: int, topology: str, binding: str,
                command: list[str]) -> int:
        with self.tx() as db:
            cur = db.execute("INSERT INTO jobs (run_id, variant, np, topology, binding, command, "
                             "status, ranks) VALUES (?, ?, ?, ?, ?, ?, 'starting', '[]')",
                             (run_id, variant, np, topology, binding, json.dumps(command)))
            return int(cur.lastrowid or 0)

    def update_job(self, job_id: int, **fields: object) -> None:
        if "ranks" in fields:
            fields["ranks"] = json.dumps(fields["ranks"])
        cols = ", ".join(f"{k}=?" for k in fields)
        with self.tx() as db:
            db.execute(f"UPDATE jobs SET {cols} WHERE id=?", (*fields.values(), job_id))

    def add_cell(self, run_id: int, job_id: int | None, variant: str, bench: str, size: int,
                 np: int, status: str, reason: str | None, iterations: int | None,
                 observations: list[Obs], seq: int, launch: int = 0,
                 timing: str = "loop") -> int:
        """One cell and all its observations, in one transaction; `launch` counts the
        variant's launches at this rank count from 0, `timing` names how a call was timed."""
        with self.tx() as db:
            cur = db.execute("INSERT INTO cells (run_id, job_id, variant, bench, size, np, "
                             "iterations, status, reason, seq, launch, timing) "
                             "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                             (run_id, job_id, variant, bench, size, np, iterations, status,
                              reason, seq, launch, timing))
            cell_id = int(cur.lastrowid or 0)
            db.executemany("INSERT INTO observations VALUES (?, ?, ?, ?)",
                           [(cell_id, o.index, r, t) for o in observations
                            for r, t in enumerate(o.per_rank)])
            db.executemany("INSERT INTO extras VALUES (?, ?, ?, ?, ?)",
                           [(cell_id, o.index, r, name, v) for o in observations
                            for name, values in o.extras.items()
                            for r, v in enumerate(values) if math.isfinite(v)])
            return cell_id

    # --- reading -------------------------------------------------------------------------
    def runs(self) -> list[sqlite3.Row]:
        rows = self.db.execute("SELECT r.*, (SELECT COUNT(*) FROM cells c WHERE c.run_id=r.id) "
                               "AS ncells FROM runs r ORDER BY id").fetchall()
        return rows

    def resolve(self, ref: str) -> int:
        """A run id from 'latest' or a number."""
        if ref == "latest":
            row = self.db.execute("SELECT MAX(id) FROM runs").fetchone()
            if row[0] is None:
                raise ArenaError(f"{self.path} holds no runs yet; start one with 'mpiarena run'")
            return int(row[0])
        if not ref.isdigit() or not self.db.execute("SELECT 1 FROM runs WHERE id=?",
                                                    (int(ref),)).fetchone():
            raise ArenaError(f"no run '{ref}' in {self.path}; 'mpiarena list' shows the ids")
        return int(ref)

    def run(self, run_id: int) -> sqlite3.Row:
        return self.db.execute("SELECT * FROM runs WHERE id=?", (run_id,)).fetchone()

    def status(self, row: sqlite3.Row) -> str:
        """The run's status, 'incomplete' for a run whose process died while running."""
        if row["status"] != "running":
            return str(row["status"])
        alive = row["host"] == socket.gethostname() and _pid_alive(int(row["pid"]))
        return "running" if alive else "incomplete"

    def implementations(self, run_id: int) -> list[sqlite3.Row]:
        return self.db.execute("SELECT * FROM implementations WHERE run_id=? ORDER BY impl_id",
                               (run_id,)).fetchall()

    def variants(self, run_id: int) -> list[sqlite3.Row]:
        return self.db.execute("SELECT * FROM variants WHERE run_id=? ORDER BY variant",
                               (run_id,)).fetchall()

    def jobs(self, run_id: int) -> list[sqlite3.Row]:
        return self.db.execute("SELECT * FROM jobs WHERE run_id=? ORDER BY id",
                               (run_id,)).fetchall()

    def cells(self, run_id: int) -> list[sqlite3.Row]:
        return self.db.execute("SELECT * FROM cells WHERE run_id=? ORDER BY seq",
                               (run_id,)).fetchall()

    def observations(self, run_id: int) -> dict[int, list[list[float]]]:
        """cell id -> per observation, every rank's seconds per iteration."""
        out: dict[int, dict[int, list[float]]] = {}
        for cell_id, obs, _rank, t in self.db.execute(
                "SELECT o.cell_id, o.obs, o.rank, o.seconds FROM observations o JOIN cells c "
                "ON c.id=o.cell_id WHERE c.run_id=? ORDER BY o.cell_id, o.obs, o.rank",
                (run_id,)):
            out.setdefault(cell_id, {}).setdefault(obs, []).append(t)
        return {c: [v for _, v in sorted(d.items())] for c, d in out.items()}

    def extras(self, run_id: int) -> dict[int, dict[int, dict[str, list[float]]]]:
        """cell id -> observation index -> name -> every rank's value (NaN where not finite)."""
        out: dict[int, dict[int, dict[str, list[float]]]] = {}
        for cell_id, obs, name, rank, v in self.db.execute(
                "SELECT x.cell_id, x.obs, x.name, x.rank, x.value FROM extras x JOIN cells c "
                "ON c.id=x.cell_id WHERE c.run_id=? ORDER BY x.cell_id, x.obs, x.name, x.rank",
                (run_id,)):
            values = out.setdefault(cell_id, {}).setdefault(obs, {}).setdefault(name, [])
            values += [math.nan] * (rank - len(values)) + [v]
        return out


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
