"""MPI-IO (kernels/mpi_io.c): every benchmark validated against each MPI library here, the n/a
paths, and no file left in the run's scratch directory, not even by a killed run."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import IMPLS, leftovers, mpiarena, spawn
from test_core import running_in

from mpiarena.base import paths
from mpiarena.base.records import Cell, CellRequest
from mpiarena.runner.job import CellResult, Job

IO = [f"io-{rw}-{mode}{layout}" for rw in ("write", "read") for layout in ("", "-strided")
      for mode in ("coll", "indep")]
MPI = [i for i in IMPLS if i.family not in ("pvm", "tcp")]
FIRST = MPI[0]
# across emulated nodes: not Debian's MPICH 4.0.2, whose ch4:ucx over TCP hangs in MPI_Finalize
# now and then there (docs/clusters.md), costing the job's timeout
ACROSS = next((i for i in MPI if not (i.family == "mpich" and i.origin == "debian")), FIRST)
# 8 B: one short piece; 20000 B: four 4 KiB pieces and a short fifth, interleaved
SIZES = (8, 20000)
CAN_EMULATE = os.geteuid() == 0 and Path("/usr/sbin/sshd").exists()


def measure(job: Job, bench: str, size: int, validate: bool = True,
            offcache: bool = False) -> CellResult:
    return job.cell(CellRequest(Cell(bench, size, job.np), timing="loop", observations=5,
                                target_time=1e-3, max_time=2.0, window=1, offcache=offcache,
                                validate=validate), 1, timeout=60)


@pytest.mark.parametrize("impl", MPI, ids=[i.id for i in MPI])
def test_every_io_benchmark_moves_the_right_bytes_and_leaves_no_file(impl):
    with running_in(impl, 2) as (job, work):
        cells = {(b, s): measure(job, b, s) for b in IO for s in SIZES}
        left = list((work / "io").iterdir())
    assert {k: (c.status, c.reason) for k, c in cells.items() if c.status != "ok"} == {}
    assert left == []  # each cell's teardown deleted its file


def test_three_ranks_interleave_their_pieces():
    with running_in(FIRST, 3) as (job, _):
        cells = {b: measure(job, b, 20000) for b in IO}
    assert {b: c.reason for b, c in cells.items() if c.status != "ok"} == {}


def test_off_cache_slots_have_their_own_regions_of_the_file():
    with running_in(FIRST, 2) as (job, _):
        cells = {b: measure(job, b, 20000, offcache=True) for b in IO if "coll" in b}
    assert {b: c.reason for b, c in cells.items() if c.status != "ok"} == {}


def test_validation_catches_wrong_bytes_in_a_read_and_a_written_file():
    with running_in(FIRST, 2, env={"ARENA_FAULT": "corrupt"}) as (job, _):
        read = measure(job, "io-read-coll-strided", 20000)
        written = measure(job, "io-write-indep", 20000)
    assert read.status == "invalid" and "byte 10000 of its 20000 read wrong" in read.reason
    assert written.status == "invalid" and "read back" in written.reason


@pytest.mark.alone  # reads measured figures: on a quiet machine only
def test_a_large_read_takes_longer_than_a_small_one():
    with running_in(FIRST, 2) as (job, _):
        small, large = (measure(job, "io-read-indep", s, validate=False) for s in (8, 1 << 20))
    median = [np.median([max(o.per_rank) for o in c.observations]) for c in (small, large)]
    assert 0 < median[0] < median[1]


def test_what_cannot_run_says_why():
    pvm = [i for i in IMPLS if i.family == "pvm"]
    with running_in(FIRST, 2, env={"ARENA_IO_DIR": "/nonexistent"}) as (job, _):
        elsewhere = measure(job, "io-write-coll", 8)
    assert (elsewhere.status, elsewhere.reason) == ("na",
                                                    "a rank cannot create files in /nonexistent")
    for impl in pvm:
        with running_in(impl, 2) as (job, _):
            cell = measure(job, "io-read-indep", 8)
        assert (cell.status, cell.reason) == ("na", "the pvm family has no MPI-IO")


def test_a_killed_run_leaves_no_file(db):
    proc = spawn("run", f"--impl={FIRST.id}", "--bench", "io-write-indep-strided", "--sizes",
                 "1M", "--launches", "1", "--observations", "500", "--db", db)
    scratch = paths.scratch_dir()
    deadline = time.monotonic() + 120
    while not list(scratch.glob(f"run-{proc.pid}.*/io/io-*")):  # a cell has its file open
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.01)
    proc.kill()  # SIGKILL: its watchdog removes the run's scratch directory, the file with it
    proc.communicate(timeout=60)
    deadline = time.monotonic() + 15
    while list(scratch.glob(f"run-{proc.pid}.*")) or leftovers(grace=0):
        assert time.monotonic() < deadline, list(scratch.glob(f"run-{proc.pid}.*/**"))
        time.sleep(0.05)


@pytest.mark.skipif(not CAN_EMULATE, reason="needs root and sshd")
def test_emulated_nodes_share_the_run_directory_but_not_their_tmp(db, tmp_path):
    suite = tmp_path / "io.toml"
    suite.write_text(f'''benchmarks = ["io-write-coll"]
sizes = "64K"
np = [2]
observations = 1
init_launches = 0
max_cell_time = 0.5

[[variant]]
impl = "{ACROSS.family}"
name = "tmp"
env = {{ ARENA_IO_DIR = "/tmp" }}
''')
    done = mpiarena("run", "--suite", str(suite), "--impl", ACROSS.id, "--launches", "1",
                    "--validate", "--cluster", "emulated:nodes=2", "--timeout", "20", "--db", db)
    assert done.returncode == 0, done.stderr
    cells = dict(sqlite3.connect(db).execute("SELECT variant, status || ': ' || "
                                             "COALESCE(reason, '') FROM cells"))
    assert cells == {ACROSS.id: "ok: ", f"{ACROSS.id}:tmp": "na: the ranks do not share /tmp "
                     "(hosts without a common file system)"}
