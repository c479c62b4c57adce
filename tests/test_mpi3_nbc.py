"""Non-blocking collectives (kernels/mpi_nbc.c), run for real: their data checked, their overlap
figures and extras, and what LAM/MPI and PVM say instead."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from conftest import IMPLS, mpiarena
from test_core import measure, running

from mpiarena.model.benchmarks import BENCHMARKS

OPS = ["ibarrier", "ibcast", "ireduce", "iallreduce", "ialltoall", "iallgather"]
OVERLAP = ["ibcast-overlap", "ibcast-overlap-test"]
BY_ID = {i.id: i for i in IMPLS}
MPI3 = [i for i in ("mpich-4.0.2", "openmpi-4.1.4") if i in BY_ID]
WITHOUT = {"lam-7.1.4": "LAM/MPI 7.1.4 has no MPI_{call}: it implements MPI 1.2, non-blocking "
                        "collectives are MPI 3.0",
           "pvm-3.4.6": "the pvm family has no non-blocking collectives"}
CALLS = {"ibarrier": "Ibarrier", "ibcast": "Ibcast", "ireduce": "Ireduce",
         "iallreduce": "Iallreduce", "ialltoall": "Ialltoall", "iallgather": "Iallgather"}

pytestmark = pytest.mark.skipif(not MPI3, reason="neither mpich-4.0.2 nor openmpi-4.1.4 here")


def cells_of(db: str, *args: str) -> list[dict[str, Any]]:
    done = mpiarena("run", *args, "--launches", "1", "--observations", "3", "--validate",
                    "--db", db)
    assert done.returncode == 0, done.stderr
    cells: list[dict[str, Any]] = json.loads(
        mpiarena("export", "--format", "json", "--db", db).stdout)["cells"]
    return cells


@pytest.mark.alone  # reads measured figures: on a quiet machine only
def test_every_library_checked_overlap_sane_and_the_others_say_why(db):
    impls = [*MPI3, *(i for i in WITHOUT if i in BY_ID)]
    cells = cells_of(db, "--impl", ",".join(impls), "--bench", ",".join(OPS + OVERLAP),
                     "--sizes", "8,256K", "--np", "2")
    assert len(cells) == len(impls) * (len(OPS + OVERLAP) * 2 - 1)  # ibarrier has no size
    medians = {}
    for c in cells:
        op = c["bench"].split("-")[0]
        if c["variant"] in WITHOUT:
            assert (c["status"], c["reason"]) == (
                "na", WITHOUT[c["variant"]].format(call=CALLS[op])), c
            continue
        assert c["status"] == "ok", c  # --validate: the data each rank received checked
        bench = BENCHMARKS[c["bench"]]
        if bench.unit == "%":
            for obs, extras in zip(c["observations"], c["extras"], strict=True):
                for name in ("pure", "compute", "overlapped"):
                    assert len(extras[name]) == 2 and min(extras[name]) > 0, (c, name)
                assert 0 <= bench.observation(obs, extras) <= 100, c
        else:
            medians[c["variant"], c["bench"], c["size"]] = np.median(
                [bench.observation(o) for o in c["observations"]])
    for impl in MPI3:
        for op in ("ialltoall", "iallgather"):
            assert medians[impl, op, 262144] > medians[impl, op, 8], (impl, op)


def test_three_ranks_under_the_barrier_method(db):
    cells = cells_of(db, "--impl", MPI3[0], "--bench", ",".join([*OPS, "iallreduce-overlap"]),
                     "--sizes", "4K", "--np", "3", "--sync", "barrier")
    assert len(cells) == len(OPS) + 1
    for c in cells:
        assert c["status"] == "ok", c
        assert c["timing"] == ("loop" if "overlap" in c["bench"] else "barrier"), c
        if "overlap" in c["bench"]:
            assert all(len(x["pure"]) == 3 for x in c["extras"]), c


@pytest.mark.parametrize("bench", ["ialltoall", "iallreduce-overlap-test"])
def test_a_corruption_is_caught(bench):
    with running(BY_ID[MPI3[0]], 2, env={"ARENA_FAULT": "corrupt"}) as job:
        res = measure(job, bench, 4096, obs=2)
    assert res.status == "invalid" and "wrong data" in res.reason, res
