"""Vector, neighbourhood and persistent collectives (kernels/mpi_vcoll.c, mpi_neighbor.c,
mpi_persist.c), run for real: validated where the library has them, n/a with the reason where
it does not, a planted corruption caught, and figures that grow with the size."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from conftest import IMPLS, mpiarena
from test_core import measure, running

VECTOR = [f"{op}{skew}" for op in ("allgatherv", "alltoallv", "gatherv", "scatterv")
          for skew in ("", "-skew")]
NEIGHBOUR = ["neighbor_allgather", "neighbor_alltoall"]
PERSISTENT = ["bcast_init", "reduce_init", "allreduce_init", "alltoall_init"]
ALL = [*VECTOR, *NEIGHBOUR, "halo", *PERSISTENT]
MPI = [i for i in IMPLS if i.id in ("mpich-4.0.2", "openmpi-4.1.4")]
LAM = [i for i in IMPLS if i.id == "lam-7.1.4"]
PVM = [i for i in IMPLS if i.family == "pvm"]
LAM_NA = {
    "neighbor_allgather": "LAM/MPI 7.1.4 has no MPI_Neighbor_allgather (MPI-3): MPI 1.2",
    "neighbor_alltoall": "LAM/MPI 7.1.4 has no MPI_Neighbor_alltoall (MPI-3): MPI 1.2",
    **{b: "LAM/MPI 7.1.4 has no MPI_Bcast_init and the like (MPI 4.0): MPI 1.2"
       for b in PERSISTENT},
}
PVM_NA = {**{b: "the pvm family has no vector collectives" for b in VECTOR},
          **{b: "the pvm family has no neighbourhood collectives" for b in [*NEIGHBOUR, "halo"]},
          **{b: "the pvm family has no persistent collectives" for b in PERSISTENT}}


def cells_of(db: str, impls: list[Any], benches: list[str], np_: int, sizes: str) -> list[Any]:
    done = mpiarena("run", *(f"--impl={i.id}" for i in impls), "--bench", ",".join(benches),
                    "--sizes", sizes, "--np", str(np_), "--launches", "1", "--observations",
                    "3", "--validate", "--db", db)
    assert done.returncode == 0, done.stderr
    out = mpiarena("export", "--format", "json", "--db", db).stdout
    cells: list[Any] = json.loads(out)["cells"]
    return cells


def median(cell: dict[str, Any]) -> float:
    return float(np.median([max(o) for o in cell["observations"]]))


@pytest.mark.alone  # reads measured figures: on a quiet machine only
@pytest.mark.skipif(not MPI, reason="needs MPICH 4.0.2 or Open MPI 4.1.4")
def test_two_ranks_validate_and_say_what_they_lack(db):
    chosen = MPI + LAM + PVM
    cells = cells_of(db, chosen, ALL, 2, "8,256K")
    assert len(cells) == len(chosen) * len(ALL) * 2
    for c in cells:
        lacks = {"lam-7.1.4": LAM_NA}.get(c["variant"], PVM_NA if "pvm" in c["variant"] else {})
        if c["bench"] in lacks:
            assert (c["status"], c["reason"]) == ("na", lacks[c["bench"]]), c
        else:
            assert c["status"] == "ok", c
    for variant in {c["variant"] for c in cells if c["status"] == "ok"}:
        for bench in ("alltoallv-skew", "halo"):
            small, big = (median(c) for s in (8, 256 << 10) for c in cells
                          if (c["variant"], c["bench"], c["size"]) == (variant, bench, s))
            assert big > 2 * small, (variant, bench, small, big)


@pytest.mark.skipif(not MPI, reason="needs MPICH 4.0.2 or Open MPI 4.1.4")
def test_four_ranks_skewed_counts_and_a_2x2_grid(db):
    """4 ranks on 2 cores: correctness only (polling libraries measure the scheduler)."""
    benches = ["allgatherv-skew", "alltoallv-skew", "gatherv-skew", "scatterv-skew",
               *NEIGHBOUR, "halo", "reduce_init", "alltoall_init"]
    cells = cells_of(db, MPI, benches, 4, "4K")
    assert len(cells) == len(MPI) * len(benches)
    assert all(c["status"] == "ok" for c in cells), [c for c in cells if c["status"] != "ok"]


@pytest.mark.parametrize("impl", MPI, ids=[i.id for i in MPI])
def test_validation_catches_corrupted_data(impl):
    with running(impl, 2, env={"ARENA_FAULT": "corrupt"}) as job:
        res = {b: measure(job, b, 4096, obs=2)
               for b in ("scatterv-skew", "neighbor_alltoall", "halo", "allreduce_init")}
    for bench, r in res.items():
        assert r.status == "invalid" and "wrong data" in r.reason, (bench, r.status, r.reason)
