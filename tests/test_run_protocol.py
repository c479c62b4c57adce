"""One run protocol: one place starts a run; every kind's settings are written and read back as
the same record; the lifecycle records a run's status on every path (bad input, Ctrl-C, killed
outright); an older store's runs get their kind, and an old `program --tune` run reads with
defaults."""

from __future__ import annotations

import ast
import functools
import json
import shutil
import signal
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import IMPLS, STARTED, leftovers, mpiarena, spawn, stored_run

from mpiarena.base.records import Datatype, RunKind, RunSettings
from mpiarena.model.programs import BuiltProgram, Metric
from mpiarena.model.runs import (
    SETTINGS,
    ImportedFrom,
    ImportedSettings,
    ProgramSettings,
    ProgramTuning,
    RunStart,
    SimulatedSettings,
    settings_of,
)
from mpiarena.store import SCHEMA_VERSION, Store

SRC = Path(__file__).resolve().parent.parent / "src" / "mpiarena"
SMALL = ("--bench", "pingpong", "--sizes", "8", "--np", "2")


@functools.cache
def _functions() -> list[tuple[str, list[ast.AST]]]:
    """module:function of every function in src, with every node inside it (parsed once)."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                found.append((f"{path.relative_to(SRC)}:{node.name}", list(ast.walk(node))))
    return found


def _functions_holding(found_in: Callable[[ast.AST], bool]) -> list[str]:
    """module:function of every function in src with a node `found_in` accepts."""
    return [name for name, inside in _functions() if any(map(found_in, inside))]


def _text(text: str) -> Callable[[ast.AST], bool]:
    """A string constant holding `text`."""
    return lambda n: isinstance(n, ast.Constant) and isinstance(n.value, str) and text in n.value


def _use(name: str) -> Callable[[ast.AST], bool]:
    """A method or attribute `name` used (x.name)."""
    return lambda n: isinstance(n, ast.Attribute) and n.attr == name


def test_one_place_starts_a_run():
    """The runs table gets rows in one function, which only the lifecycle calls; an ended run
    is written to again only through the same lifecycle (reopened)."""
    assert _functions_holding(_text("INSERT INTO runs")) == ["store/__init__.py:_begin"]
    assert _functions_holding(_use("_begin")) == ["store/__init__.py:new_run"]
    assert _functions_holding(_use("_reopen")) == ["store/__init__.py:reopened"]
    assert _functions_holding(_use("_end")) == ["store/__init__.py:_recording"]
    assert _functions_holding(_use("_recording")) == ["store/__init__.py:new_run",
                                                      "store/__init__.py:reopened"]
    assert _functions_holding(_use("begin_run")) == _functions_holding(_use("end_run")) == []


SAMPLES = {
    RunKind.BENCHMARK: RunSettings(benchmarks=("pingpong", "allreduce"), sizes=(8, 1024),
                                   nps=(2, 4), observations=5, launches=2, budget=105.0,
                                   target_time=1e-3, max_cell_time=2.0, window=64, hold_time=None,
                                   sync="barrier", offcache=True, validate=False, timeout=60.0,
                                   topology="local", precision=0.05, max_time=10.0, wait_quiet=1.0,
                                   ranks_run_as="mpiuser", datatype=Datatype.DOUBLE),
    RunKind.REPRODUCED: RunSettings(benchmarks=("bcast",), sizes=(8,), nps=(2,), study="chau2001",
                                    experiment="short", quick=True),
    RunKind.TUNE: RunSettings(benchmarks=("allreduce",), sizes=(8,), nps=(2,),
                              tuning={"x:allreduce=ring": {"impl": "x", "coll": "allreduce",
                                                           "algorithm": "ring"}}),
    RunKind.PROGRAM: ProgramSettings(np=4, launches=10, warmup=2, timeout=600.0, profile=True,
                                     metrics=(Metric("rate", r"rate (\S+)", True),),
                                     topology="local", ranks_run_as="self",
                                     programs={"x": BuiltProgram("x", ["/tmp/a.out", "3"],
                                                                 "source", "/lib/libmpi.so")},
                                     program=("a.c", "3"), build="", src="/tmp"),
    RunKind.PROGRAM_TUNING: ProgramSettings(np=2, launches=3,
                                            tune=ProgramTuning(120.0, 3, ("coll",), True,
                                                               "/tmp/out"),
                                            spaces=({"impl": "x", "dimensions": []},)),
    RunKind.SIMULATED: SimulatedSettings(benchmarks=("allreduce",), sizes=(8,), nps=(8,),
                                         simgrid="3.32", link="10Gbps", factors=("--cfg=a:b",),
                                         models={"smpi-3.32:mpich": "MPICH's selector"}),
    RunKind.IMPORTED: ImportedSettings(benchmarks=("pingpong",), sizes=(8,), nps=(2,),
                                       topology="imported", ranks_run_as="-",
                                       datatype=Datatype.CHAR,
                                       imported=ImportedFrom("osu", None, "file",
                                                             {"x": ["/tmp/osu.txt"]})),
}


@pytest.mark.parametrize("kind", list(RunKind))
def test_each_kinds_settings_are_read_back_as_written(tmp_path, kind):
    """Written as its record's `stored`, through JSON and the store, read back as the same class
    and equal (a kind without a sample here: its record's defaults)."""
    written = SAMPLES.get(kind) or SETTINGS[kind]()
    assert type(written) is SETTINGS[kind]
    assert SETTINGS[kind].read(json.loads(json.dumps(written.stored()))) == written
    store = Store(tmp_path / "s.db")
    run = store.run(stored_run(store, "suite", written, kind=kind))
    assert run.kind == kind
    back = settings_of(run)
    assert type(back) is type(written) and back == written


def test_every_kind_has_a_settings_record():
    assert set(SETTINGS) == set(RunKind)


def test_an_older_store_gets_each_runs_kind_from_what_it_holds(tmp_path):
    """Schema 11 had no runs.kind: opened, each run's kind is derived from its suite and
    settings."""
    path = tmp_path / "v11.db"
    Store(path).close()
    held = [("quick", {}), ("app", {"np": 2}), ("app", {"np": 2, "tune": {}}),
            ("simulate", {}), ("imported osu", {}), ("mpi3", {"study": "nevin1996"}),
            ("tune", {"tuning": {"v": {}}}), ("tune-verify", {"tuning_verify": {"x": "/f"}})]
    with sqlite3.connect(path) as db:
        db.execute("ALTER TABLE runs DROP COLUMN kind")
        db.executemany("INSERT INTO runs (started, status, suite, command, seed, version, "
                       "machine, settings, pid, host) VALUES ('', 'complete', ?, '', 0, '', "
                       "'{}', ?, 0, '')", [(s, json.dumps(d)) for s, d in held])
        db.execute("UPDATE meta SET value='11' WHERE key='schema_version'")
    store = Store(path)
    assert store.db.execute("SELECT value FROM meta").fetchone()[0] == str(SCHEMA_VERSION)
    assert [r.kind for r, _ in store.runs()] == [
        RunKind.BENCHMARK, RunKind.PROGRAM, RunKind.PROGRAM_TUNING, RunKind.SIMULATED,
        RunKind.IMPORTED, RunKind.REPRODUCED, RunKind.TUNE, RunKind.TUNE]


def test_an_app_tune_run_stored_without_its_budget_shows(tmp_path):
    """The captured store 03 (a schema 8 program --tune run whose settings were {"tune": {}})
    crashed `show` with KeyError 'budget': its record reads with defaults."""
    path = tmp_path / "v8.db"
    Store(path).close()
    with sqlite3.connect(path) as db:
        db.execute("ALTER TABLE runs DROP COLUMN kind")
        db.execute("DROP TABLE app_configs")
        db.execute("INSERT INTO runs (started, status, suite, command, seed, version, machine, "
                   "settings, pid, host) VALUES ('', 'complete', 'app', 't', 0, '0', '{}', "
                   "'{\"tune\": {}}', 0, '')")
        db.execute("UPDATE meta SET value='8' WHERE key='schema_version'")
    done = mpiarena("show", "1", "--db", str(path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "program tuning run 1:  on 0 ranks, budget not recorded"
    assert ProgramTuning.read({}) == ProgramTuning(None, 0, (), True, None)


def test_the_lifecycle_records_a_crash_and_a_success(tmp_path):
    """Any other exception than bad input or Ctrl-C ends the run incomplete, "crashed" and what
    it was, and goes on up; a body that ends ends the run complete."""
    store = Store(tmp_path / "s.db")
    start = RunStart(RunKind.BENCHMARK, "quick", "t", RunSettings())
    with pytest.raises(ZeroDivisionError), store.new_run(start):
        _ = 1 / 0
    with store.new_run(start):
        pass
    crashed, done = (r for r, _ in store.runs())
    assert (crashed.status, crashed.note) == ("incomplete", "crashed: ZeroDivisionError: "
                                                            "division by zero")
    assert (done.status, done.note) == ("complete", None) and crashed.finished and done.finished


@pytest.mark.skipif(shutil.which("smpirun") is None, reason="SimGrid is not installed")
def test_bad_input_after_the_run_started_ends_it_incomplete_with_its_line(tmp_path):
    """SMPI refuses an algorithm it does not know once the simulated run has started."""
    db = tmp_path / "x.db"
    done = mpiarena("simulate", "--np", "8", "--bench", "allreduce", "--sizes", "8",
                    "--algorithm", "allreduce=bogus", "--db", str(db))
    assert done.returncode == 2
    (run, _), = Store(db).runs()
    assert run.status == "incomplete" and run.finished
    assert run.note and "has no algorithm 'bogus'" in run.note
    assert run.note in done.stderr  # the one line said is the one kept


def _first_cell(db: Path, proc) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if sqlite3.connect(db).execute("SELECT COUNT(*) FROM cells").fetchone()[0]:
                return
        except sqlite3.OperationalError:
            pass
        if proc.poll() is not None:
            raise AssertionError(f"the run ended first: {proc.communicate()[1][-2000:]}")
        time.sleep(0.05)
    raise AssertionError("no cell within 120 s")


def _run(db: Path):
    proc = spawn("run", f"--impl={IMPLS[0].id}", *SMALL, "--observations", "400",
                 "--launches", "3", "--db", str(db))
    STARTED.append(proc)
    return proc


def _stored(db: Path) -> tuple[str, str | None, str | None]:
    return sqlite3.connect(db).execute("SELECT status, note, finished FROM runs").fetchone()


def test_ctrl_c_ends_the_run_interrupted(tmp_path):
    db = tmp_path / "r.db"
    proc = _run(db)
    _first_cell(db, proc)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    status, note, finished = _stored(db)
    assert (status, note) == ("incomplete", "interrupted") and finished
    assert leftovers() == []


def test_a_run_killed_outright_is_marked_incomplete_once_by_the_next_command(tmp_path):
    db = tmp_path / "r.db"
    proc = _run(db)
    _first_cell(db, proc)
    proc.kill()  # SIGKILL: the run can record nothing; its watchdog tears down its launches
    proc.communicate(timeout=60)
    assert _stored(db) == ("running", None, None)
    assert "incomplete" in mpiarena("list", "--db", str(db)).stdout
    assert _stored(db) == ("incomplete", None, None)  # when and why it stopped: not known
    watch = sqlite3.connect(db)
    before = watch.execute("PRAGMA data_version").fetchone()[0]
    assert "incomplete" in mpiarena("list", "--db", str(db)).stdout
    assert watch.execute("PRAGMA data_version").fetchone()[0] == before  # not written again
    deadline = time.monotonic() + 30
    while leftovers() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert leftovers() == []


WIDE_BEFORE = {  # issue 53's functions that started or ran a run with up to 11 parameters
    "runner/program_tuning.py": ("tune_program",), "runner/reproduce.py": ("run",),
    "runner/program.py": ("measure_program", "__init__"),
    "commands/program_tuning.py": ("tune_program_run",),
    "runner/library_tuning.py": ("_run", "tune", "verify"), "runner/session.py": ("measure",),
    "imports/ingest.py": ("ingest", "_settings"), "runner/simulate.py": ("simulate",)}


def test_what_starts_a_run_takes_at_most_six_parameters():
    """Records (RunContext, AppRun, ImportAsk, ReproductionAsk, Recorded) in place of long
    parameter lists; `self` not counted."""
    wide = []
    for module, names in WIDE_BEFORE.items():
        for node in ast.walk(ast.parse((SRC / module).read_text())):
            if isinstance(node, ast.FunctionDef) and node.name in names:
                a = node.args
                count = len([x for x in a.posonlyargs + a.args + a.kwonlyargs
                             if x.arg != "self"]) + bool(a.vararg) + bool(a.kwarg)
                if count > 6:
                    wide.append(f"{module}:{node.name} ({count})")
    assert wide == []
