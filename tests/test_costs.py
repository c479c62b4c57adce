"""What a library costs the program: CPU, memory, overlap, progress, threads and message rate,
measured for real, and the way those figures travel to the store and the reports."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
from conftest import IMPLS, stored_run
from rich.console import Console
from test_core import running
from test_store import as_schema_3

from mpiarena.base.records import Cell, CellRequest, CellRow, JobRow, RunSettings, VariantRecord
from mpiarena.base.status import CellStatus
from mpiarena.model.benchmarks import (
    BENCHMARKS,
    overlap_percent,
    progress_percent,
    progress_verdict,
)
from mpiarena.report.costs import costs_text
from mpiarena.report.markdown import render_markdown
from mpiarena.report.terminal import render
from mpiarena.runner.execute import with_baseline
from mpiarena.runner.job import CellResult, Job, JobError
from mpiarena.store import SCHEMA_VERSION, Obs, Store, results

LAM = next((i for i in IMPLS if i.family == "lam"), None)
IMPI = next((i for i in IMPLS if i.family == "impi"), None)
MPICH = next((i for i in IMPLS if i.family == "mpich"), None)
NONBLOCKING = {"mpich", "openmpi", "impi", "lam"}


def cost(job: Job, bench: str, size: int, obs: int = 3, hold: float = 0.2) -> CellResult:
    res = job.cell(CellRequest(Cell(bench, size, job.np), timing="loop", observations=obs,
                               target_time=1e-3, max_time=0.5, window=16, hold_time=hold),
                   1, timeout=60)
    return with_baseline(res, Cell(bench, size, 2)) if bench == "memory" else res


def values(res: CellResult, bench: str) -> np.ndarray:
    assert res.status == "ok", res.reason
    return np.array([BENCHMARKS[bench].observation(o.per_rank, o.extras)
                     for o in res.observations])


def test_every_cost_within_physical_bounds(impl):
    with running(impl, 2) as job:
        memory = values(cost(job, "memory", 65536), "memory")
        blocked = values(cost(job, "cpu", 0, obs=2, hold=0.1), "cpu")
        rate = values(cost(job, "msgrate", 8), "msgrate")
        overlap = cost(job, "overlap", 65536)
        progress = cost(job, "progress", 1 << 20)
    assert np.all((memory > 0) & (memory < 1e9)), memory  # bytes beyond the baseline process
    assert np.all((blocked >= 0) & (blocked <= 101)), blocked  # one rank, one thread: <= 100%
    assert np.all((rate > 1e-9) & (rate < 1e-2)), rate  # seconds per 8-byte message
    if impl.family not in NONBLOCKING:
        assert overlap.status == progress.status == "na"
        assert "no non-blocking operations" in overlap.reason
        return
    ovl = values(overlap, "overlap")
    assert np.all((ovl >= 0) & (ovl <= 100)), ovl
    first = overlap.observations[0].extras
    assert all(0 < first[name][0] < 1 for name in ("pure", "compute", "overlapped"))
    moved = values(progress, "progress")
    assert np.all((moved >= 0) & (moved <= 100)), moved


def _blocked_cpu(impl, env: dict[str, str]) -> float:
    with running(impl, 2, env=env) as job:
        return float(np.median(values(cost(job, "cpu", 0, obs=3, hold=0.2), "cpu")))


@pytest.mark.parametrize("impl, polling, blocking", [
    pytest.param(LAM, {"LAM_MPI_SSI_rpi": "usysv"}, {"LAM_MPI_SSI_rpi": "tcp"}, id="lam",
                 marks=pytest.mark.skipif(LAM is None, reason="LAM/MPI is not installed")),
    pytest.param(IMPI, {}, {"I_MPI_WAIT_MODE": "1", "I_MPI_THREAD_YIELD": "3",
                            "I_MPI_THREAD_SLEEP": "100"}, id="impi",
                 marks=pytest.mark.skipif(IMPI is None, reason="Intel MPI is not installed "
                                          "(make test installs its PyPI build)")),
])
def test_a_blocking_variant_uses_far_less_cpu_than_the_polling_default(impl, polling, blocking):
    busy, idle = _blocked_cpu(impl, polling), _blocked_cpu(impl, blocking)
    # a polling receive spins its core; a blocking one sleeps (LAM tcp in select: ~0%)
    assert busy > 60 and idle < busy / 3, (busy, idle)


@pytest.mark.skipif(MPICH is None, reason="MPICH is not installed")
def test_threads_need_multiple_and_say_what_was_granted():
    with running(MPICH, 2) as job:
        res = cost(job, "threads", 2)
        assert job.hello.thread_level == "single"
    assert res.status == "na"
    assert "MPI_THREAD_MULTIPLE" in res.reason and "granted single" in res.reason
    with running(MPICH, 2, env={"ARENA_THREAD_LEVEL": "multiple"}) as job:
        assert job.hello.thread_level == "multiple"
        per_message = {n: values(cost(job, "threads", n), "threads") for n in (1, 2)}
    assert all(np.all((t > 1e-9) & (t < 1e-2)) for t in per_message.values()), per_message


@pytest.mark.skipif(MPICH is None, reason="MPICH is not installed")
def test_a_thread_level_that_does_not_exist_is_refused_clearly():
    refused = pytest.raises(JobError, match="ARENA_THREAD_LEVEL=many is not single, funneled")
    with refused, running(MPICH, 2, env={"ARENA_THREAD_LEVEL": "many"}):
        pass


def test_overlap_and_progress_definitions():
    assert overlap_percent(1.0, 1.0, 2.0) == 0  # nothing hidden: pure + compute
    assert overlap_percent(1.0, 1.0, 1.0) == 100  # all hidden
    assert overlap_percent(1.0, 1.0, 1.25) == 75  # OSU: 100 * (1 - (1.25 - 1) / 1)
    assert overlap_percent(1.0, 1.0, 3.0) == 0  # slower than serial is still 0
    assert progress_percent({"transfer": [0, 1.0], "after": [0, 0.1]}) == pytest.approx(90)
    assert [progress_verdict(p) for p in (90, 50, 5)] == ["yes", "partial", "no"]


def _synthetic_run(tmp_path) -> tuple[Store, int]:
    """Two variants' cost cells, as the core and the memory baseline would write them."""
    store = Store(tmp_path / "c.db")
    run = stored_run(store, "costs", RunSettings(window=16))
    rng = np.random.default_rng(1)
    for seq, (variant, busy) in enumerate((("x-1", 1.0), ("x-1:block", 0.001))):
        store.add_variant(VariantRecord(run_id=run, variant=variant, impl_id=variant,
                                        name="default", env={}, args=[], binding="auto"))
        job = store.add_job(JobRow(run_id=run, variant=variant, np=2, topology="local",
                                   binding="core", command=["x"]))
        store.update_job(job, status="ok", thread_level="single")
        for launch in range(8):  # 8 launches of 2 observations
            cpu = [Obs(i, [0.2, 0.2], {"cpu": [busy * (1 + rng.random() / 50)] * 2})
                   for i in range(2)]
            store.add_cell(CellRow(run_id=run, job_id=job, variant=variant, bench="cpu", size=0,
                                   np=2, iterations=1, status=CellStatus.OK,
                                   seq=2 * (8 * seq + launch), launch=launch), cpu)
            mem = [Obs(i, [1e-3] * 2, {"peak": [9e6 + i, 9e6], "base_peak": [5e6, 5e6],
                                       "rss": [8e6, 8e6], "base_rss": [5e6, 5e6],
                                       "rss_init": [7e6, 7e6], "base_rss_init": [1e6, 1e6]})
                   for i in range(2)]
            store.add_cell(CellRow(run_id=run, job_id=job, variant=variant, bench="memory",
                                   size=1 << 20, np=2, iterations=4, status=CellStatus.OK,
                                   seq=2 * (8 * seq + launch) + 1, launch=launch), mem)
    return store, run


