import math
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from conftest import mpiarena, stored_run

from mpiarena.base.errors import ArenaError
from mpiarena.base.records import (
    CellRow,
    JobRow,
    RunKind,
    RunSettings,
    VariantRecord,
)
from mpiarena.base.status import CellStatus
from mpiarena.model.benchmarks import BENCHMARKS
from mpiarena.model.programs import TunedConfig
from mpiarena.model.runs import ProgramSettings, ProgramTuning, RunStart
from mpiarena.model.whatran import Cvar, WhatRan
from mpiarena.store import SCHEMA_VERSION, Obs, Store
from mpiarena.store.backend import is_server, shown
from mpiarena.store.results import reduce


def _run(store: Store) -> int:
    return stored_run(store, "quick", RunSettings(window=64), 5)


def _ok(run: int, variant: str, bench: str, size: int, np_: int, observations: list[Obs],
        launch: int = 0, timing: str = "loop", iterations: int = 10
        ) -> tuple[CellRow, list[Obs]]:
    """A measured cell's row and its observations."""
    return CellRow(run_id=run, job_id=None, variant=variant, bench=bench, size=size, np=np_,
                   iterations=iterations, status=CellStatus.OK, launch=launch,
                   timing=timing), observations


def test_cells_and_observations_round_trip(tmp_path):
    store = Store(tmp_path / "s.db")
    run = _run(store)
    cell = store.add_cell(*_ok(run, "x-1", "pingpong", 8, 2,
                              [Obs(0, [1e-6, 1.1e-6]), Obs(1, [2e-6, 2.1e-6])]))
    assert store.observations(run) == {cell: [[1e-6, 1.1e-6], [2e-6, 2.1e-6]]}
    assert store.resolve("latest") == run
    assert store.db.execute("SELECT value FROM meta").fetchone()[0] == str(SCHEMA_VERSION)


# every rank's seconds of some observations: a rank without a figure (NaN), an infinite one,
# none at all, a pair's third rank slower than both
RANKS = [[1e-6, math.nan, 3e-6], [math.nan, 2e-6], [math.nan, math.nan], [math.inf, 1e-6], [],
         [4e-6, 5e-6, 9e-6], [math.nan, 2e-6, 8e-6]]


@pytest.mark.parametrize("bench", ["allreduce", "pingpong", "bibw", "init"])
def test_the_budget_and_the_report_reduce_an_observation_over_its_ranks_alike(bench):
    """The runner's budget steers by Benchmark.observation, the report reads the store's
    figures (results.reduce): one rule, a NaN rank left out, NaN where no rank gave a finite
    figure."""
    b = BENCHMARKS[bench]
    budget = [b.observation(r) for r in RANKS]
    np.testing.assert_array_equal(budget, reduce(b, [np.array(r, float) for r in RANKS]))
    expected = [3e-6, 2e-6, math.nan, math.nan, math.nan, 9e-6, 8e-6] if not b.pair else \
        [1e-6, 2e-6, math.nan, math.nan, math.nan, 5e-6, 2e-6]
    np.testing.assert_allclose(budget, np.array(expected) * b.scale)


def test_a_run_whose_process_died_reads_as_incomplete_and_the_next_store_marks_it_once(tmp_path):
    path = tmp_path / "s.db"
    store = Store(path)
    with store.new_run(RunStart(RunKind.BENCHMARK, "quick", "t", RunSettings())) as run:
        assert store.status(store.run(run.id)) == "running"
        with store.tx() as db:
            db.execute("UPDATE runs SET pid=999999999 WHERE id=?", (run.id,))
        assert store.status(store.run(run.id)) == "incomplete"
        assert store.run(run.id).status == "running"  # as stored, until a store is opened
        Store(path).close()
        marked = store.run(run.id)
        assert (marked.status, marked.finished, marked.note) == ("incomplete", None, None)
        again = Store(path)
        assert again.db.db.total_changes == 0  # marked once: the next store writes nothing
        again.close()


def test_unknown_run_and_foreign_file(tmp_path):
    store = Store(tmp_path / "s.db")
    with pytest.raises(ArenaError, match="holds no runs"):
        store.resolve("latest")
    with pytest.raises(ArenaError, match="no run '7'"):
        store.resolve("7")
    junk = tmp_path / "junk.db"
    junk.write_text("not sqlite at all " * 100)
    with pytest.raises(ArenaError, match="not a usable mpiarena store"):
        Store(junk)


