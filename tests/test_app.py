"""`mpiarena program`: a real third-party program built from source per library, prebuilt binaries,
one source file, and every kind of bad input, with nothing left behind."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from conftest import IMPLS, MARKER, leftovers, mpiarena, spawn

from mpiarena.analysis.program import analyze
from mpiarena.base import paths
from mpiarena.model.programs import Metric
from mpiarena.store import Store

BY_ID = {i.id: i for i in IMPLS}
PAIR = ("mpich-4.0.2", "openmpi-4.1.4")
NETPIPE = Path(os.environ.get("MPIARENA_TEST_PROGRAMS", "/var/lib/mpiarena/test-programs"),
               "netpipe-3.7.2")
pytestmark = pytest.mark.skipif(not all(i in BY_ID for i in PAIR),
                                reason=f"needs {' and '.join(PAIR)}")
IMPL_ARGS = [a for i in PAIR for a in ("--impl", i)]
# NetPIPE's last line at 64 KiB: "31:   65536 bytes    200 times -->  13652.00 Mbps in  36.62 usec"
BANDWIDTH = r"bw=65536 bytes\s+\d+ times -->\s+(\S+) Mbps"
LATENCY = r"lat=^\s*0:\s+1 bytes.*in\s+(\S+) usec"

STEPS = r"""
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* steps of an allreduce; argv[1]: "fail" (rank 1 exits 3), "hang" (rank 0 never ends), "quiet"
   (prints nothing) or a step count */
