"""Inside a Slurm allocation: ranks start with srun or with a family's launcher that knows Slurm
(launchers/srun.py); ranks run as the allocation's owner."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..base.errors import ArenaError
from .emulated_slurm import spec_of
from .placement import Node, Placement, spread


@dataclass
class Slurm:
    nodes: tuple[Node, ...]
    srun: Path
    label: str
    cores: int  # the allocation's tasks
    emulated: bool = False  # the Slurm of an emulated cluster (`cluster up --slurm`)

    def placement(self, np: int) -> Placement:
        return Placement(self.nodes, spread(self.nodes, np), Path("/bin/false"),
                         label=self.label, srun=self.srun, one_kernel=self.emulated)

    def prepare(self, binary: Path) -> None:
        """Slurm clusters share the file system that holds the build directory."""

    def reap(self) -> int:
        return 0  # srun ends its steps; slurmd cleans up after them


def of_job(topology: str, job: int | str) -> bool:
    """Whether a run's topology is Slurm job `job`'s ('slurm:job3', or 'slurm:job3 on
    emulated:...' on an emulated cluster's Slurm)."""
    return topology.split(" on ", 1)[0] == f"slurm:job{job}"


def open_allocation() -> Slurm:
    """The allocation mpiarena runs in; ArenaError says how to get one."""
    job = os.environ.get("SLURM_JOB_ID")
    srun, scontrol = shutil.which("srun"), shutil.which("scontrol")
    if not job:
        raise ArenaError("--slurm runs inside an allocation: 'salloc -n 4 mpiarena run --slurm "
                         "...' or an sbatch script")
    if not srun or not scontrol:
        raise ArenaError("srun/scontrol are not on PATH: apt-get install slurm-client")
    nodelist = os.environ.get("SLURM_JOB_NODELIST") or os.environ.get("SLURM_NODELIST", "")
    names = subprocess.run([scontrol, "show", "hostnames", nodelist], capture_output=True,
                           text=True, timeout=30).stdout.split()
    if not names:
        raise ArenaError(f"cannot read the nodes of Slurm job {job} (SLURM_JOB_NODELIST="
                         f"'{nodelist}')")
    tasks = os.environ.get("SLURM_NTASKS", "")
    spec = spec_of(Path(os.environ["SLURM_CONF"])) if os.environ.get("SLURM_CONF") else None
    label = f"slurm:job{job}" + (f" on {spec.label()}" if spec else "")
    return Slurm(tuple(Node(n, n) for n in names), Path(srun), label,
                 int(tasks) if tasks.isdigit() else len(names), spec is not None)
