"""The results store: every run, implementation, variant and observation, in one SQLite file
(store/sqlite.py) or on a PostgreSQL server (store/postgres.py), as --db names it.

Every write is its own transaction, so a run killed half-way leaves a valid store holding what
it measured; a run whose process is gone while still marked running is reported incomplete.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import re
import socket
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Sized
from contextlib import contextmanager
from dataclasses import asdict, astuple, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from .. import __version__
from ..base.errors import ArenaError
from ..base.records import (
    CellRecord,
    CellRow,
    HarnessTime,
    ImplementationRecord,
    JobRecord,
    JobRow,
    RunRecord,
    VariantRecord,
)
from ..base.status import CellStatus, JobStatus, LaunchStatus, RunStatus
from ..model.benchmarks import BENCHMARKS
from ..model.programs import ProgramLaunch, RankCalls, TunedConfig
from ..model.runs import RunStart, StoredSettings, kind_of
from ..model.whatran import Cvar, WhatRan
from .backend import Connection, is_server
from .sqlite import SqliteFile

RUN_NAME = re.compile(r"latest(?:~(\d+))?|previous")  # a run named by its place, not its id

SCHEMA_VERSION = 12  # what each version added: docs/store.md, "Schema versions"
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY, started TEXT NOT NULL, finished TEXT, status TEXT NOT NULL,
  suite TEXT NOT NULL, command TEXT NOT NULL, seed INTEGER NOT NULL, version TEXT NOT NULL,
  machine TEXT NOT NULL, settings TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL,
  note TEXT, harness TEXT, kind TEXT NOT NULL DEFAULT 'benchmark');
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
  ranks TEXT NOT NULL, interference TEXT, config TEXT, failed_bench TEXT, failed_size INTEGER,
  shape TEXT NOT NULL DEFAULT 'whole');
CREATE TABLE IF NOT EXISTS configs (
  hash TEXT PRIMARY KEY, cvars TEXT, cvars_why TEXT NOT NULL, transport TEXT NOT NULL,
  transport_how TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cells (
  id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id), job_id INTEGER,
  variant TEXT NOT NULL, bench TEXT NOT NULL, size INTEGER NOT NULL, np INTEGER NOT NULL,
  iterations INTEGER, status TEXT NOT NULL, reason TEXT, seq INTEGER NOT NULL,
  launch INTEGER NOT NULL DEFAULT 0, timing TEXT NOT NULL DEFAULT 'loop');
CREATE TABLE IF NOT EXISTS rank_seconds (
  cell_id INTEGER NOT NULL REFERENCES cells(id), obs INTEGER NOT NULL, seconds BLOB NOT NULL,
  PRIMARY KEY (cell_id, obs));
CREATE TABLE IF NOT EXISTS rank_extras (
  cell_id INTEGER NOT NULL REFERENCES cells(id), obs INTEGER NOT NULL, name TEXT NOT NULL,
  value BLOB NOT NULL, PRIMARY KEY (cell_id, obs, name));
CREATE TABLE IF NOT EXISTS summaries (
  cell_id INTEGER PRIMARY KEY REFERENCES cells(id), analysis INTEGER NOT NULL,
  figures BLOB NOT NULL, late BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS cells_by_run ON cells(run_id, bench, np, size);
CREATE TABLE IF NOT EXISTS app_launches (
  id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id), variant TEXT NOT NULL,
  np INTEGER NOT NULL, idx INTEGER NOT NULL, kind TEXT NOT NULL, status TEXT NOT NULL,
  reason TEXT NOT NULL, exit_code INTEGER, wall REAL, metrics TEXT NOT NULL,
  stdout TEXT NOT NULL, stderr TEXT NOT NULL, command TEXT NOT NULL, interference TEXT);
CREATE TABLE IF NOT EXISTS app_calls (
  launch_id INTEGER NOT NULL REFERENCES app_launches(id), rank INTEGER NOT NULL,
  function TEXT NOT NULL, calls INTEGER NOT NULL, seconds REAL NOT NULL,
  PRIMARY KEY (launch_id, rank, function));
CREATE TABLE IF NOT EXISTS app_configs (
  run_id INTEGER NOT NULL REFERENCES runs(id), variant TEXT NOT NULL, impl_id TEXT NOT NULL,
  config_values TEXT NOT NULL, dropped INTEGER, reason TEXT NOT NULL, role TEXT NOT NULL,
  PRIMARY KEY (run_id, variant))
"""
VARIANT_COLUMNS = ("run_id", "variant", "impl_id", "name", "env", "args", "binding")
DTYPE = np.dtype("<f8")  # a rank vector: the core prints 10 significant digits, float32 keeps 7
Vector = np.ndarray  # one float per rank
CellFigures = tuple[np.ndarray, np.ndarray]  # a cell's figure per observation, its late shares


