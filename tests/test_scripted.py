"""The whole pipeline without an MPI library: scripted libraries (impls/scripted.py) played by
the scripted core through the real command, plan, executor, store, analysis and reports, and
every way a launch fails (a crash, a kill, a hang, garbage, a refused or invalid cell), as a
user sees it."""

from __future__ import annotations

import math
import re
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import STARTED, mpiarena, spawn

from mpiarena.base.status import LaunchShape, RunStatus
from mpiarena.commands.exit_status import Exit
from mpiarena.impls.scripted import SCRIPTED_VAR
from mpiarena.model.benchmarks import BENCHMARKS
from mpiarena.store import Store
from mpiarena.store.results import reduce

SCRIPTS = Path(__file__).parent / "scripted"
A = 'version = "lib-a 1.0"\nlatency = 1e-6\n'
B = 'version = "lib-b 2.0"\nlatency = 2e-6\nper_byte = 2e-10\n'
CELLS = ("--bench", "pingpong,allreduce", "--sizes", "0,1K")


@pytest.fixture
def libs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory of scripts that MPIARENA_SCRIPTED names for every command the test runs."""
    folder = tmp_path / "libs"
    folder.mkdir()
    monkeypatch.setenv(SCRIPTED_VAR, str(folder))
    return folder


def script(folder: Path, name: str, text: str, *faults: str) -> None:
    """NAME.toml in folder: text, then one [[faults]] table per fault ("at=cell do=hang ...")."""
    tables = "".join("[[faults]]\n" + "".join(
        f"{k} = {v if v.isdigit() else repr(v)}\n" for k, v in (w.split("=") for w in f.split()))
        for f in faults)
    (folder / f"{name}.toml").write_text(text + tables)


def run(db: str, *args: str) -> subprocess.CompletedProcess[str]:
    """mpiarena run of the quick suite's cells on lib-a and lib-b."""
    return mpiarena("run", "--suite", "quick", "--impl", "lib-a,lib-b", "--db", db, *args,
                    timeout=300)


def one_line(text: str) -> str:
    return " ".join(text.split())


def test_two_scripted_libraries_are_ranked_as_their_scripts_say(libs, db):
    script(libs, "lib-a", A)
    script(libs, "lib-b", B)
    done = run(db, *CELLS, "--launches", "6")
    assert done.returncode == Exit.OK, done.stderr
    assert re.search(r"Fastest MPI library here[^\n]*: lib-a\b", done.stdout)
    assert re.search(r"lib-b  (1\.9\d|2\.0\d)x", done.stdout)  # its script's time, twice lib-a's
    assert "Decided: 4 of 4 comparisons between MPI libraries" in done.stdout
    store = Store(Path(db))
    (run_id,) = [r.id for r, _ in store.runs()]
    assert store.status(store.run(run_id)) == RunStatus.COMPLETE
    assert {i.version_string for i in store.implementations(run_id)} == {"lib-a 1.0",
                                                                        "lib-b 2.0"}


def test_the_budget_buys_partial_launches_until_it_is_spent(libs, db):
    script(libs, "lib-a", 'version = "a"\nlatency = 1e-6\nspread = 0.1\n')
    script(libs, "lib-b", 'version = "b"\nlatency = 1.1e-6\nspread = 0.1\n')
    began = time.monotonic()
    done = run(db, "--bench", "pingpong", "--sizes", "0", "--launches", "4",
                         "--budget", "8s")
    assert done.returncode == Exit.OK, done.stderr
    assert time.monotonic() - began >= 8  # 10% apart: the comparison stays open a while
    store = Store(Path(db))
    (run_id,) = [r.id for r, _ in store.runs()]
    shapes = [j.shape for j in store.jobs(run_id)]
    assert shapes.count(LaunchShape.PARTIAL) >= 2, shapes


def test_a_library_that_crashes_at_start_up_is_named_and_the_other_measured(libs, db):
    script(libs, "lib-a", A)
    script(libs, "lib-b", B, "at=start do=crash")
    done = run(db, *CELLS, "--launches", "4")
    assert done.returncode == Exit.FAILED
    said = one_line(done.stderr + done.stdout)
    assert re.search(r"lib-b skipped at \w+ [\w ]+, 2 ranks and 3 more cells: launch 0 did not "
                     r"start: start-up failed: the job ended \(exit status -11\); the launcher "
                     "said: scripted core: crash at start-up", said), said
    assert "failed jobs: 4 jobs" in said
    assert "cells failed (the warnings above name them): exit status 4" in said
    shown = mpiarena("show", "1", "--tables", "--db", db)
    assert "lib-a" in shown.stdout and shown.returncode == Exit.OK


