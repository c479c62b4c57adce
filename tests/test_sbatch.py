"""`mpiarena run --sbatch` on a real Slurm (`slurm_env`, tests/slurm_local.py): the script kept
beside the store names the command, the job is followed to its end and its run shown; a cancelled
job is reported with Slurm's reason and keeps what it measured; bad input is one line, exit 2."""

from __future__ import annotations

import json
import re
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import ARGV, IMPLS, leftovers, mpiarena
from slurm_local import slurm_env_fixture  # noqa: F401 - the fixture slurm_env

MPI = [i.id for i in IMPLS if i.family in ("mpich", "openmpi")][:1]  # LAM and PVM refuse root
SMALL = ("--bench", "pingpong", "--sizes", "8", "--np", "2", "--observations", "3")


@pytest.fixture
def db() -> Iterator[str]:
    """A store where the job's nodes see it too: not in /tmp, which each node of an emulated
    cluster has of its own."""
    folder = Path(tempfile.mkdtemp(prefix="mpiarena-sbatch-", dir="/var/tmp"))
    try:
        yield str(folder / "results.db")
    finally:
        shutil.rmtree(folder)


def jobs_dir(db: str) -> Path:
    return Path(db).parent / f"{Path(db).stem}-jobs"


def runs_of(db: str) -> list[tuple[int, str, str, int]]:
    """Every run of the store: id, status, topology, cells."""
    con = sqlite3.connect(db, timeout=30)
    try:
        rows = con.execute("SELECT id, status, settings, (SELECT COUNT(*) FROM cells c WHERE "
                           "c.run_id=r.id) FROM runs r ORDER BY id").fetchall()
    finally:
        con.close()
    return [(i, status, json.loads(settings)["topology"], n) for i, status, settings, n in rows]


def cells_stored(db: str) -> int:
    try:
        return sum(r[3] for r in runs_of(db))
    except sqlite3.Error:  # not made yet
        return 0


def in_queue(env: dict[str, str], job: int | None = None) -> list[str]:
    argv = ["squeue", "-h", "-o", "%i", *(["-j", str(job)] if job else [])]
    return subprocess.run(argv, capture_output=True, text=True, env=env).stdout.split()


def test_a_submitted_run_completes_and_shows_its_summary(slurm_env, db):
    done = mpiarena("run", "--sbatch", "--sbatch-time=10m", "--impl", MPI[0], *SMALL, "--nodes",
                    "1", "--launches", "1", "--db", db, env=slurm_env)
    assert done.returncode == 0, done.stderr
    job = int(re.search(r"as job (\d+)", done.stderr)[1])
    assert f"job {job}: RUNNING" in done.stderr
    assert f"job {job}: COMPLETED (Reason=None, ExitCode=0:0)" in done.stderr
    assert done.stdout.startswith("Run 1 (complete)"), done.stdout
    assert runs_of(db) == [(1, "complete", f"slurm:job{job}", 1)]
    [script] = jobs_dir(db).glob("mpiarena-run-*.sh")
    lines = script.read_text().splitlines()
    assert lines[1] == (f"# mpiarena run --impl {MPI[0]} {' '.join(SMALL)} --launches 1 --db "
                        f"{db} --slurm")
    assert {"#SBATCH --job-name=mpiarena-run", "#SBATCH --ntasks=2", "#SBATCH --time=0:10:00",
            "#SBATCH --nodes=1"} <= set(lines)
    assert lines[-1].endswith(lines[1][2:].removeprefix("mpiarena")), lines[-1]
    out = script.with_name(f"{script.stem}-{job}.out")
    assert f"#SBATCH --output={script.with_name(script.stem)}-%j.out" in lines
    assert "Run 1 (complete)" in out.read_text()  # the job's own summary
    assert leftovers() == []


def test_no_wait_prints_the_job_id_only(slurm_env, db):
    done = mpiarena("run", "--sbatch", "--no-wait", "--impl", MPI[0], *SMALL, "--launches", "1",
                    "--db", db, env=slurm_env)
    assert done.returncode == 0, done.stderr
    job = int(done.stdout)
    deadline = time.monotonic() + 120
    while in_queue(slurm_env, job):
        assert time.monotonic() < deadline
        time.sleep(0.5)
    assert runs_of(db) == [(1, "complete", f"slurm:job{job}", 1)]


def test_a_cancelled_job_says_slurms_reason_and_keeps_its_run(slurm_env, db):
    def cancel(_: subprocess.Popen[str], job: str) -> None:
        subprocess.run(["scancel", job], env=slurm_env, check=True)

    job, code, out, err = follow_then(slurm_env, db, cancel, cells=2)
    assert code == 4, err
    assert re.search(rf"^job {job}: CANCELLED \(Reason=\S+, ExitCode=\d+:\d+\)$", err, re.M), err
    assert f"job {job} CANCELLED: run 1 kept what it measured (marked incomplete)" in err
    assert out.startswith("Run 1 (incomplete)"), out
    [(run, status, topology, cells)] = runs_of(db)
    assert (run, status, topology) == (1, "incomplete", f"slurm:job{job}") and cells >= 2
    assert leftovers() == []