def _create(db: Connection) -> None:
    db.create(SCHEMA)


def _vectors(rows: Iterable[tuple[Any, ...]]) -> Iterator[tuple[tuple[Any, ...], bytes]]:
    """(key..., rank, value) rows ordered by key then rank -> (key, vector blob), NaN filling
    the ranks a key has no row for."""
    for key, group in itertools.groupby(rows, key=lambda r: r[:-2]):
        ranks, values = zip(*(r[-2:] for r in group), strict=True)
        vector = np.full(max(ranks) + 1, np.nan, DTYPE)
        vector[list(ranks)] = values
        yield key, vector.tobytes()


def _pack_ranks(db: Connection) -> None:
    """Schema 3 -> 4: every observation's rows of one per rank become one vector."""
    _create(db)
    rows = db.execute("SELECT cell_id, obs, rank, seconds FROM observations "
                      "ORDER BY cell_id, obs, rank")
    db.executemany("INSERT INTO rank_seconds VALUES (?, ?, ?)",
                   ((*key, blob) for key, blob in _vectors(rows)))
    if "extras" in db.tables():
        rows = db.execute("SELECT cell_id, obs, name, rank, value FROM extras "
                          "ORDER BY cell_id, obs, name, rank")
        db.executemany("INSERT INTO rank_extras VALUES (?, ?, ?, ?)",
                       ((*key, blob) for key, blob in _vectors(rows)))
    db.execute("DROP TABLE observations")
    db.execute("DROP TABLE IF EXISTS extras")


def _interference(db: Connection) -> None:
    """Schema 4 -> 5: jobs stored before recorded nothing of what ran beside them."""
    db.execute("ALTER TABLE jobs ADD COLUMN interference TEXT")


def _launches(db: Connection) -> None:
    """Schema 2 -> 3: cells stored before were measured in one launch each, timed as a loop."""
    db.execute("ALTER TABLE cells ADD COLUMN launch INTEGER NOT NULL DEFAULT 0")
    db.execute("ALTER TABLE cells ADD COLUMN timing TEXT NOT NULL DEFAULT 'loop'")


def _extras_table(db: Connection) -> None:
    """Schema 1 -> 2: the extras table (empty: schema 1 measured none)."""
    db.execute("CREATE TABLE IF NOT EXISTS extras (cell_id INTEGER NOT NULL, obs INTEGER NOT NULL, "
               "rank INTEGER NOT NULL, name TEXT NOT NULL, value REAL NOT NULL, "
               "PRIMARY KEY (cell_id, obs, name, rank)) WITHOUT ROWID")


def _program_tables(db: Connection) -> None:
    """Schema 5 -> 6: the app tables (created empty by _create)."""


def _configs(db: Connection) -> None:
    """Schema 6 -> 7: jobs stored before recorded no configuration (configs: by _create)."""
    db.execute("ALTER TABLE jobs ADD COLUMN config TEXT")


# What upgrades a store of schema v to v + 1, all in one transaction.
def _harness(db: Connection) -> None:
    """Schema 7 -> 8: runs stored before recorded no harness time (a store an earlier step
    re-created the runs table of has the column already)."""
    if "harness" not in db.columns("runs"):
        db.execute("ALTER TABLE runs ADD COLUMN harness TEXT")


