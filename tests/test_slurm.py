"""A real Slurm (Debian's slurmctld, slurmd and munge) on this machine: a small suite runs through
an allocation with srun, and outside one `--slurm` says how to get one."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import IMPLS, leftovers, mpiarena

DAEMONS = ("/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd")
HAVE_SLURM = os.geteuid() == 0 and all(Path(d).exists() for d in DAEMONS) and \
    shutil.which("salloc") is not None
WANTED = [i.id for i in IMPLS if i.family in ("mpich", "openmpi", "tcp")][:3]


def slurm_conf(root: Path, host: str) -> str:
    return "\n".join([
        "ClusterName=arena", f"SlurmctldHost={host}(127.0.0.1)", "SlurmUser=root",
        "AuthType=auth/munge", f"AuthInfo=socket={root}/munge/sock", "CredType=cred/munge",
        f"StateSaveLocation={root}/state", f"SlurmdSpoolDir={root}/spool",
        f"SlurmctldPidFile={root}/slurmctld.pid", f"SlurmdPidFile={root}/slurmd.pid",
        "SlurmctldPort=46917", "SlurmdPort=46918", "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none", "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core",
        "MpiDefault=none", "ReturnToService=2", "JobAcctGatherType=jobacct_gather/none",
        f"SlurmctldLogFile={root}/slurmctld.log", f"SlurmdLogFile={root}/slurmd.log",
        f"NodeName={host} NodeAddr=127.0.0.1 CPUs={os.cpu_count()} State=UNKNOWN",
        f"PartitionName=arena Nodes={host} Default=YES MaxTime=INFINITE State=UP", ""])


def pid_of(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    """munged, slurmctld and slurmd with a private configuration; stopped afterwards."""
    if not HAVE_SLURM:
        pytest.skip("needs root and Debian's slurmctld, slurmd and munge")
    root = tmp_path_factory.mktemp("slurm")
    for sub in ("state", "spool", "munge"):
        (root / sub).mkdir(mode=0o700)
    key = root / "munge" / "key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    conf = root / "slurm.conf"
    conf.write_text(slurm_conf(root, socket.gethostname()))
    env = {**os.environ, "SLURM_CONF": str(conf)}
    subprocess.run([DAEMONS[0], f"--socket={root}/munge/sock", f"--key-file={key}",
                    f"--pid-file={root}/munge/pid", f"--seed-file={root}/munge/seed",
                    f"--log-file={root}/munge/log", "--force"], check=True, env=env)
    subprocess.run([DAEMONS[1], "-i"], check=True, env=env)
    subprocess.run([DAEMONS[2]], check=True, env=env)
    try:
        deadline = time.monotonic() + 30
        while "idle" not in subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True,
                                           text=True, env=env).stdout:
            assert time.monotonic() < deadline, (root / "slurmctld.log").read_text()[-500:]
            time.sleep(0.2)
        yield env
    finally:
        for pidfile in (root / "slurmd.pid", root / "slurmctld.pid", root / "munge" / "pid"):
            if (pid := pid_of(pidfile)) is not None:
                os.kill(pid, signal.SIGTERM)
                deadline = time.monotonic() + 15
                while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
                    time.sleep(0.05)


def test_a_suite_runs_through_srun_in_an_allocation(slurm, db):
    impls = [f"--impl={i}" for i in WANTED]
    done = subprocess.run(
        ["salloc", "-n", "2", sys.executable, "-c", "from mpiarena.commands import main; main()",
         "run", "--launches", "2",
         "--slurm", *impls, "--bench", "pingpong,bcast", "--sizes", "8,64K",
         "--observations", "3", "--db", db], capture_output=True, text=True, env=slurm,
        timeout=600, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    con = sqlite3.connect(db)
    jobs = con.execute("SELECT variant, topology, command, status, ranks FROM jobs").fetchall()
    assert {j[0] for j in jobs} == set(WANTED)
    for variant, topology, command, status, ranks in jobs:
        assert topology.startswith("slurm:job") and status == "ok", (variant, status)
        assert len(json.loads(ranks)) == 2
        if not variant.startswith("tcp"):  # MPI ranks start as srun steps
            assert json.loads(command)[0].endswith("srun"), command
    ok = con.execute("SELECT COUNT(*) FROM cells WHERE status='ok'").fetchone()[0]
    launches = 2
    assert ok == launches * (4 * len(WANTED) - sum(v.startswith("tcp") for v in WANTED) * 2)
    assert leftovers() == []


def test_slurm_outside_an_allocation_says_how_to_get_one(db):
    assert "SLURM_JOB_ID" not in os.environ
    done = mpiarena("run", "--slurm", "--impl", IMPLS[0].id, "--db", db)
    assert done.returncode == 2
    assert "--slurm runs inside an allocation: 'salloc -n 4 mpiarena run --slurm" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