def test_runs_are_named_by_id_latest_previous_and_latest_n(tmp_path):
    store = Store(tmp_path / "s.db")
    first, second, third = _run(store), _run(store), _run(store)
    names = {"latest": third, "latest~0": third, "previous": second, "latest~1": second,
             "latest~2": first, str(first): first}
    assert {name: store.resolve(name) for name in names} == names
    with pytest.raises(ArenaError, match=r"no run 'latest~3' .*: it holds 3 runs"):
        store.resolve("latest~3")
    with pytest.raises(ArenaError, match=r"no run '-1' .* latest, previous or latest~N"):
        store.resolve("-1")


def test_mpiarena_db_sets_the_store_of_every_command(tmp_path):
    osu = Path(__file__).parent / "suite-output" / "osu-5.3" / "osu_latency.out"
    kept = tmp_path / "kept here" / "env.db"  # a space in it: one path, not two
    kept.parent.mkdir()
    elsewhere = {"MPIARENA_DB": str(kept)}
    for _ in range(2):
        done = mpiarena("import", "osu", str(osu), "--impl", "mpich-4.0.2", cwd=tmp_path,
                        env=elsewhere)
        assert done.returncode == 0, done.stderr
    assert f"in {kept}" in done.stderr
    assert not (tmp_path / "mpiarena.db").exists()
    shown = mpiarena("show", "previous", cwd=tmp_path, env=elsewhere)
    assert shown.returncode == 0 and shown.stdout.startswith("Run 1 "), shown.stderr
    history = mpiarena("history", cwd=tmp_path, env=elsewhere)  # its --db is repeatable
    assert history.returncode == 0 and "pingpong" in history.stdout, history.stderr
    given = mpiarena("list", "--db", "mpiarena.db", cwd=tmp_path, env=elsewhere)
    assert given.returncode == 2 and "no store at mpiarena.db" in given.stderr  # --db wins


def test_other_schema_version_is_refused(tmp_path):
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.executescript("CREATE TABLE meta (key TEXT, value TEXT);"
                     "INSERT INTO meta VALUES ('schema_version', '99');")
    db.commit()
    with pytest.raises(ArenaError, match="schema 99"):
        Store(path)


OLD_TABLES = """
CREATE TABLE observations (
  cell_id INTEGER NOT NULL REFERENCES cells(id), obs INTEGER NOT NULL, rank INTEGER NOT NULL,
  seconds REAL NOT NULL, PRIMARY KEY (cell_id, obs, rank)) WITHOUT ROWID;
CREATE TABLE extras (
  cell_id INTEGER NOT NULL REFERENCES cells(id), obs INTEGER NOT NULL, rank INTEGER NOT NULL,
  name TEXT NOT NULL, value REAL NOT NULL, PRIMARY KEY (cell_id, obs, name, rank))
  WITHOUT ROWID;
"""


def as_schema_3(path) -> None:
    """Make a closed store look as schema 3 wrote it: a row per rank and observation (extras:
    finite values only), no rank vectors, no cached summaries."""
    db = sqlite3.connect(path)
    db.executescript(OLD_TABLES)
    for cell, obs, blob in db.execute("SELECT * FROM rank_seconds").fetchall():
        db.executemany("INSERT INTO observations VALUES (?, ?, ?, ?)",
                       [(cell, obs, r, t) for r, t in enumerate(np.frombuffer(blob).tolist())])
    for cell, obs, name, blob in db.execute("SELECT * FROM rank_extras").fetchall():
        db.executemany("INSERT INTO extras VALUES (?, ?, ?, ?, ?)",
                       [(cell, obs, r, name, v) for r, v in enumerate(np.frombuffer(blob).tolist())
                        if math.isfinite(v)])
    db.executescript("DROP TABLE rank_seconds; DROP TABLE rank_extras; DROP TABLE summaries;"
                     "ALTER TABLE jobs DROP COLUMN interference;"
                     "ALTER TABLE jobs DROP COLUMN config;"
                     "ALTER TABLE jobs DROP COLUMN failed_bench;"
                     "ALTER TABLE jobs DROP COLUMN failed_size;"
                     "DROP TABLE configs; UPDATE meta SET value='3';")
    db.commit()
    db.close()


def _as_schema_2(path) -> None:
    """Make a closed store look as schema 2 wrote it: cells without launch and timing."""
    as_schema_3(path)
    db = sqlite3.connect(path)
    db.executescript("ALTER TABLE cells DROP COLUMN launch; ALTER TABLE cells DROP COLUMN timing;"
                     "UPDATE meta SET value='2';")
    db.commit()
    db.close()


