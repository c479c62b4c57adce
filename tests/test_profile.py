"""The per-call profiler: exact call counts of a known program, side by side, bad input."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from conftest import IMPLS, leftovers, mpiarena

from mpiarena.base import paths, users
from mpiarena.runner.cleanup import scratch_owner
from mpiarena.runner.profile import profile

KNOWN = r"""
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, value = 0, sum = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc > 1 && rank == 1)
        exit(3); /* a rank that dies */
    for (int i = 0; i < 10; i++) {
        if (rank == 0)
            MPI_Send(&i, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        else if (rank == 1)
            MPI_Recv(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    for (int i = 0; i < 3; i++)
        MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 2; i++)
        MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Reduce(&rank, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
"""
COMMON = {"MPI_Init": 1, "MPI_Barrier": 3, "MPI_Bcast": 2, "MPI_Reduce": 1, "MPI_Allreduce": 1,
          "MPI_Finalize": 1}
EXPECTED = {0: {**COMMON, "MPI_Send": 10}, 1: {**COMMON, "MPI_Recv": 10}}
WANTED = ("mpich-4.0.2", "openmpi-4.1.4", "lam-7.1.4")
HERE = {i.id: i for i in IMPLS if i.id in WANTED}


def _scratch_left() -> list[Path]:
    """Profiles' scratch directories of this process or of an mpiarena that has ended (a test
    beside this one may be profiling: its directory's owner still runs)."""
    return [d for d in paths.scratch_dir().glob("run-*-profile-*")
            if (owner := scratch_owner(d)) is None or owner.pid == os.getpid() or not owner.alive()]


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "known.c"
    path.write_text(KNOWN)
    return path


@pytest.mark.parametrize("impl_id", WANTED)
def test_counts_equal_the_known_counts(impl_id: str, source: Path) -> None:
    if impl_id not in HERE:
        pytest.skip(f"{impl_id} is not installed")
    result = profile([HERE[impl_id]], 2, [], users.for_ranks(), build=source)[impl_id]
    assert {rank: {f: c.calls for f, c in per.items()} for rank, per in result.items()} == EXPECTED
    assert all(c.seconds >= 0 for per in result.values() for c in per.values())
    assert _scratch_left() == []


def test_side_by_side(source: Path) -> None:
    two = list(HERE)[:2]
    if len(two) < 2:
        pytest.skip("two of the implementations are needed")
    done = mpiarena("profile", *(f"--impl={i}" for i in two), "--np", "2", "--compile",
                    str(source), timeout=120)
    assert done.returncode == 0, done.stderr
    title = "time in MPI calls, 2 ranks (calls: all ranks; time: sum over ranks, slowest rank)"
    assert title in done.stdout.splitlines()  # a whole line, not wrapped to the table
    header = next(ln for ln in done.stdout.splitlines() if ln.startswith("┃"))
    assert all(i in header for i in two)
    rows = {ln.split("│")[1].strip(): ln for ln in done.stdout.splitlines() if "│" in ln}
    for name, calls in (("MPI_Send", "10"), ("MPI_Barrier", "6"),
                        ("point-to-point total", "20"), ("collectives total", "14")):
        cells = [c.strip() for c in rows[name].split("│")[2:-1]]
        assert cells[0::2] == [calls, calls], rows[name]
    assert _scratch_left() == [] and leftovers() == []


def test_a_built_program_and_one_without_mpi() -> None:
    impl_id = next(iter(HERE), None)
    if impl_id is None:
        pytest.skip("none of the implementations is installed")
    impl = HERE[impl_id]
    work = Path(tempfile.mkdtemp(dir=paths.scratch_dir(), prefix="test-"))
    try:
        work.chmod(0o755)
        (work / "known.c").write_text(KNOWN)
        subprocess.run([str(impl.wrapper), "-o", str(work / "known"), str(work / "known.c")],
                       check=True, env=impl.environ(), capture_output=True)
        done = mpiarena("profile", "--impl", impl_id, "--", str(work / "known"), timeout=120)
        assert done.returncode == 0, done.stderr
        assert "MPI_Allreduce" in done.stdout
        done = mpiarena("profile", "--impl", impl_id, "--", "true", timeout=120)
        assert done.returncode == 2
        assert "wrote no profile" in done.stderr and len(done.stderr.splitlines()) == 1
    finally:
        shutil.rmtree(work)


@pytest.mark.parametrize("args", [["--impl", "nosuch-1.0", "--", "true"],
                                  ["--impl", "tcp", "--", "true"],
                                  ["--impl", "{impl}", "--", "/no/such/program"],
                                  ["--impl", "{impl}", "--compile", "/no/such.c"],
                                  ["--impl", "{impl}", "--compile", "{source}", "--", "die"]],
                         ids=["unknown-impl", "not-mpi", "missing-program", "missing-source",
                              "rank-dies"])
def test_bad_input_is_one_line(args: list[str], source: Path) -> None:
    impl_id = next(iter(HERE), None)
    if impl_id is None:
        pytest.skip("none of the implementations is installed")
    argv = [a.format(impl=impl_id, source=source) for a in args]
    done = mpiarena("profile", *argv, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.startswith("mpiarena: error:")
    assert _scratch_left() == [] and leftovers() == []
