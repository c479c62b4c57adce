"""The store on a real PostgreSQL server (Debian's `postgresql`, started here on a Unix socket):
runs at once lose nothing, a killed run is marked incomplete once by the next command, every
reader reads it, and `store copy` takes runs to a file and back unchanged."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import psycopg
import pytest
from conftest import IMPLS, STARTED, leftovers, mpiarena, spawn, stored_run
from postgres_fixture import BIN, PgServer, pg_server
from slurm_local import slurm_env_fixture  # noqa: F401 - the fixture slurm_env
from test_run_lifecycle import half_an_import

from mpiarena.base.records import (
    CellRow,
    ImplementationRecord,
    JobRow,
    VariantRecord,
)
from mpiarena.base.status import CellStatus, LaunchStatus
from mpiarena.model.programs import LaunchKind, ProgramLaunch, RankCalls, Role, TunedConfig
from mpiarena.model.whatran import Cvar, WhatRan
from mpiarena.store import Obs, Store

pytestmark = pytest.mark.skipif(BIN is None, reason="needs PostgreSQL: apt-get install postgresql")
MPI = [i.id for i in IMPLS if i.family in ("mpich", "openmpi")][:1]  # a job's ranks: srun
RUN = ("run", "--impl", "floor", "--bench", "pingpong", "--sizes", "8,1K", "--launches", "3")


@pytest.fixture(scope="session")
def server() -> Iterator[PgServer]:
    """One server for the session, stopped and removed at its end; its socket in /var/tmp,
    which a Slurm job's node sees as this machine does (each emulated node has a /tmp of its
    own)."""
    with pg_server(under="/var/tmp") as up:
        yield up


@pytest.fixture(scope="session")
def four_runs(server: PgServer) -> str:
    """A database four runs wrote at once: its URI."""
    uri = server.database("four")
    procs = [spawn(*RUN, "--db", uri) for _ in range(4)]
    STARTED.extend(procs)
    for proc in procs:
        _out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-2000:]
    return uri


def _query(uri: str, sql: str, *params: object) -> list[tuple[object, ...]]:
    with psycopg.connect(uri) as conn:
        return conn.execute(sql, params).fetchall()


def test_four_runs_at_once_complete_with_every_cell(four_runs):
    runs = _query(four_runs, "SELECT id, status, pid FROM runs ORDER BY id")
    assert [(i, s) for i, s, _ in runs] == [(n, "complete") for n in (1, 2, 3, 4)]
    assert len({pid for *_, pid in runs}) == 4
    cells = _query(four_runs, "SELECT run_id, COUNT(*), COUNT(*) FILTER (WHERE status='ok'), "
                   "COUNT(DISTINCT (bench, size, launch)) FROM cells GROUP BY run_id "
                   "ORDER BY run_id")
    assert cells == [(n, 6, 6, 6) for n in (1, 2, 3, 4)]  # 2 sizes x 3 launches, each once
    empty = _query(four_runs, "SELECT COUNT(*) FROM cells c WHERE NOT EXISTS "
                   "(SELECT 1 FROM rank_seconds s WHERE s.cell_id = c.id)")
    assert empty == [(0,)]


def test_show_report_compare_and_history_read_a_server(four_runs, tmp_path):
    shown = mpiarena("show", "latest", "--db", four_runs)
    assert shown.returncode == 0 and "pingpong" in shown.stdout, shown.stderr
    listed = mpiarena("list", "--db", four_runs)
    assert listed.stdout.count("complete") == 4, listed.stdout
    report = mpiarena("report", "2", "--db", four_runs, "-o", str(tmp_path / "r.html"))
    assert report.returncode == 0 and (tmp_path / "r.html").stat().st_size > 0, report.stderr
    compared = mpiarena("compare", "1", "2", "--db", four_runs)
    assert compared.returncode == 0 and compared.stdout.startswith("Run 1 ("), compared.stderr
    assert "against run 2 (" in compared.stdout.lower(), compared.stdout
    history = mpiarena("history", "--db", four_runs)
    assert history.returncode == 0 and "4 runs" in history.stdout, history.stdout


def test_import_and_export_through_a_server(server, tmp_path):
    uri = server.database("imported")
    osu = Path(__file__).parent / "suite-output" / "osu-5.3" / "osu_latency.out"
    done = mpiarena("import", "osu", str(osu), "--impl", "mpich-4.0.2", "--db", uri)
    assert done.returncode == 0, done.stderr
    assert "stored run 1 in postgresql://arena@/imported" in done.stderr
    out = tmp_path / "raw.csv"
    done = mpiarena("export", "latest", "--format", "csv", "-o", str(out), "--db", uri)
    assert done.returncode == 0, done.stderr
    rows = out.read_text().splitlines()
    cells = _query(uri, "SELECT COUNT(*) FROM rank_seconds")[0][0]
    assert len(rows) - 1 == cells and "pingpong" in rows[1], rows[:2]


def test_store_copy_to_a_file_and_back_shows_the_same(four_runs, server, tmp_path):
    file, back = tmp_path / "site.db", server.database("back")
    there = mpiarena("store", "copy", four_runs, str(file))
    assert there.returncode == 0 and "copied 4 runs" in there.stdout, there.stderr
    again = mpiarena("store", "copy", four_runs, str(file))
    assert "copied 0 runs" in again.stdout and "4 were there already" in again.stdout
    home = mpiarena("store", "copy", str(file), back)
    assert home.returncode == 0 and "copied 4 runs" in home.stdout, home.stderr
    for run in ("1", "4"):
        views = [mpiarena("show", run, "--all", "--db", db).stdout
                 for db in (four_runs, str(file), back)]
        assert views[0] == views[1] == views[2] and "pingpong" in views[0]


def test_a_killed_run_is_marked_incomplete_once_by_the_next_command(server):
    uri = server.database("killed")
    proc = spawn("run", "--impl", "floor", "--bench", "pingpong", "--sizes", "8,1K,64K",
                 "--launches", "40", "--db", uri)
    STARTED.append(proc)
    deadline = time.monotonic() + 120
    while not _cells(uri):
        assert proc.poll() is None and time.monotonic() < deadline, "no cell stored"
        time.sleep(0.1)
    assert mpiarena("list", "--db", uri).stdout.count("running") == 1  # alive: left as it is
    proc.kill()  # SIGKILL: the run records nothing; the server drops its lock
    proc.communicate(timeout=60)
    assert _query(uri, "SELECT status, finished FROM runs") == [("running", None)]
    assert "incomplete" in mpiarena("list", "--db", uri).stdout
    marked = _query(uri, "SELECT status, finished, note, xmin::text FROM runs")
    assert marked[0][:3] == ("incomplete", None, None)
    assert "incomplete" in mpiarena("show", "latest", "--db", uri).stdout
    assert _query(uri, "SELECT status, finished, note, xmin::text FROM runs") == marked  # once
    deadline = time.monotonic() + 30
    while leftovers() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert leftovers() == []


def test_a_batch_job_writes_the_server_and_is_shown_from_it(server, slurm_env, tmp_path):
    uri = server.database("batch")
    done = mpiarena("run", "--sbatch", "--sbatch-time=10m", "--impl", MPI[0], "--bench",
                    "pingpong", "--sizes", "8", "--np", "2", "--observations", "3", "--nodes",
                    "1", "--launches", "1", "--db", uri, env=slurm_env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    job = int(re.search(r"as job (\d+)", done.stderr)[1])
    assert done.stdout.startswith("Run 1 (complete)"), done.stdout
    assert [(s, json.loads(t)["topology"]) for s, t in
            _query(uri, "SELECT status, settings FROM runs")] == [("complete", f"slurm:job{job}")]
    [script] = (tmp_path / "mpiarena-jobs").glob("mpiarena-run-*.sh")
    assert f"--db '{uri}' --slurm" in script.read_text()  # quoted for the shell


def _cells(uri: str) -> int:
    try:
        return int(_query(uri, "SELECT COUNT(*) FROM cells")[0][0])  # type: ignore[call-overload]
    except psycopg.errors.UndefinedTable:  # not made yet
        return 0


def _written(store: Store) -> object:
    """Every kind of row the store writes, written through its calls, then read back."""
    run_id = stored_run(store)
    for prefix in ("/usr", "/opt"):  # the second replaces the first
        store.add_implementation(ImplementationRecord(run_id=run_id, impl_id="mpich-4.0.2",
                                                      family="mpich", version="4.0.2",
                                                      version_string="MPICH 4.0.2", origin="debian",
                                                      prefix=prefix, wrapper="mpicc",
                                                      launcher="mpiexec", wrapper_flags="-lmpi",
                                                      cflags="-O2"))
        store.add_variant(VariantRecord(run_id=run_id, variant="v", impl_id="mpich-4.0.2",
                                        name=prefix, env={"A": "1"}, args=[], binding="core"))
    job = store.add_job(JobRow(run_id=run_id, variant="v", np=2, topology="local", binding="core",
                               command=["mpiexec"]))
    store.update_job(job, status="ok", ranks=[{"host": "h"}], tick=1e-9)
    what = WhatRan((Cvar("MPIR_CVAR_X", "1", "all"),), "", "ch4:ofi", "MPI_T cvar")
    store.add_what_ran(job, what)
    store.add_what_ran(job, what)  # one configs row for both
    cell = store.add_cell(CellRow(run_id=run_id, job_id=job, variant="v", bench="pingpong",
                                  size=8, np=2, iterations=10, status=CellStatus.OK, seq=1),
                          [Obs(0, [1.5e-6, 2.5e-6], {"cpu": [1.0, 0.5]})])
    for figures in ([1.0], [2.0]):  # the second replaces the first
        store.save_summaries(1, {cell: (np.array(figures), np.array([]))})
    launch = store.add_program_launch(run_id, ProgramLaunch(
        "v", 2, 0, LaunchKind.TIMED, LaunchStatus.OK, "", 0, 0.25, {"rate": 3.0}))
    store.add_program_calls(launch, [RankCalls(0, "MPI_Send", 4, 1e-3)])
    store.add_program_configs(run_id, [TunedConfig("z", "mpich-4.0.2", {}, None, "", Role.WINNER),
                                       TunedConfig("a", "mpich-4.0.2", {"x": "1"}, 2, "slow")])
    return (store.implementations(run_id), store.variants(run_id),
            [replace(j, id=0) for j in store.jobs(run_id)], list(store.what_ran(run_id).values()),
            [replace(c, id=0, job_id=0) for c in store.cells(run_id)],
            list(store.observations(run_id).values()), list(store.extras(run_id).values()),
            [(f.tolist(), late.tolist()) for f, late in store.summaries(run_id, 1).values()],
            [replace(p, id=0) for p in store.program_launches(run_id)],
            list(store.program_calls(run_id).values()), store.program_configs(run_id),
            store.counts(run_id), store.count_cells(run_id, "pingpong", "v", 2))


def test_every_row_reads_back_from_a_server_as_from_a_file(server, tmp_path):
    on_server, in_file = Store(server.database("rows")), Store(tmp_path / "rows.db")
    try:
        assert _written(on_server) == _written(in_file)
    finally:
        on_server.close()
        in_file.close()


def test_an_import_into_a_run_of_a_server_that_fails_half_way_leaves_it_incomplete(
        server, monkeypatch):
    half_an_import(server.database("half"), monkeypatch)


def test_an_unreachable_server_is_one_line(tmp_path):
    done = mpiarena("list", "--db", f"postgresql://nobody@/none?host={tmp_path}")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "cannot open the store postgresql://nobody@/none" in done.stderr