int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "200";
    if (!strcmp(mode, "fail") && rank == 1)
        exit(3);
    if (!strcmp(mode, "hang") && rank == 0)
        for (;;)
            sleep(1);
    int steps = atoi(mode) > 0 ? atoi(mode) : 50;
    double x = rank, y = 0, t0 = MPI_Wtime();
    for (int i = 0; i < steps; i++) /* no MPI_IN_PLACE: LAM is MPI 1.2 */
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double per = (MPI_Wtime() - t0) / steps;
    if (rank == 0 && strcmp(mode, "quiet"))
        printf("ranks %d\nTime per step: %.9f\n", size, per);
    MPI_Finalize();
    return 0;
}
"""


@pytest.fixture(scope="module")
def steps_c(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("steps") / "steps.c"
    path.write_text(STEPS)
    path.parent.chmod(0o755)
    return path


def _run_id(out: str) -> int:
    m = re.search(r"program run (\d+)", out)
    assert m, out
    return int(m.group(1))


@pytest.mark.alone  # its verdicts and NetPIPE's bandwidth are measured figures
@pytest.mark.skipif(not (NETPIPE / "makefile").is_file(),
                    reason=f"no {NETPIPE}: run scripts/fetch-test-programs.sh as root")
def test_netpipe_built_from_source_per_library_is_judged_and_profiled(db):
    res = mpiarena("program", *IMPL_ARGS, "--src", str(NETPIPE), "--build",
                   "make mpi MPICC=$MPICC", "--np", "2", "--launches", "5", "--warmup", "1",
                   "--metric", LATENCY, "--metric", BANDWIDTH, "--higher", "bw", "--db", db,
                   "--", "NPmpi", "-u", "65536", "-p", "0", "-n", "200")
    assert res.returncode == 0, res.stderr
    run = analyze(Store(Path(db)), _run_id(res.stdout))
    assert [f.name for f in run.figures] == ["wall", "lat", "bw"]
    for fig in run.figures:  # every timed launch ended well and printed both figures
        assert all(len(fig.values[v]) == 5 for v in PAIR), (fig.name, fig.values)
    assert run.figure("bw").higher and all(x > 100 for x in run.figure("bw").values[PAIR[0]])
    kinds = sorted((x.variant, x.kind) for x in run.launches)
    assert kinds.count((PAIR[0], "timed")) == 5 and kinds.count((PAIR[1], "warmup")) == 1
    assert kinds.count((PAIR[1], "profiled")) == 1
    # the profiled launch saw NetPIPE's ping-pong: sends and receives on both ranks
    for v in PAIR:
        functions = {(c.rank, c.function) for c in run.profiles[v] if c.calls > 0}
        assert {(0, "MPI_Send"), (1, "MPI_Recv"), (0, "MPI_Init")} <= functions, functions
    assert "wall:" in res.stdout and "where the wall-time difference comes from" in res.stdout
    assert re.search(r"against \S+: [+-]\S+ \S*s wall per launch.*; .*MPI_Init", res.stdout)
    assert "profiler overhead" in res.stdout and leftovers() == []


def test_prebuilt_binaries_per_library(db):
    bins = {PAIR[0]: "/usr/bin/NPmpich2", PAIR[1]: "/usr/bin/NPopenmpi"}
    if not all(Path(b).exists() for b in bins.values()):
        pytest.skip("Debian's netpipe-mpich2 and netpipe-openmpi are not installed")
    res = mpiarena("program", *(f"--bin={k}={v}" for k, v in bins.items()), "--launches", "4",
                   "--no-profile", "--metric", BANDWIDTH, "--higher", "bw", "--db", db, "--",
                   "-u", "65536", "-p", "0", "-n", "100")
    assert res.returncode == 0, res.stderr
    store = Store(Path(db))
    launches = store.program_launches(_run_id(res.stdout))
    assert {x.variant for x in launches} == set(PAIR) and len(launches) == 8
    assert all(x.status == "ok" and bins[x.variant] in x.command.split() for x in launches)
    assert all("bw" in x.metrics and x.kind == "timed" for x in launches)


def test_one_source_compiled_per_library_with_a_metric(db, steps_c):
    wanted = [i for i in (*PAIR, "lam-7.1.4") if i in BY_ID]
    res = mpiarena("program", *(a for i in wanted for a in ("--impl", i)), "--launches", "4",
                   "--metric", r"step=Time per step:\s+(\S+)", "--db", db, "--",
                   str(steps_c), "300")
    assert res.returncode == 0, res.stderr
    run = analyze(Store(Path(db)), _run_id(res.stdout))
    step = run.figure("step")
    assert set(step.values) == set(wanted) and all(len(step.values[v]) == 4 for v in wanted)
    # the metric read as a time of a step (under 10 ms alone), not judged: it runs beside others
    assert all(0 < x < 1 for v in wanted for x in step.values[v])
    assert all("ranks 2" in x.stdout for x in run.launches)  # the whole output is kept
    allreduce = {v: sum(c.calls for c in run.profiles[v] if c.function == "MPI_Allreduce")
                 for v in wanted}
    assert allreduce == dict.fromkeys(wanted, 600)  # 300 steps on each of 2 ranks
    assert len(step.verdicts) == len(wanted) - 1 and leftovers() == []


def test_a_metric_that_never_matches_warns_and_wall_is_still_judged(db, steps_c):
    res = mpiarena("program", *IMPL_ARGS, "--launches", "4", "--no-profile", "--metric",
                   r"gflops=GFLOPS:\s+(\S+)", "--db", db, "--", str(steps_c), "quiet")
    assert res.returncode == 0, res.stderr
    assert "metric 'gflops' never matched the output of any launch" in res.stdout
    assert re.search(r"^wall: ", res.stdout, re.MULTILINE)


def test_a_program_failing_in_every_launch_exits_4_and_keeps_the_launches(db, steps_c):
    res = mpiarena("program", *IMPL_ARGS, "--launches", "2", "--no-profile", "--db", db, "--",
                   str(steps_c), "fail")
    assert res.returncode == 4, res.stdout + res.stderr
    assert "the program failed in every timed launch" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    launches = Store(Path(db)).program_launches(_run_id(res.stdout))
    assert len(launches) == 4 and all(x.status == "failed" for x in launches)
    assert all(x.exit_code not in (0, None) and x.reason.startswith("exit status")
               for x in launches)
    assert leftovers() == []


def test_a_hanging_program_is_killed_at_the_timeout_and_nothing_is_left(db, steps_c):
    res = mpiarena("program", "--impl", PAIR[0], "--launches", "1", "--no-profile", "--timeout",
                   "3", "--db", db, "--", str(steps_c), "hang")
    assert res.returncode == 4, res.stdout + res.stderr  # failed in every launch: exit status 4
    (launch,) = Store(Path(db)).program_launches(_run_id(res.stdout))
    assert launch.status == "timeout" and 3 <= launch.wall < 10
    assert "did not end within 3 s" in res.stdout
    assert leftovers() == []


def _ranks_of_steps() -> list[int]:
    """This test session's running ranks of steps.c."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "comm").read_text().strip() == "steps" and \
                    MARKER.encode() in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _within(seconds: float, done) -> bool:
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.parametrize("victim", [i for i in (PAIR[0], "lam-7.1.4") if i in BY_ID])
def test_a_killed_mpiarena_app_leaves_nothing(db, steps_c, victim):
    proc = spawn("program", "--impl", victim, "--launches", "1", "--no-profile", "--timeout", "300",
                 "--db", db, "--", str(steps_c), "hang")
    assert _within(60, lambda: len(_ranks_of_steps()) == 2)
    proc.kill()  # SIGKILL: its watchdog tears down what it started
    proc.communicate(timeout=60)
    scratch = paths.scratch_dir()
    assert _within(15, lambda: not _ranks_of_steps() and not leftovers(grace=0)
                   and not list(scratch.glob(f"run-{proc.pid}.*")))  # the watchdog sweeps last