def _failed_cells(db: Connection) -> None:
    """Schema 9 -> 10: a failed job's reason named the cell it failed in ("BENCH SIZE B: cause")
    and so did the reason of the cells the first stores skipped after it: the cell becomes the
    job's fields, the reasons the cause alone (a jobs table that has the columns keeps them)."""
    have = db.columns("jobs")
    for column, kind in (("failed_bench", "TEXT"), ("failed_size", "INTEGER")):
        if column not in have:
            db.execute(f"ALTER TABLE jobs ADD COLUMN {column} {kind}")
    names = "|".join(re.escape(b) for b in sorted(BENCHMARKS, key=len, reverse=True))
    in_cell = re.compile(rf"^({names})(?: (\d+) B)?: ")
    for job_id, reason in db.execute("SELECT id, reason FROM jobs WHERE reason IS NOT NULL")\
            .fetchall():
        if m := in_cell.match(reason):
            db.execute("UPDATE jobs SET failed_bench=?, failed_size=?, reason=? WHERE id=?",
                       (m[1], None if m[2] is None else int(m[2]), reason[m.end():], job_id))
    named = re.compile(rf"^(?:{names})(?: \d+ (?:[KMG]i)?B)?: ")
    lost = (CellStatus.FAILED, CellStatus.INVALID, CellStatus.SKIPPED)
    for cell_id, reason in db.execute("SELECT id, reason FROM cells WHERE reason IS NOT NULL "
                                      "AND status IN (?, ?, ?)", lost).fetchall():
        if m := named.match(reason):
            db.execute("UPDATE cells SET reason=? WHERE id=?", (reason[m.end():], cell_id))


def _program_configs(db: Connection) -> None:
    """Schema 8 -> 9: the app_configs table (created empty by _create: no run tuned before)."""


def _shapes(db: Connection) -> None:
    """Schema 10 -> 11: every job stored before measured its variant's whole plan."""
    if "shape" not in db.columns("jobs"):
        db.execute("ALTER TABLE jobs ADD COLUMN shape TEXT NOT NULL DEFAULT 'whole'")


def _kinds(db: Connection) -> None:
    """Schema 11 -> 12: every run stored before gets the kind its suite and settings say."""
    if "kind" not in db.columns("runs"):
        db.execute("ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'benchmark'")
    for run_id, suite, settings in db.execute("SELECT id, suite, settings FROM runs").fetchall():
        db.execute("UPDATE runs SET kind=? WHERE id=?",
                   (kind_of(suite, json.loads(settings)), run_id))


_UPGRADES: dict[int, Callable[[Connection], None]] = {
    1: _extras_table, 2: _launches, 3: _pack_ranks, 4: _interference, 5: _program_tables,
    6: _configs, 7: _harness, 8: _program_configs, 9: _failed_cells, 10: _shapes, 11: _kinds}


def _blob(values: Sequence[float] | np.ndarray) -> bytes:
    return np.asarray(values, DTYPE).tobytes()


def _floats(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, DTYPE)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Obs:
    """One observation: every rank's seconds per iteration, and every rank's extra figures
    (name -> value per rank: cpu, rss, peak, pure, overlapped, transfer, after...)."""

    index: int
    per_rank: list[float]
    extras: dict[str, list[float]] = field(default_factory=dict)


class MeasuredCell(NamedTuple):
    """A measured cell of a run, without its figures: what a run's levels are grouped by."""

    id: int
    variant: str
    bench: str
    size: int
    np: int
    launch: int
    timing: str


@dataclass
class Run:
    """A run being recorded (Store.new_run): its id, and the status and note it ends with
    (the body may set them: a run stopped by its own rule)."""

    id: int
    status: RunStatus = RunStatus.COMPLETE
    note: str | None = None


def connect(where: str | Path) -> Connection:
    """The database `where` names: a PostgreSQL server for a libpq URI, else a SQLite file."""
    if is_server(str(where)):
        from .postgres import Server  # psycopg: 0.4-1.4 s to import (loaded machine), not for files
        return Server(str(where))
    return SqliteFile(Path(where))