@pytest.mark.parametrize(("fault", "why"), [
    ("killed", "the job ended (exit status -9)"),
    ("exit", "the job ended (exit status 1); the launcher said: scripted core: exit in pingpong"),
    ("garbage", "the job printed a line mpiarena cannot read: 'obs\\t"),
])
def test_a_cell_that_fails_is_named_with_why_and_the_cells_after_it_go_on(libs, db, fault,
                                                                           why):
    script(libs, "lib-a", A)
    script(libs, "lib-b", B, f"at=cell bench=pingpong size=0 launch=0 do={fault}")
    done = run(db, *CELLS, "--launches", "4")
    assert done.returncode == Exit.FAILED
    assert f"error: lib-b failed at pingpong 0 B, 2 ranks: {why}" in one_line(done.stdout)
    store = Store(Path(db))
    cells = [c for c in store.cells(1) if c.variant == "lib-b" and c.bench == "allreduce"]
    assert cells and all(c.status == "ok" for c in cells)  # a fresh launch measured the rest


def test_a_cell_that_is_invalid_in_every_launch_fails(libs, db):
    script(libs, "lib-a", A)
    script(libs, "lib-b", B, "at=cell bench=pingpong size=0 do=invalid")
    done = run(db, *CELLS, "--launches", "4")
    assert done.returncode == Exit.FAILED
    assert "lib-b invalid at pingpong 0 B, 2 ranks: rank 1 received data that differ from " \
        "what was sent" in one_line(done.stdout)


def test_a_cell_that_hangs_is_cut_at_the_timeout(libs, db):
    script(libs, "lib-a", A)
    script(libs, "lib-b", B, "at=cell bench=pingpong size=1024 do=hang")
    began = time.monotonic()
    done = run(db, *CELLS, "--launches", "4", "--timeout", "1s")
    assert done.returncode == Exit.FAILED
    assert "lib-b failed at pingpong 1 KiB, 2 ranks: no answer within the timeout" in \
        one_line(done.stdout)
    assert time.monotonic() - began < 60  # each hang cut at 1 s, never retried
    assert re.search(r"Fastest MPI library here[^\n]*: lib-a\b", done.stdout)


def test_a_cell_the_library_does_not_offer_is_not_a_failure(libs, db):
    script(libs, "lib-a", A)
    script(libs, "lib-b", B, "at=cell bench=allreduce do=na")
    done = run(db, *CELLS, "--launches", "4")
    assert done.returncode == Exit.OK, done.stderr
    store = Store(Path(db))
    refused = {c.status for c in store.cells(1) if c.variant == "lib-b" and c.bench == "allreduce"}
    assert refused == {"na"}


def test_a_launcher_that_never_exits_after_finalize_fails_its_job(libs, db):
    script(libs, "lib-a", A)
    script(libs, "lib-b", B, "at=quit launch=2 do=hang")
    done = run(db, *CELLS, "--launches", "4", "--timeout", "2s")
    store = Store(Path(db))
    failed = [j for j in store.jobs(1) if j.status == "failed"]
    assert [j.variant for j in failed] == ["lib-b"]
    assert "after quit" in (failed[0].reason or "") or "timeout" in (failed[0].reason or "")
    assert done.returncode in (Exit.OK, Exit.FAILED)


def test_ctrl_c_keeps_what_was_measured_and_marks_the_run_incomplete(libs, db):
    script(libs, "lib-a", A)
    script(libs, "lib-b", B, "at=cell bench=allreduce size=1024 launch=3 do=hang")
    proc = spawn("run", "--suite", "quick", "--impl", "lib-a,lib-b", *CELLS, "--launches", "6",
                 "--timeout", "600s", "--db", db)
    STARTED.append(proc)
    deadline, stored = time.monotonic() + 120, [0]
    while time.monotonic() < deadline and (stored[-1] == 0 or len(set(stored[-3:])) > 1):
        time.sleep(0.5)  # until lib-b's fourth launch hangs in its cell
        stored.append(_cells(db))
    proc.send_signal(signal.SIGINT)
    err = proc.communicate(timeout=60)[1]
    assert proc.returncode == Exit.INTERRUPTED
    assert "interrupted: run 1 kept what was measured (marked incomplete)" in err
    store = Store(Path(db))
    assert store.status(store.run(1)) == RunStatus.INCOMPLETE
    assert len(store.cells(1)) == stored[-1] >= 4 * 3  # three whole launches of each cell


