"""Derived datatypes (kernels/mpi_dtype.c): a vector and an indexed type of the same payload as
pingpong and bcast, checked for the data they move, in every MPI library; n/a elsewhere."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import IMPLS
from test_core import measure, running

DTYPE = ["pingpong-vector", "pingpong-indexed", "bcast-vector", "bcast-indexed"]
MPI = [i for i in IMPLS if i.family in ("mpich", "openmpi", "impi", "lam")]
OTHERS = [i for i in IMPLS if i.family in ("pvm", "tcp")]


def median(cell) -> float:  # type: ignore[no-untyped-def]
    return float(np.median([max(o.per_rank) for o in cell.observations]))


@pytest.mark.alone  # reads measured figures: on a quiet machine only
@pytest.mark.parametrize("impl", MPI, ids=[i.id for i in MPI])
def test_datatypes_move_the_right_bytes_and_cost_more_with_size(impl):
    with running(impl, 2) as job:
        cells = {(b, s): measure(job, b, s, obs=3) for b in DTYPE for s in (8, 65536)}
        odd = measure(job, "pingpong-vector", 12)
    if impl.family == "mpich":  # a broadcast's leaves beyond the first (timings meaningless)
        with running(impl, 3) as job:
            cells |= {("bcast-indexed at 3", 4096): measure(job, "bcast-indexed", 4096, obs=1)}
    for key, cell in cells.items():
        assert cell.status == "ok", (key, cell.reason)
    for bench in DTYPE:
        assert median(cells[bench, 65536]) > median(cells[bench, 8]), bench
    assert odd.status == "na" and "multiple of 8" in odd.reason


@pytest.mark.parametrize("impl", MPI[:1], ids=[i.id for i in MPI[:1]])
def test_a_wrong_byte_in_a_typed_receive_is_caught(impl):
    with running(impl, 2, env={"ARENA_FAULT": "corrupt"}) as job:
        cells = [measure(job, b, 4096) for b in ("pingpong-indexed", "bcast-vector")]
    for cell in cells:
        assert cell.status == "invalid" and "received wrong data" in cell.reason, cell


@pytest.mark.parametrize("impl", OTHERS, ids=[i.id for i in OTHERS])
def test_families_without_mpi_datatypes_say_so(impl):
    with running(impl, 2) as job:
        cell = measure(job, "pingpong-vector", 64)
        put = measure(job, "put-fence", 64)
    assert cell.status == "na"
    assert cell.reason == f"the {impl.family} family has no derived datatypes"
    assert put.status == "na" and "has no one-sided communication" in put.reason