class Store:
    """The store `where` names (a file or a server's URI); `where` in messages."""

    def __init__(self, where: str | Path):
        self.db = connect(where)
        self.where = self.db.where
        try:
            if self._schema_version() != SCHEMA_VERSION:
                self._upgrade()
            self._settle()
        except self.db.errors as e:
            self.db.close()
            raise ArenaError(f"{self.where} is not a usable mpiarena store ({e}); use another "
                             "--db") from e

    def _upgrade(self) -> None:
        """Create a new store, or upgrade an older one in place, in one transaction (another
        process may have done it while this one waited for the lock); a store whose rows per
        rank became vectors is compacted."""
        packed = False
        with self.db.locked():
            version = self._schema_version()
            if version is None:
                _create(self.db)
                self.db.execute("INSERT INTO meta VALUES ('schema_version', ?)",
                                (str(SCHEMA_VERSION),))
            elif version in _UPGRADES:
                for step in range(version, SCHEMA_VERSION):
                    _UPGRADES[step](self.db)
                _create(self.db)
                packed = version <= 3
                self.db.execute("UPDATE meta SET value=? WHERE key='schema_version'",
                                (str(SCHEMA_VERSION),))
            elif version != SCHEMA_VERSION:
                raise ArenaError(f"{self.where} has store schema {version}, this mpiarena reads "
                                 f"{SCHEMA_VERSION}; use another --db")
        if packed:
            self.db.compact()

    def _settle(self) -> None:
        """Mark incomplete, once, each run still marked running whose process is known to be
        gone (killed outright: a file's runs of this host, any of a server's); when it stopped
        and why are not known, so neither is written. A store that cannot be written
        (read-only) is left as it is: Store.status says so."""
        running = [RunRecord.from_row(r) for r in self.db.execute(
            "SELECT * FROM runs WHERE status=?", (RunStatus.RUNNING,)).fetchall()]
        dead = [run.id for run in running if self.db.running(run) is False]
        if not dead:
            return
        with self.db.unless_read_only(), self.tx() as db:
            db.executemany("UPDATE runs SET status=? WHERE id=? AND status=?",
                           [(RunStatus.INCOMPLETE, run_id, RunStatus.RUNNING) for run_id in dead])

    def _schema_version(self) -> int | None:
        if "meta" not in self.db.tables():
            return None
        row = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        return int(row[0]) if row else None

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def tx(self) -> Iterator[Connection]:
        with self.db.transaction():
            yield self.db

    # --- writing -------------------------------------------------------------------------
    @contextmanager
    def new_run(self, start: RunStart) -> Iterator[Run]:
        """A new run, written through the lifecycle (`_recording`)."""
        with self._recording(self._begin(start)) as run:
            yield run

    @contextmanager
    def reopened(self, run_id: int) -> Iterator[Run]:
        """An ended run written to again (an import adding a library to it), through the
        lifecycle (`_recording`): running and owned by this process until the block ends, so a
        block that fails or is killed leaves it incomplete, never complete."""
        with self._recording(self._reopen(run_id)) as run:
            yield run

    @contextmanager
    def _recording(self, run_id: int) -> Iterator[Run]:
        """The one lifecycle of a run, started as running: ended with its status on every
        path. Its body's end: complete (or what the body set); Ctrl-C: incomplete,
        "interrupted", not raised further (what was measured is kept); bad input (ArenaError):
        incomplete with its line as the note, raised; anything else: incomplete, "crashed" and
        the exception, raised."""
        run = Run(run_id)
        try:
            yield run
        except KeyboardInterrupt:
            run.status, run.note = RunStatus.INCOMPLETE, "interrupted"
        except ArenaError as e:
            run.status, run.note = RunStatus.INCOMPLETE, str(e)
            raise
        except BaseException as e:
            run.status, run.note = RunStatus.INCOMPLETE, f"crashed: {type(e).__name__}: {e}"
            raise
        finally:
            self._end(run.id, run.status, run.note)

    def _begin(self, start: RunStart) -> int:
        """The run's row, running, owned by this process (new_run alone starts runs)."""
        with self.tx() as db:
            run_id = _insert(
                db, "INSERT INTO runs (started, status, suite, command, seed, version, machine, "
                "settings, pid, host, kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (now(), RunStatus.RUNNING, start.suite, start.command, start.seed, __version__,
                 json.dumps(start.machine), json.dumps(start.settings.stored()), os.getpid(),
                 socket.gethostname(), start.kind))
            db.hold(run_id)
            return run_id

    def _reopen(self, run_id: int) -> int:
        """An ended run's row back to running, owned by this process, as _begin leaves a new
        one (reopened alone does); a run still running is refused."""
        with self.tx() as db:
            row = db.execute("UPDATE runs SET status=?, finished=NULL, note=NULL, pid=?, host=? "
                             "WHERE id=? AND status<>? RETURNING id",
                             (RunStatus.RUNNING, os.getpid(), socket.gethostname(), run_id,
                              RunStatus.RUNNING)).fetchone()
            if row is None:
                raise ArenaError(f"run {run_id} is still running; add to it once it ended")
            db.hold(run_id)
            return run_id

    def set_harness(self, run_id: int, wall: float, variants: Mapping[str, HarnessTime]) -> None:
        """Where the run's measuring time went: its wall seconds, and per variant."""
        with self.tx() as db:
            db.execute("UPDATE runs SET harness=? WHERE id=?",
                       (json.dumps({"wall": wall, "variants": {v: asdict(h) for v, h in
                                                               variants.items()}}), run_id))

    def _end(self, run_id: int, status: RunStatus, note: str | None) -> None:
        """The run's status and note, finished now (_recording alone ends runs)."""
        with self.tx() as db:
            db.execute("UPDATE runs SET status=?, finished=?, note=? WHERE id=?",
                       (status, now(), note, run_id))
        self.db.release(run_id)

    def update_settings(self, run_id: int, settings: StoredSettings) -> None:
        """Replace a run's settings (an import adding another library's files to its run, a
        tuning run its spaces) by its kind's record."""
        with self.tx() as db:
            db.execute("UPDATE runs SET settings=? WHERE id=?",
                       (json.dumps(settings.stored()), run_id))

    def add_implementation(self, impl: ImplementationRecord) -> None:
        with self.tx() as db:
            row = asdict(impl)
            db.execute(_upsert("implementations", list(row), ("run_id", "impl_id")),
                       list(row.values()))

    def add_variant(self, v: VariantRecord) -> None:
        with self.tx() as db:
            db.execute(_upsert("variants", VARIANT_COLUMNS, ("run_id", "variant")),
                       (v.run_id, v.variant, v.impl_id, v.name, json.dumps(v.env),
                        json.dumps(v.args), v.binding))

    def add_job(self, job: JobRow) -> int:
        """A launch as it starts (JobStatus.STARTING); its id."""
        row = asdict(job) | {"command": json.dumps(job.command), "status": JobStatus.STARTING,
                             "ranks": "[]"}
        with self.tx() as db:
            return _insert(db, f"INSERT INTO jobs ({', '.join(row)}) VALUES ({_marks(row)})",
                           list(row.values()))

    def update_job(self, job_id: int, **fields: object) -> None:
        for name in JobRecord.JSON:
            if name in fields:
                fields[name] = json.dumps(fields[name])
        cols = ", ".join(f"{k}=?" for k in fields)
        with self.tx() as db:
            db.execute(f"UPDATE jobs SET {cols} WHERE id=?", (*fields.values(), job_id))

    def add_what_ran(self, job_id: int, what: WhatRan) -> None:
        """What the job's library reported it ran with, stored once per distinct content."""
        cvars = None if what.cvars is None else json.dumps([astuple(c) for c in what.cvars])
        row = (cvars, what.cvars_why, what.transport, what.transport_how)
        digest = hashlib.sha256(json.dumps(row).encode()).hexdigest()
        with self.tx() as db:
            db.execute("INSERT INTO configs VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                       (digest, *row))
            db.execute("UPDATE jobs SET config=? WHERE id=?", (digest, job_id))

    def what_ran(self, run_id: int) -> dict[int, WhatRan]:
        """Job id -> what its library reported it ran with, for the run's jobs that read it."""
        rows = self.db.execute(
            "SELECT jobs.id, cvars, cvars_why, transport, transport_how FROM jobs "
            "JOIN configs ON configs.hash = jobs.config WHERE run_id=? ORDER BY jobs.id",
            (run_id,))
        return {r[0]: WhatRan(None if r[1] is None else
                              tuple(Cvar(*c) for c in json.loads(r[1])), r[2], r[3], r[4])
                for r in rows}

    def add_cell(self, row: CellRow, observations: Sequence[Obs] = ()) -> int:
        """One cell and all its observations, in one transaction."""
        columns = asdict(row)
        with self.tx() as db:
            cell_id = _insert(db, f"INSERT INTO cells ({', '.join(columns)}) "
                              f"VALUES ({_marks(columns)})", list(columns.values()))
            db.executemany("INSERT INTO rank_seconds VALUES (?, ?, ?)",
                           [(cell_id, o.index, _blob(o.per_rank)) for o in observations])
            db.executemany("INSERT INTO rank_extras VALUES (?, ?, ?, ?)",
                           [(cell_id, o.index, name, _blob(values)) for o in observations
                            for name, values in o.extras.items()
                            if any(math.isfinite(v) for v in values)])
            return cell_id

    def add_program_launch(self, run_id: int, launch: ProgramLaunch) -> int:
        """One launch of a program and its figures, in one transaction."""
        with self.tx() as db:
            return _insert(
                db, "INSERT INTO app_launches (run_id, variant, np, idx, kind, status, reason, "
                "exit_code, wall, metrics, stdout, stderr, command, interference) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (run_id, launch.variant, launch.np, launch.index, launch.kind, launch.status,
                 launch.reason, launch.exit_code,
                 launch.wall if math.isfinite(launch.wall) else None, json.dumps(launch.metrics),
                 launch.stdout, launch.stderr, launch.command,
                 json.dumps(launch.interference) if launch.interference is not None else None))

    def add_program_calls(self, launch_id: int, calls: Iterable[RankCalls]) -> None:
        with self.tx() as db:
            db.executemany("INSERT INTO app_calls VALUES (?, ?, ?, ?, ?)",
                           [(launch_id, c.rank, c.function, c.calls, c.seconds) for c in calls])

    def add_program_configs(self, run_id: int, configs: Iterable[TunedConfig]) -> None:
        """An `program --tune` run's configurations, how each left the race, the winners."""
        with self.tx() as db:
            db.executemany("INSERT INTO app_configs VALUES (?, ?, ?, ?, ?, ?, ?)",
                           [(run_id, c.variant, c.impl_id, json.dumps(c.values), c.dropped,
                             c.reason, c.role) for c in configs])

    # --- reading -------------------------------------------------------------------------
    def program_configs(self, run_id: int) -> list[TunedConfig]:
        """An `program --tune` run's configurations in the order they were stored."""
        rows = self.db.execute("SELECT * FROM app_configs WHERE run_id=? ORDER BY rowid",
                               (run_id,))
        return [TunedConfig(r["variant"], r["impl_id"], json.loads(r["config_values"]),
                            r["dropped"], r["reason"], r["role"]) for r in rows]

    def program_launches(self, run_id: int) -> list[ProgramLaunch]:
        """The run's program launches in the order they ran."""
        rows = self.db.execute("SELECT * FROM app_launches WHERE run_id=? ORDER BY id", (run_id,))
        return [ProgramLaunch(r["variant"], r["np"], r["idx"], r["kind"], LaunchStatus(r["status"]),
                          r["reason"], r["exit_code"], math.nan if r["wall"] is None else r["wall"],
                          json.loads(r["metrics"]), r["stdout"], r["stderr"], r["command"],
                          json.loads(r["interference"]) if r["interference"] else None, r["id"])
                for r in rows]

    def program_calls(self, run_id: int) -> dict[int, list[RankCalls]]:
        """launch id -> the MPI calls its ranks made (profiled launches only)."""
        out: dict[int, list[RankCalls]] = {}
        for r in self.db.execute("SELECT c.* FROM app_calls c JOIN app_launches l "
                                 "ON l.id=c.launch_id WHERE l.run_id=? "
                                 "ORDER BY c.launch_id, c.rank", (run_id,)):
            out.setdefault(r["launch_id"], []).append(
                RankCalls(r["rank"], r["function"], r["calls"], r["seconds"]))
        return out

    def program_launch_count(self, run_id: int) -> int:
        """How many launches of its program a program run holds (all kinds)."""
        row = self.db.execute("SELECT COUNT(*) FROM app_launches WHERE run_id=?", (run_id,))
        return int(row.fetchone()[0])

    def runs(self) -> list[tuple[RunRecord, int]]:
        """Every run, and how many cells it holds."""
        rows = self.db.execute("SELECT r.*, (SELECT COUNT(*) FROM cells c WHERE c.run_id=r.id) "
                               "AS ncells FROM runs r ORDER BY id")
        return [(RunRecord.from_row(r), int(r["ncells"])) for r in rows]

    def resolve(self, ref: str) -> int:
        """A run id from a number, 'latest', 'previous' (latest~1) or 'latest~N' (N runs before
        the latest)."""
        if m := RUN_NAME.fullmatch(ref):
            back = 1 if ref == "previous" else int(m[1] or 0)
            ids = [int(r[0]) for r in self.db.execute(
                "SELECT id FROM runs ORDER BY id DESC LIMIT ?", (back + 1,))]
            if not ids:
                raise ArenaError(f"{self.where} holds no runs yet; start one with 'mpiarena run'")
            if len(ids) <= back:
                raise ArenaError(f"no run '{ref}' in {self.where}: it holds {len(ids)} "
                                 f"run{'s' if len(ids) > 1 else ''}; 'mpiarena list' shows them")
            return ids[back]
        if not ref.isdigit() or not self.db.execute("SELECT 1 FROM runs WHERE id=?",
                                                    (int(ref),)).fetchone():
            raise ArenaError(f"no run '{ref}' in {self.where}; give an id 'mpiarena list' shows, "
                             "latest, previous or latest~N")
        return int(ref)

    def run(self, run_id: int) -> RunRecord:
        return RunRecord.from_row(
            self.db.execute("SELECT * FROM runs WHERE id=?", (run_id,)).fetchone())

    def status(self, run: RunRecord) -> RunStatus:
        """The run's status, incomplete for a run whose process died while running (or, of a
        file's run of another host, is not known to be alive)."""
        if run.status != RunStatus.RUNNING:
            return run.status
        return RunStatus.RUNNING if self.db.running(run) else RunStatus.INCOMPLETE

    def implementations(self, run_id: int) -> list[ImplementationRecord]:
        return [ImplementationRecord.from_row(r) for r in self.db.execute(
            "SELECT * FROM implementations WHERE run_id=? ORDER BY impl_id", (run_id,))]

    def variants(self, run_id: int) -> list[VariantRecord]:
        return [VariantRecord.from_row(r) for r in self.db.execute(
            "SELECT * FROM variants WHERE run_id=? ORDER BY variant", (run_id,))]

    def jobs(self, run_id: int) -> list[JobRecord]:
        return [JobRecord.from_row(r) for r in self.db.execute(
            "SELECT * FROM jobs WHERE run_id=? ORDER BY id", (run_id,))]

    def cells(self, run_id: int) -> list[CellRecord]:
        return [CellRecord.from_row(r) for r in self.db.execute(
            "SELECT * FROM cells WHERE run_id=? ORDER BY seq", (run_id,))]

    def measured(self, run_id: int) -> list[MeasuredCell]:
        """The run's measured cells: which variant, cell and launch each is, and its timing."""
        return [MeasuredCell(*r) for r in self.db.execute(
            "SELECT id, variant, bench, size, np, launch, timing FROM cells "
            "WHERE run_id=? AND status=? ORDER BY seq", (run_id, CellStatus.OK.value))]

    def count_cells(self, run_id: int, bench: str, variant: str, np: int) -> int:
        """How many cells of `bench` the run holds for `variant` at `np` ranks."""
        row = self.db.execute("SELECT COUNT(*) FROM cells WHERE run_id=? AND bench=? AND "
                              "variant=? AND np=?", (run_id, bench, variant, np)).fetchone()
        return int(row[0])

    def counts(self, run_id: int) -> tuple[int, int]:
        """How many observations the run holds, and how many rank figures in them."""
        row = self.db.execute("SELECT COUNT(*), COALESCE(SUM(LENGTH(s.seconds)), 0) "
                              "FROM rank_seconds s "
                              "JOIN cells c ON c.id=s.cell_id WHERE c.run_id=?",
                              (run_id,)).fetchone()
        return int(row[0]), int(row[1]) // DTYPE.itemsize

    def rank_seconds(self, cell_ids: Sequence[int]) -> Iterator[tuple[int, list[Vector]]]:
        """Each cell's observations, every rank's seconds per iteration, cell by cell."""
        for chunk in _chunks(cell_ids):
            rows = self.db.execute(
                f"SELECT cell_id, seconds FROM rank_seconds WHERE cell_id IN ({_marks(chunk)}) "
                "ORDER BY cell_id, obs", chunk)
            for cell_id, group in itertools.groupby(rows, key=lambda r: r[0]):
                yield cell_id, [_floats(r[1]) for r in group]

    def rank_extras(self, cell_ids: Sequence[int], name: str | None = None
                    ) -> dict[int, list[dict[str, Vector]]]:
        """cell id -> per observation (aligned with rank_seconds), name -> every rank's value
        (NaN where not finite); only `name` if given."""
        out: dict[int, list[dict[str, Vector]]] = {}
        for chunk in _chunks(cell_ids):
            where = "" if name is None else " AND x.name=?"
            rows = self.db.execute(
                "SELECT s.cell_id, s.obs, x.name, x.value FROM rank_seconds s LEFT JOIN "
                f"rank_extras x ON x.cell_id=s.cell_id AND x.obs=s.obs{where} "
                f"WHERE s.cell_id IN ({_marks(chunk)}) ORDER BY s.cell_id, s.obs",
                ([name] if name is not None else []) + list(chunk))
            for (cell_id, _), group in itertools.groupby(rows, key=lambda r: r[:2]):
                out.setdefault(cell_id, []).append(
                    {r[2]: _floats(r[3]) for r in group if r[2] is not None})
        return out

    def observations(self, run_id: int) -> dict[int, list[list[float]]]:
        """cell id -> per observation, every rank's seconds per iteration."""
        return {c: [v.tolist() for v in vectors]
                for c, vectors in self.rank_seconds(self._cell_ids(run_id))}

    def extras(self, run_id: int) -> dict[int, dict[int, dict[str, list[float]]]]:
        """cell id -> observation index -> name -> every rank's value (NaN where not finite)."""
        out: dict[int, dict[int, dict[str, list[float]]]] = {}
        for cell_id, obs, name, blob in self.db.execute(
                "SELECT x.cell_id, x.obs, x.name, x.value FROM rank_extras x JOIN cells c "
                "ON c.id=x.cell_id WHERE c.run_id=? ORDER BY x.cell_id, x.obs, x.name",
                (run_id,)):
            out.setdefault(cell_id, {}).setdefault(obs, {})[name] = _floats(blob).tolist()
        return out

    def _cell_ids(self, run_id: int) -> list[int]:
        return [r[0] for r in self.db.execute("SELECT id FROM cells WHERE run_id=? ORDER BY id",
                                              (run_id,))]

    # --- each cell's summary, cached ---------------------------------------------------
    def summaries(self, run_id: int, analysis: int) -> dict[int, CellFigures]:
        """cell id -> (figure per observation, late shares) for the cells summarized by this
        analysis version."""
        return {cell_id: (_floats(figures), _floats(late)) for cell_id, figures, late in
                self.db.execute("SELECT s.cell_id, s.figures, s.late FROM summaries s JOIN "
                                "cells c ON c.id=s.cell_id WHERE c.run_id=? AND s.analysis=?",
                                (run_id, analysis))}

    def save_summaries(self, analysis: int, summaries: dict[int, CellFigures]) -> None:
        """Keep cells' summaries; a store that cannot be written (read-only) keeps none."""
        with self.db.unless_read_only(), self.tx() as db:
            db.executemany(_upsert("summaries", ("cell_id", "analysis", "figures", "late"),
                                   ("cell_id",)),
                           [(c, analysis, _blob(f), _blob(late))
                            for c, (f, late) in summaries.items()])


def _chunks(ids: Sequence[int], n: int = 500) -> Iterator[list[int]]:
    for i in range(0, len(ids), n):
        yield list(ids[i:i + n])


def _marks(chunk: Sized) -> str:
    return ",".join("?" * len(chunk))


def _insert(db: Connection, sql: str, params: Sequence[Any]) -> int:
    """The id the database gave the row `sql` inserts."""
    return int(db.execute(f"{sql} RETURNING id", params).fetchone()[0])


def _upsert(table: str, columns: Sequence[str], key: Sequence[str]) -> str:
    """INSERT of a row of `columns` that replaces the row of the same `key`."""
    sets = ", ".join(f"{c}=excluded.{c}" for c in columns if c not in key)
    return (f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({_marks(columns)}) "
            f"ON CONFLICT ({', '.join(key)}) DO UPDATE SET {sets}")