def test_a_schema_2_store_upgrades_in_place_with_each_cell_one_looped_launch(tmp_path):
    path = tmp_path / "v2.db"
    store = Store(path)
    run = _run(store)
    store.add_cell(*_ok(run, "x-1", "pingpong", 8, 2, [Obs(0, [1e-6, 1e-6])]))
    store.close()
    _as_schema_2(path)
    store = Store(path)
    assert store.db.execute("SELECT value FROM meta").fetchone()[0] == str(SCHEMA_VERSION)
    (cell,) = store.cells(run)
    assert (cell.launch, cell.timing) == (0, "loop")


def test_a_store_from_before_launches_still_shows_and_compares(tmp_path):
    path = tmp_path / "v2.db"
    store = Store(path)
    run = _run(store)
    for variant, level in (("a-1", 1e-6), ("b-1", 3e-6)):
        store.add_variant(VariantRecord(run_id=run, variant=variant, impl_id=variant,
                                        name="default", env={}, args=[], binding="auto"))
        store.add_cell(*_ok(run, variant, "pingpong", 8, 2,
                           [Obs(i, [level * (1 + i / 100)] * 2) for i in range(20)]))
    store.close()
    _as_schema_2(path)
    from mpiarena.analysis.compare import compare_runs
    from mpiarena.analysis.run import analyse
    from mpiarena.report.summary import verdict_text
    from mpiarena.store.results import load

    data = load(Store(path), run)
    (v,) = analyse(data).judged["pingpong", 8, 2]
    assert v.outcome == "undecided" and v.launches_fast == v.launches_slow == 1
    assert "1 launches cannot decide anything (--launches 4 at least)" in \
        verdict_text("pingpong 8 B", v)
    assert {c.outcome for c in compare_runs(data, data)} == {"undecided"}


def _varied_run(path, ranks: int = 16) -> int:
    """A run with what the reduction must get right: a pair benchmark, a collective at many
    ranks timed by window (late shares), a cost figure from extras (some not finite), a cost
    cell without its extras (no figure), a failed cell, several launches."""
    store = Store(path)
    run = _run(store)
    rng = np.random.default_rng(3)
    for v, level in (("a-1", 1.0), ("b-1", 1.3)):
        store.add_variant(VariantRecord(run_id=run, variant=v, impl_id=v, name="default", env={},
                                        args=[], binding="core"))
        for launch in range(4):
            t = level * rng.lognormal(0, 0.1, size=(3, ranks)) * 1e-6
            late = [{"late": [0.1 * i] + [math.nan] * (ranks - 1),
                     "clock_offset": rng.normal(0, 1e-7, ranks).tolist()} for i in range(3)]
            store.add_cell(*_ok(run, v, "allreduce", 8, ranks,
                               [Obs(i, row.tolist(), x)
                                for i, (row, x) in enumerate(zip(t, late, strict=True))],
                               launch, "window"))
            store.add_cell(*_ok(run, v, "pingpong", 8, 2,
                               [Obs(i, row[:2].tolist()) for i, row in enumerate(t)], launch))
            ovl = [{"pure": [2.0, 2.0], "compute": [2.0, 2.0], "overlapped": [3.0, level * 2.5],
                    "after": [math.nan, 1.0]} for _ in range(3)]
            store.add_cell(*_ok(run, v, "overlap", 1024, 2,
                               [Obs(i, [1e-3, 1e-3], x) for i, x in enumerate(ovl)], launch))
            store.add_cell(*_ok(run, v, "cpu", 0, 2, [Obs(0, [1.0, 1.0])], launch))
        store.add_cell(CellRow(run_id=run, job_id=None, variant=v, bench="bcast", size=8,
                               np=ranks, status=CellStatus.FAILED, reason="rank 3 died",
                               launch=4))
    store.close()
    return run


def _same(xs):
    """Numbers comparable with ==, NaN included."""
    return [None if isinstance(x, float) and math.isnan(x) else x for x in xs]


def _figures(data):
    return {(k, v): (g.status, g.values, g.launches, g.late,
                     [_same(r) for r in g.per_rank],
                     [{n: _same(x) for n, x in e.items()} for e in g.extras])
            for k, cell in data.cells.items() for v, g in cell.items()}


