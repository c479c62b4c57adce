"""A real Slurm (Debian's slurmctld, slurmd and munge) on this machine: a small suite runs through
an allocation with srun, and outside one `--slurm` says how to get one."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import pytest
from conftest import IMPLS, leftovers, mpiarena
from slurm_local import slurm_env_fixture  # noqa: F401 - the fixture slurm_env

from mpiarena.platform import doctor

WANTED = [i.id for i in IMPLS if i.family in ("mpich", "openmpi", "tcp")][:3]


def test_a_suite_runs_through_srun_in_an_allocation(slurm_env, db):
    impls = [f"--impl={i}" for i in WANTED]
    done = subprocess.run(
        ["salloc", "-n", "2", sys.executable, "-c", "from mpiarena.commands import main; main()",
         "run", "--launches", "2",
         "--slurm", *impls, "--bench", "pingpong,bcast", "--sizes", "8,64K",
         "--observations", "3", "--db", db], capture_output=True, text=True, env=slurm_env,
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


def test_doctor_lists_slurms_mpi_plugins_where_its_configuration_is(
        slurm_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLURM_CONF", slurm_env["SLURM_CONF"])
    check = doctor.slurm()
    assert check.ok and "MPI plugins cray_shasta, none, pmi2, pmix;" in check.detail, check
    monkeypatch.delenv("SLURM_CONF")  # and no /etc/slurm here: srun reaches no controller
    check = doctor.slurm()
    assert "no Slurm configuration reachable now" in check.detail and "SLURM_CONF" in check.fix