def test_extras_reach_the_store_and_every_report(tmp_path):
    store, run = _synthetic_run(tmp_path)
    data = results.load(store, run)
    blocked = data.cells["cpu", 0, 2]
    assert np.median(blocked["x-1"].array) == pytest.approx(101, abs=1)
    assert np.all(data.cells["memory", 1 << 20, 2]["x-1:block"].array >= 4e6)
    c = costs_text(data)
    assert c is not None and c.header[:3] == ["variant", "thread level", "CPU % blocked"]
    # a variant against its own implementation's default: 100% against 0.5% (the floor)
    called = [v for v in c.verdicts if v.startswith("CPU % blocked: x-1:block used ")]
    assert len(called) == 1 and "x less CPU in a blocked receive than x-1 (95% CI" in called[0]
    assert 150 < float(called[0].split(" used ")[1].split("x")[0]) < 250, called
    assert any("6 MB more than the baseline after init" in n for n in c.notes)
    console = Console(record=True, width=200)
    render(data, console)
    assert "costs:" not in console.export_text()  # behind --costs
    render(data, console, costs=True)
    assert "costs: thread level, CPU" in console.export_text()
    assert "## Costs" in render_markdown(data)


def test_a_schema_1_store_gains_the_extras_table(tmp_path):
    path = tmp_path / "old.db"
    Store(path).close()
    as_schema_3(path)
    db = sqlite3.connect(path)
    db.executescript("DROP TABLE extras; ALTER TABLE cells DROP COLUMN launch; "
                     "ALTER TABLE cells DROP COLUMN timing; UPDATE meta SET value='1';")
    db.commit()
    db.close()
    store = Store(path)
    assert store.db.execute("SELECT value FROM meta").fetchone()[0] == str(SCHEMA_VERSION)
    run_id = stored_run(store, "q")
    assert store.extras(run_id) == {}