def test_a_run_in_the_new_layout_and_in_the_old_give_identical_summaries(tmp_path):
    from mpiarena.analysis.run import analyse
    from mpiarena.model.benchmarks import BENCHMARKS
    from mpiarena.report.summary_export import to_json
    from mpiarena.store.results import load

    new, old = tmp_path / "new.db", tmp_path / "old.db"
    run = _varied_run(new)
    shutil.copy(new, old)
    as_schema_3(old)
    a, b = load(Store(new), run), load(Store(old), run)
    assert _figures(a) == _figures(b)
    assert to_json(analyse(a)) == to_json(analyse(b))
    # what the numpy reduction gave is each observation reduced as the benchmark says, rank
    # by rank in Python
    store = Store(new)
    obs, extras = store.observations(run), store.extras(run)
    naive: dict = {}
    for cell in store.cells(run):
        bench = BENCHMARKS[cell.bench]
        naive.setdefault((cell.bench, cell.size, cell.np, cell.variant), []).extend(
            x for i, r in enumerate(obs.get(cell.id, []))
            if math.isfinite(x := bench.observation(r, extras.get(cell.id, {}).get(i, {}))))
    assert naive == {(*k, v): g.values for k, cell in a.cells.items() for v, g in cell.items()}
    allreduce = a.cells["allreduce", 8, 16]["b-1"]
    assert len(allreduce.values) == 12 and allreduce.late[:3] == [0.0, 0.1, 0.2]
    assert a.cells["overlap", 1024, 2]["a-1"].values == [62.5] * 12
    assert a.cells["cpu", 0, 2]["a-1"].values == []  # no cpu extra: no figure
    assert a.cells["bcast", 8, 16]["a-1"].status == "failed"


def test_cell_summaries_are_cached_and_redone_when_the_analysis_changes(tmp_path, monkeypatch):
    from mpiarena.store import results

    path = tmp_path / "s.db"
    run = _varied_run(path)
    store = Store(path)
    assert store.summaries(run, results.ANALYSIS_VERSION) == {}
    first = results.load(store, run).cells["pingpong", 8, 2]["a-1"].values
    cached = store.summaries(run, results.ANALYSIS_VERSION)
    assert len(cached) == len(store.cells(run))
    # a report reads the cache, not the ranks: spoil a rank vector, the figures stay
    store.db.execute("UPDATE rank_seconds SET seconds=? WHERE cell_id=(SELECT MIN(id) FROM "
                     "cells WHERE bench='pingpong')", (np.array([1.0, 1.0]).tobytes(),))
    assert results.load(store, run).cells["pingpong", 8, 2]["a-1"].values == first
    monkeypatch.setattr(results, "ANALYSIS_VERSION", results.ANALYSIS_VERSION + 1)
    redone = results.load(store, run)
    assert 0.5 in redone.cells["pingpong", 8, 2]["a-1"].values  # recomputed from the ranks
    assert len(store.summaries(run, results.ANALYSIS_VERSION)) == len(store.cells(run))


def test_a_schema_3_store_opens_and_upgrades_to_rank_vectors(tmp_path):
    path = tmp_path / "v3.db"
    run = _varied_run(path)
    store = Store(path)
    obs, extras = store.observations(run), store.extras(run)
    store.close()
    as_schema_3(path)
    upgraded = Store(path)
    assert upgraded.db.execute("SELECT value FROM meta").fetchone()[0] == str(SCHEMA_VERSION)
    tables = {r[0] for r in upgraded.db.execute("SELECT name FROM sqlite_master")}
    assert {"rank_seconds", "rank_extras", "summaries"} <= tables
    assert not {"observations", "extras"} & tables
    assert upgraded.observations(run) == obs
    assert upgraded.counts(run) == (sum(map(len, obs.values())),
                                    sum(len(r) for o in obs.values() for r in o))
    same = upgraded.extras(run)  # the old layout kept no trailing non-finite value
    assert {c: {i: {n: [v for v in x if math.isfinite(v)] for n, x in d.items()}
                for i, d in o.items()} for c, o in same.items()} == \
        {c: {i: {n: [v for v in x if math.isfinite(v)] for n, x in d.items()}
             for i, d in o.items()} for c, o in extras.items()}


