"""A one-node Slurm (Debian's munged, slurmctld and slurmd) on this machine with a private
configuration and free ports, for any test module: `from slurm_local import slurm_env_fixture`
and ask for `slurm_env`, the environment (SLURM_CONF) that points salloc, srun, sbatch and squeue
at it."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mpiarena.system.procs import alive

DAEMONS = ("/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd")
HAVE_SLURM = os.geteuid() == 0 and all(Path(d).exists() for d in DAEMONS) and \
    shutil.which("salloc") is not None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def slurm_conf(root: Path, host: str) -> str:
    return "\n".join([
        "ClusterName=arena", f"SlurmctldHost={host}(127.0.0.1)", "SlurmUser=root",
        "AuthType=auth/munge", f"AuthInfo=socket={root}/munge/sock", "CredType=cred/munge",
        f"StateSaveLocation={root}/state", f"SlurmdSpoolDir={root}/spool",
        f"SlurmctldPidFile={root}/slurmctld.pid", f"SlurmdPidFile={root}/slurmd.pid",
        f"SlurmctldPort={free_port()}", f"SlurmdPort={free_port()}",
        "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
        "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core", "MpiDefault=none",
        "ReturnToService=2", "JobAcctGatherType=jobacct_gather/none", "KillWait=5",
        f"SlurmctldLogFile={root}/slurmctld.log", f"SlurmdLogFile={root}/slurmd.log",
        f"NodeName={host} NodeAddr=127.0.0.1 CPUs={os.cpu_count()} State=UNKNOWN",
        f"PartitionName=arena Nodes={host} Default=YES MaxTime=INFINITE State=UP", ""])


def pid_of(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


@contextlib.contextmanager
def one_node_slurm(root: Path) -> Iterator[dict[str, str]]:
    """munged, slurmctld and slurmd configured under `root`; the environment that reaches them;
    the daemons stopped afterwards."""
    for sub in ("state", "spool", "munge"):
        (root / sub).mkdir(mode=0o700)
    key = root / "munge" / "key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    conf = root / "slurm.conf"
    conf.write_text(slurm_conf(root, socket.gethostname()))
    env = {**os.environ, "SLURM_CONF": str(conf)}
    try:
        subprocess.run([DAEMONS[0], f"--socket={root}/munge/sock", f"--key-file={key}",
                        f"--pid-file={root}/munge/pid", f"--seed-file={root}/munge/seed",
                        f"--log-file={root}/munge/log", "--force"], check=True, env=env)
        subprocess.run([DAEMONS[1], "-i"], check=True, env=env)
        subprocess.run([DAEMONS[2]], check=True, env=env)
        deadline = time.monotonic() + 30
        while "idle" not in subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True,
                                           text=True, env=env).stdout:
            assert time.monotonic() < deadline, (root / "slurmctld.log").read_text()[-500:]
            time.sleep(0.2)
        yield env
    finally:
        for pidfile in (root / "slurmd.pid", root / "slurmctld.pid", root / "munge" / "pid"):
            if (pid := pid_of(pidfile)) is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGTERM)
                deadline = time.monotonic() + 15
                while alive(pid) and time.monotonic() < deadline:  # a zombie is gone
                    time.sleep(0.05)


@pytest.fixture(scope="module", name="slurm_env")
def slurm_env_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A one-node Slurm for the module's tests: the environment that reaches its controller."""
    if not HAVE_SLURM:
        pytest.skip("needs root and Debian's slurmctld, slurmd and munge")
    with one_node_slurm(tmp_path_factory.mktemp("slurm")) as env:
        yield env
