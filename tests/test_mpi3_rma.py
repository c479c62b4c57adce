"""One-sided communication (kernels/mpi_rma.c) launched for real: validated on the MPI-3
libraries in each synchronisation, the window's three kinds of memory, what LAM, PVM and Open
MPI's compare-and-swap say instead, and a sane figure."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import IMPLS
from test_core import measure, running

from mpiarena.impls import Implementation
from mpiarena.model.benchmarks import BENCHMARKS

MPI3 = [i for i in IMPLS if i.id in ("mpich-4.0.2", "openmpi-4.1.4")]
# one of each synchronisation, a windowed one, an accumulate and an atomic
CHECKED = {"put-fence": (8, 4096), "get-lock": (8, 4096), "accumulate-pscw": (8, 4096),
           "fetch_and_op-lockall": (8,), "put-bw-lockall": (8, 4096)}


def by_id(name: str) -> Implementation:
    found = [i for i in IMPLS if i.id == name]
    if not found:
        pytest.skip(f"{name} is not installed")
    return found[0]


def fastest(res) -> float:
    return float(np.min([max(o.per_rank[:2]) for o in res.observations]))


@pytest.mark.alone  # reads measured figures: on a quiet machine only
@pytest.mark.parametrize("impl", MPI3, ids=[i.id for i in MPI3])
def test_each_synchronisation_delivers_and_a_large_put_takes_longer(impl):
    with running(impl, 2) as job:
        for bench, sizes in CHECKED.items():
            for size in sizes:
                res = measure(job, bench, size, obs=2)
                assert res.status == "ok", (bench, size, res.reason)
        small = measure(job, "put-lock", 8, validate=False, obs=3)
        large = measure(job, "put-lock", 256 << 10, validate=False, obs=3)
    assert small.status == large.status == "ok"
    assert 20e-9 < fastest(small) < fastest(large) < 0.1
    assert BENCHMARKS["put-bw-lockall"].windowed


@pytest.mark.parametrize("window", ["create", "dynamic"])
def test_window_memory_of_each_kind(window):
    impl = by_id("openmpi-4.1.4")
    with running(impl, 2, env={"ARENA_RMA_WINDOW": window}) as job:
        for bench in ("put-lockall", "get-pscw", "get_accumulate-fence", "get-bw-lock"):
            res = measure(job, bench, 4096, obs=2)
            assert res.status == "ok", (bench, res.reason)


def test_validation_catches_a_corrupted_window():
    """ARENA_FAULT=corrupt flips the middle byte of what the check reads: the target's window
    (put) and the origin's result (get)."""
    impl = by_id("mpich-4.0.2")
    with running(impl, 2, env={"ARENA_FAULT": "corrupt"}) as job:
        put = measure(job, "put-lock", 4096, obs=1)
        get = measure(job, "get-fence", 4096, obs=1)
    assert put.status == "invalid" and "target's window" in put.reason
    assert "byte at 2048" in put.reason
    assert get.status == "invalid" and "origin's result" in get.reason


def test_lam_has_mpi2_windows_only():
    lam = by_id("lam-7.1.4")
    with running(lam, 2) as job:
        allocated = measure(job, "put-fence", 8, obs=1)
        lock = measure(job, "get-lock", 8, obs=1)
        lockall = measure(job, "put-lockall", 8, obs=1)
        fop = measure(job, "fetch_and_op-pscw", 8, obs=1)
    assert allocated.status == "na" and "no MPI_Win_allocate" in allocated.reason
    assert lock.status == "na" and "no MPI_Win_lock " in lock.reason
    assert lockall.status == "na" and "no MPI_Win_lock_all" in lockall.reason
    assert fop.status == "na" and "no MPI_Fetch_and_op" in fop.reason
    with running(lam, 2, env={"ARENA_RMA_WINDOW": "create"}) as job:
        for bench in ("put-fence", "accumulate-pscw"):
            res = measure(job, bench, 4096, obs=2)
            assert res.status == "ok", (bench, res.reason)


def test_pvm_has_no_one_sided_communication():
    with running(by_id("pvm-3.4.6"), 2) as job:
        res = measure(job, "put-fence", 8, obs=1)
    assert res.status == "na" and "no one-sided communication" in res.reason


def test_open_mpi_compare_and_swap_only_off_its_crashing_path():
    """Open MPI 4.1.4's osc/rdma over btl/vader segfaults on a 64-bit compare-and-swap: n/a by
    default, measured and right over osc/pt2pt."""
    impl = by_id("openmpi-4.1.4")
    with running(impl, 2) as job:
        res = measure(job, "compare_and_swap-lock", 8, obs=1)
    assert res.status == "na" and "open-mpi/ompi#7967" in res.reason
    with running(impl, 2, env={"OMPI_MCA_osc": "pt2pt"}) as job:
        res = measure(job, "compare_and_swap-lock", 8, obs=2)
    assert res.status == "ok", res.reason