def test_a_schema_6_store_upgrades_its_jobs_to_record_what_ran(tmp_path):
    path = tmp_path / "v6.db"
    store = Store(path)
    run = _run(store)
    old = store.add_job(JobRow(run_id=run, variant="x-1", np=2, topology="local", binding="core",
                               command=["arena"]))
    store.close()
    db = sqlite3.connect(path)
    db.executescript("ALTER TABLE jobs DROP COLUMN config; DROP TABLE configs;"
                     "ALTER TABLE jobs DROP COLUMN failed_bench;"
                     "ALTER TABLE jobs DROP COLUMN failed_size;"
                     "UPDATE meta SET value='6';")
    db.commit()
    db.close()
    upgraded = Store(path)
    assert upgraded.jobs(run)[0].config is None
    new = upgraded.add_job(JobRow(run_id=run, variant="x-1", np=2, topology="local", binding="core",
                                  command=["arena"]))
    what = WhatRan((Cvar("pml", "ob1", "all_eq"),), "", "requested: pml ob1", "MPI_T cvars")
    upgraded.add_what_ran(new, what)
    assert upgraded.what_ran(run) == {new: what} and old not in upgraded.what_ran(run)


def test_a_schema_8_store_gains_the_tuned_configurations_table(tmp_path):
    path = tmp_path / "v8.db"
    Store(path).close()
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE app_configs")
        db.execute("UPDATE meta SET value='8' WHERE key='schema_version'")
    upgraded = Store(path)
    assert upgraded.db.execute("SELECT value FROM meta").fetchone()[0] == str(SCHEMA_VERSION)
    run = stored_run(upgraded, "app", ProgramSettings(tune=ProgramTuning()), 0,
                     RunKind.PROGRAM_TUNING)
    upgraded.add_program_configs(run, [TunedConfig("x:allreduce=ring", "x", {"allreduce": "ring"},
                                               2, "slower than x", "")])
    (back,) = upgraded.program_configs(run)
    assert back.values == {"allreduce": "ring"} and back.dropped == 2 and back.role == ""


def test_a_schema_9_store_splits_the_cell_a_job_failed_in_from_its_cause(tmp_path):
    path = tmp_path / "v9.db"
    store = Store(path)
    run = _run(store)
    jobs = [store.add_job(JobRow(run_id=run, variant="x-1", np=2, topology="local", binding="core",
                                 command=["arena"])) for _ in range(4)]
    for job, reason in zip(jobs, ["bcast-ack 1024 B: the job ended (exit status 3)",
                                  "start-up failed: no hello", None,
                                  "pingpong 8 B in launch 1: no answer"], strict=True):
        store.update_job(job, status="failed", reason=reason)
    for status, reason in (("skipped", "bcast-ack 1024 B: the job ended (exit status 3)"),
                           ("na", "alltoall 8 B: kept as it is")):
        store.add_cell(CellRow(run_id=run, job_id=None, variant="x-1", bench="pingpong", size=8,
                               np=2, status=CellStatus(status), reason=reason))
    store.close()
    db = sqlite3.connect(path)
    db.executescript("ALTER TABLE jobs DROP COLUMN failed_bench;"
                     "ALTER TABLE jobs DROP COLUMN failed_size; UPDATE meta SET value='9';")
    db.commit()
    db.close()
    upgraded = Store(path)
    broken, started, silent, unsplit = upgraded.jobs(run)
    assert (broken.failed_bench, broken.failed_size, broken.reason) == \
        ("bcast-ack", 1024, "the job ended (exit status 3)")
    assert broken.why == "bcast-ack 1024 B: the job ended (exit status 3)"
    assert (started.failed_bench, started.reason, started.why) == \
        (None, "start-up failed: no hello", "start-up failed: no hello")
    assert (silent.reason, silent.why) == (None, "")
    assert (unsplit.failed_bench, unsplit.why) == (None, "pingpong 8 B in launch 1: no answer")
    assert [(c.status, c.reason) for c in upgraded.cells(run)] == [
        (CellStatus.SKIPPED, "the job ended (exit status 3)"),
        (CellStatus.NA, "alltoall 8 B: kept as it is")]


def test_a_server_is_named_by_its_uri_and_shown_without_its_password():
    assert is_server("postgresql://arena@/db?host=/run/postgresql&port=5433")
    assert is_server("postgres://arena@db.example.org/db") and not is_server("postgres.db")
    assert shown("postgresql://arena:s3cr%40t@db.example.org:5432/db") == \
        "postgresql://arena:***@db.example.org:5432/db"
    assert shown("postgresql://arena@/db?password=s3cret&host=/tmp") == \
        "postgresql://arena@/db?password=***&host=/tmp"
