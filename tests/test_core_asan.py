"""Every collective of the core, its mock-ups and the other sums under AddressSanitizer, built
through a real MPI's wrapper: no read or write outside the buffers the core allocated, whatever
the size, the rank count, off-cache slots or the validation call."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from conftest import IMPLS

from mpiarena.base import paths, users
from mpiarena.base.records import Cell, CellRequest
from mpiarena.impls import family_of
from mpiarena.platform.build import CFLAGS, core_sources
from mpiarena.platform.plan import Variant
from mpiarena.runner.launch import Daemons, job_for

MPI = next((i for i in IMPLS if i.family == "mpich"), None)
pytestmark = pytest.mark.skipif(MPI is None, reason="needs MPICH")

COLLECTIVES = ["barrier", "bcast", "scatter", "gather", "reduce", "allreduce", "allgather",
               "alltoall", "reduce_scatter_block", "scan", "exscan", "bcast-ack",
               "allreduce=reduce+bcast", "allreduce=reduce_scatter_block+allgather",
               "bcast=scatter+allgather", "allgather=gather+bcast", "allgather=alltoall",
               "gather=allgather", "scatter=bcast", "reduce=allreduce",
               "reduce_scatter_block=reduce+scatter", "scan=exscan+reduce_local"]
SIZES = [0, 3, 100, 65537]  # none, under an element, not a multiple of np, past a page


@pytest.fixture(scope="module")
def asan_core() -> Path:
    assert MPI is not None
    out = Path(tempfile.mkdtemp(dir=paths.scratch_dir()))
    out.chmod(0o755)
    sources = [str(s) for s in core_sources(family_of(MPI))]
    done = subprocess.run([str(MPI.wrapper), *CFLAGS, "-O1", "-g", "-fsanitize=address",
                           "-fno-omit-frame-pointer", "-o", str(out / "arena"), *sources, "-lm"],
                          capture_output=True, text=True, env=MPI.environ())
    assert done.returncode == 0, done.stderr
    yield out / "arena"
    shutil.rmtree(out)


def test_every_collective_stays_inside_its_buffers(asan_core):
    """3 ranks (blocks not a multiple of np) summing chars (any size a whole number of them)."""
    assert MPI is not None
    np_ = 3
    env = (("ASAN_OPTIONS", "detect_leaks=0:abort_on_error=1"), ("ARENA_DATATYPE", "char"))
    work = Path(tempfile.mkdtemp(dir=paths.scratch_dir()))
    work.chmod(0o755)
    daemons = Daemons(work, users.for_ranks(), "test")
    try:
        job, _ = job_for(Variant(MPI.id, MPI, env=env), np_, asan_core, work / "err", daemons)
        try:
            job.start(timeout=60)
            cell_id = 0
            for bench in COLLECTIVES:
                for size in SIZES:
                    for offcache in (False, True) if size == 100 else (False,):
                        cell_id += 1
                        asked = CellRequest(Cell(bench, size, np_), timing="loop", observations=1,
                                            target_time=1e-5, max_time=1.0, offcache=offcache,
                                            validate=True)
                        got = job.cell(asked, cell_id, timeout=60)
                        assert got.status in ("ok", "na"), (bench, size, offcache, got.reason)
            job.quit(timeout=30)
        finally:
            job.kill()
        said = (work / "err").read_text(errors="replace")
        assert "AddressSanitizer" not in said, said[:4000]
    finally:
        daemons.stop_all()
        shutil.rmtree(work)