@pytest.mark.parametrize(("args", "said"), [
    (["--bin", "mpich-9.9=/usr/bin/true", "--", "x"], "--bin mpich-9.9: no such implementation"),
    (["--bin", f"{PAIR[0]}=/usr/bin/NPopenmpi"], "is linked to"),
    (["--metric", "t=(unclosed", "--", "prog.c"], "not a regular expression"),
    (["--metric", "t=no group", "--", "prog.c"], "needs a group around the number"),
    (["--higher", "bw", "--", "prog.c"], "--higher bw: no --metric of that name"),
    (["--src", "/tmp"], "--src and --build go together"),
    (["--impl", "pvm-3.4.6", "--", "prog.c"], "not an MPI library"),
    ([], "no program"),
])
def test_bad_input_is_one_line_and_exit_2(db, args, said):
    if "NPopenmpi" in " ".join(args) and not Path("/usr/bin/NPopenmpi").exists():
        pytest.skip("no NPopenmpi here")
    if "pvm-3.4.6" in args and "pvm-3.4.6" not in BY_ID:
        pytest.skip("no PVM here")
    res = mpiarena("program", *args, "--db", db)
    assert res.returncode == 2, res.stdout + res.stderr
    assert said in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr


def test_a_build_that_fails_everywhere_and_a_program_missing_after_it(db, tmp_path):
    (tmp_path / "Makefile").write_text("all:\n\t@echo building with $(MPICC)\n")
    failing = mpiarena("program", *IMPL_ARGS, "--src", str(tmp_path), "--build", "exit 7",
                       "--db", db, "--", "prog")
    assert failing.returncode == 2 and "mpiarena: error:" in failing.stderr
    missing = mpiarena("program", *IMPL_ARGS, "--src", str(tmp_path), "--build", "make",
                       "--db", db, "--", "./prog")
    assert missing.returncode == 2 and "prog" in missing.stderr, missing.stderr


def test_metric_reads_the_last_match_and_skips_what_is_no_number():
    m = Metric.parse(r"t=time:\s+(\S+)")
    assert m.read("time: 1.5\ntime: nan\ntime: x\ntime: 2e-3\n") == 0.002
    assert m.read("nothing here") is None