def _cells(db: str) -> int:
    """Cells stored so far, read while the run writes."""
    try:
        with sqlite3.connect(db, timeout=5) as con:
            (n,) = con.execute("SELECT count(*) FROM cells").fetchone()
    except sqlite3.OperationalError:  # not created yet
        return 0
    return int(n)


def test_report_of_a_scripted_run_is_written_without_a_library(libs, db, tmp_path):
    script(libs, "lib-a", A)
    script(libs, "lib-b", B)
    assert run(db, *CELLS, "--launches", "4").returncode == Exit.OK
    out = tmp_path / "report.html"
    done = mpiarena("report", "1", "--db", db, "-o", str(out))
    assert done.returncode == Exit.OK, done.stderr
    page = out.read_text()
    assert "lib-a" in page and "lib-b" in page


def test_a_script_that_is_not_toml_is_one_line(libs, db):
    script(libs, "lib-a", A)
    script(libs, "lib-b", "latency = [")
    done = run(db, *CELLS)
    assert done.returncode == Exit.BAD_INPUT
    assert "scripted library" in done.stderr and "fix the script" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_test_not_marked_mpi_cannot_start_a_launcher_or_a_built_core(tmp_path):
    core = tmp_path / "arena"
    core.write_bytes(b"\x7fELF")
    for argv in (["mpiexec", "-n", "2", "true"], [str(core)]):
        with pytest.raises(RuntimeError, match="started by a test not marked mpi"):
            subprocess.Popen(argv)


def test_observations_recorded_in_a_real_run_replay_to_its_verdict(libs, db):
    """tests/scripted/: a real quick run's launches of MPICH 4.0.2 and Open MPI 4.1.4 (made
    by scripts/scripted_from_store.py), where allreduce 0 B was decided 10.9x apart."""
    for recorded in SCRIPTS.glob("rec-*.toml"):
        (libs / recorded.name).write_text(recorded.read_text())
    done = mpiarena("run", "--suite", "quick", "--impl", "rec-mpich,rec-openmpi", "--bench",
                    "allreduce", "--sizes", "0", "--launches", "10", "--db", db, "--tables")
    assert done.returncode == Exit.OK, done.stderr
    found = re.search(r"allreduce 0 B: rec-openmpi ran ([\d.]+)x faster than rec-mpich",
                      done.stdout)
    assert found and 8 < float(found[1]) < 14, done.stdout


def test_a_launch_that_starts_with_garbage_is_a_failed_start(libs, db):
    script(libs, "lib-a", A)
    script(libs, "lib-b", B, "at=start launch=0 do=garbage")
    done = run(db, *CELLS, "--launches", "3")
    assert "error: lib-b job at 2 ranks failed: start-up failed: the job printed a line " \
        "mpiarena cannot read: 'hello\\tscripted\\ttwo\\t?'" in one_line(done.stdout)
    assert done.returncode == Exit.OK  # its cells measured in the launches after: none lost


def test_precision_adds_launches_of_the_spread_cells_only(libs, db):
    script(libs, "lib-a", 'version = "a"\nspread = 0.3\n')
    script(libs, "lib-b", 'version = "b"\nspread = 0.001\n')
    done = run(db, "--bench", "pingpong", "--sizes", "0", "--launches", "3", "--precision",
               "5%", "--max-time", "3s")
    assert done.returncode == Exit.OK, done.stderr
    store = Store(Path(db))
    launches = {v: len([j for j in store.jobs(1) if j.variant == v]) for v in ("lib-a", "lib-b")}
    assert 3 <= launches["lib-b"] < launches["lib-a"], launches


def test_the_runner_and_the_store_reduce_an_observation_over_ranks_alike():
    """What the budget steers by (Benchmark.observation) is what the report shows
    (store/results.py's reduce), wherever a rank's figure is NaN."""
    nan = math.nan
    for bench in (b for b in BENCHMARKS.values() if b.figure is None):
        for per_rank in ([nan, 2e-6, 1e-6], [1e-6, nan, 3e-6], [2e-6, 1e-6], [nan, nan]):
            runner = bench.observation(per_rank)
            (stored,) = reduce(bench, [np.array(per_rank)])
            assert runner == stored or (math.isnan(runner) and math.isnan(stored)), \
                (bench.name, per_rank, runner, stored)
