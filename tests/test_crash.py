"""A rank that dies on a signal, for real: the core's own handler says where, the cell's reason
names the call, and a crash inside the library leaves a reproducer that builds with the
library's wrapper."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import IMPLS, mpiarena

from mpiarena.impls import crashes
from mpiarena.runner import crash

MPI = next((i for i in IMPLS if i.family in ("mpich", "openmpi")), None)
needs_mpi = pytest.mark.skipif(MPI is None, reason="needs MPICH or Open MPI")

BLOCK = """\
some launcher line
arena-crash\t1\tSIGSEGV\tallreduce\t512
/lib/x86_64-linux-gnu/libc.so.6(+0x3c050)[0x7f0]
/lib/x86_64-linux-gnu/libc.so.6(+0x15c9a0)[0x7f1]
/opt/mpich/lib/libmpi.so.12(+0x3f8101)[0x7f2]
/opt/mpich/lib/libmpi.so.12(+0x26b2a7)[0x7f3]
/opt/mpich/lib/libmpi.so.12(PMPI_Allreduce+0x2f0)[0x7f4]
/build/arena(arena_loop_calls+0x5d)[0x5f5]
/build/arena(main+0x1f2)[0x5f6]
arena-crash-end\t1
"""


def test_a_crash_block_reads_as_the_call_the_rank_died_in():
    died = crash.read(BLOCK)
    assert died is not None
    assert (died.rank, died.signal, died.bench, died.size) == (1, "SIGSEGV", "allreduce", 512)
    assert died.call == "MPI_Allreduce" and died.in_library
    assert died.line() == ("rank 1 died of SIGSEGV in MPI_Allreduce (a cell of allreduce 512 B);"
                           " its stack: libc.so.6 x2 < libmpi.so.12 x2 < PMPI_Allreduce < "
                           "arena_loop_calls < main")
    assert crash.read("no block here\n") is None


def _reproducer(said: str) -> Path:
    m = re.search(r"a reproducer: (\S+\.c)", said)
    assert m, said
    return Path(m.group(1))


@needs_mpi
def test_a_rank_dying_inside_the_library_names_the_call_and_leaves_a_reproducer(db, tmp_path):
    assert MPI is not None
    done = mpiarena("run", "--impl", MPI.id, "--bench", "allreduce", "--sizes", "4K",
                    "--launches", "1", "--observations", "2", "--db", db,
                    env={"ARENA_FAULT": "libsegv:allreduce"})
    assert done.returncode == 4, done.stderr
    said = " ".join(done.stdout.split())  # unwrapped
    assert "rank 1 died of SIGSEGV in MPI_Allreduce (a cell of allreduce 4 KiB)" in said, said
    source = _reproducer(said)
    try:
        text = source.read_text()
        assert "MPI_Allreduce(s, r, count, type, MPI_SUM, comm)" in text
        assert "4096 B a rank, 2 ranks" in text and str(MPI.launcher) in text
        built = subprocess.run([str(MPI.wrapper), "-o", str(tmp_path / "repro"), str(source)],
                               capture_output=True, text=True, env=MPI.environ())
        assert built.returncode == 0, built.stderr
        shown = " ".join(mpiarena("show", "1", "--db", db).stdout.split())
        assert f"a reproducer: {source}" in shown
    finally:
        shutil.rmtree(source.parent)


@needs_mpi
def test_a_rank_dying_in_the_core_names_its_function_and_writes_no_reproducer(db):
    assert MPI is not None
    done = mpiarena("run", "--impl", MPI.id, "--bench", "bcast", "--sizes", "8",
                    "--launches", "1", "--observations", "2", "--db", db,
                    env={"ARENA_FAULT": "segv:bcast"})
    assert done.returncode == 4, done.stderr
    said = " ".join(done.stdout.split())
    assert "died of SIGSEGV in arena_fault_crash (a cell of bcast 8 B)" in said, said
    assert "a reproducer" not in said


def test_the_known_crashes_name_their_releases_and_reproducers():
    mpich = crashes.covering("mpich", "5.0.0.post1")
    assert len(mpich) == 1 and mpich[0].reproducer.is_file()
    assert "pmodels/mpich/issues/7954" in mpich[0].line("mpich-5.0.0")
    assert crashes.covering("mpich", "5.0.2") == crashes.covering("mpich", "4.0.2") == []
    assert crashes.covering("openmpi", "5.0.0") == []