def one_line_exit_2(done: subprocess.CompletedProcess[str], says: str) -> None:
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert says in done.stderr, done.stderr


def test_a_partition_that_does_not_exist_is_one_line(slurm_env, db):
    done = mpiarena("run", "--sbatch", "--partition", "nosuch", "--impl", MPI[0], *SMALL,
                    "--db", db, env=slurm_env)
    one_line_exit_2(done, "invalid partition specified: nosuch")
    assert "'sinfo -s' lists the partitions" in done.stderr
    assert list(jobs_dir(db).glob("*.sh")) == []  # refused: no script kept


def test_no_controller_is_sbatchs_own_line(slurm_env, db, tmp_path):
    conf = Path(slurm_env["SLURM_CONF"])
    dead = tmp_path / "slurm.conf"  # the same cluster at a port nothing listens on, and
    # sbatch's retries for 9 s cut short
    dead.write_text(re.sub(r"(?m)^(SlurmctldPort|MessageTimeout)=.*\n", "", conf.read_text()) +
                    "SlurmctldPort=1\nMessageTimeout=1\n")
    done = mpiarena("run", "--sbatch", "--impl", MPI[0], *SMALL, "--db", db,
                    env={**slurm_env, "SLURM_CONF": str(dead)})
    one_line_exit_2(done, "sbatch: Batch job submission failed: Unable to contact slurm "
                    "controller (connect failure)")


def test_sbatch_refuses_other_places_and_needs_slurms_commands(db, tmp_path):
    one_line_exit_2(mpiarena("run", "--sbatch", "--cluster", "emulated:nodes=2", "--db", db),
                    "leave out --cluster, --hosts and --slurm")
    one_line_exit_2(mpiarena("run", "--sbatch-time", "5m", "--db", db), "go with --sbatch")
    one_line_exit_2(mpiarena("run", "--sbatch", "--db", db, env={"PATH": str(tmp_path)}),
                    "--sbatch needs sbatch on PATH")


def follow_then(env: dict[str, str], db: str,
                act: Callable[[subprocess.Popen[str], str], object], *flags: str,
                cells: int = 1) -> tuple[str, int, str, str]:
    """`run --sbatch` followed until its job has stored `cells` cells, then act(follower, job):
    the job id, the follower's exit status, stdout and stderr."""
    follower = subprocess.Popen(
        [*ARGV, "run", "--sbatch", *flags, "--impl", MPI[0], *SMALL, "--launches", "500",
         "--db", db], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        stdin=subprocess.DEVNULL,
        # a test run started in the background of a script inherits SIGINT ignored, and Python
        # then keeps it ignored: Ctrl-C is what these tests send
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 120
        while cells_stored(db) < cells:
            assert time.monotonic() < deadline and follower.poll() is None
            time.sleep(0.2)
        [job] = in_queue(env)
        act(follower, job)
        out, err = follower.communicate(timeout=120)
    finally:
        if follower.poll() is None:
            follower.kill()
            follower.wait()
    return job, follower.returncode, out, err


def interrupted_follower(env: dict[str, str], db: str, *flags: str) -> tuple[str, str, str]:
    """Ctrl-C to `run --sbatch` once its job has stored a cell: the job id, stdout, stderr."""
    job, code, out, err = follow_then(env, db, lambda f, _: f.send_signal(signal.SIGINT),
                                      *flags)
    assert code == 130, err
    return job, out, err


def test_ctrl_c_leaves_the_job_running_and_says_how_to_follow_it(slurm_env, db):
    job, _, err = interrupted_follower(slurm_env, db)
    try:
        assert f"interrupted: job {job} goes on without mpiarena watching; follow it with " \
            f"'squeue -j {job}'" in err, err
        assert in_queue(slurm_env, int(job)) == [job]
    finally:
        subprocess.run(["scancel", job], env=slurm_env, check=True)
        deadline = time.monotonic() + 60
        while in_queue(slurm_env, int(job)):
            assert time.monotonic() < deadline
            time.sleep(0.2)
    assert leftovers() == []


def test_cancel_on_interrupt_cancels_the_job_and_reports_it(slurm_env, db):
    job, out, err = interrupted_follower(slurm_env, db, "--cancel-on-interrupt")
    assert out.startswith("Run 1 (incomplete)"), out
    assert f"interrupted: cancelled job {job}" in err
    assert re.search(rf"^job {job}: CANCELLED \(Reason=\S+, ExitCode=\d+:\d+\)$", err, re.M), err
    assert f"job {job} CANCELLED: run 1 kept what it measured (marked incomplete)" in err
    assert in_queue(slurm_env, int(job)) == []
    assert runs_of(db)[0][1] == "incomplete"
    assert leftovers() == []


def test_reproduce_takes_the_same_options(db):
    one_line_exit_2(mpiarena("reproduce", "nevin1996", "--sbatch", "--slurm", "--db", db),
                    "leave out --cluster, --hosts and --slurm")
    one_line_exit_2(mpiarena("reproduce", "nevin1996", "--nodes", "2", "--db", db),
                    "go with --sbatch")
