"""Intel MPI: hydra's mpiexec; pinning through I_MPI_PIN."""

from __future__ import annotations

import re
from pathlib import Path

from ..cluster.placement import Placement
from .base import Daemonless, Implementation, Launch


class IntelMpi(Daemonless):
    name = "impi"
    order = 30
    kernel_modules = ("mod_mpi.c", "apps.c")
    install_hint = "mpiarena install impi"
    wrapper_pattern = re.compile(r"Intel\(R\) MPI Library (?:for Linux\* OS, Version )?(\d[\w.]*)")
    # impi-devel pins impi-rt to its own version, so it goes first (it decides the version)
    pypi_distributions = ("impi-devel", "impi-rt")
    pmpi = True

    def run_env(self, prefix: Path) -> dict[str, str]:
        """Intel's mpicc has an unsubstituted prefix: it needs I_MPI_ROOT."""
        return {"I_MPI_ROOT": str(prefix)}

    def launch(self, impl: Implementation, np: int, binding: str, as_root: bool) -> Launch:
        return Launch([str(impl.launcher), "-n", str(np)],
                      {"I_MPI_PIN": "1" if binding == "core" else "0"})

    def cluster_launch(self, impl: Implementation, placement: Placement) -> Launch:
        if placement.srun:  # hydra finds the allocation and starts its proxies with srun
            return Launch([str(impl.launcher), "-n", str(sum(placement.ranks))],
                          {"I_MPI_PIN": "0", "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS": "--overlap"},
                          binding="none")
        # Intel's -hosts takes no counts: -ppn fills each node in turn, as spread() placed them
        return Launch([str(impl.launcher), "-bootstrap", "ssh", "-bootstrap-exec",
                       str(placement.rsh), "-hosts", ",".join(n.name for n in placement.used),
                       "-ppn", str(max(placement.ranks)), "-n", str(sum(placement.ranks))],
                      {"I_MPI_PIN": "0", "I_MPI_FABRICS": "shm:ofi", "FI_PROVIDER": "tcp",
                       "FI_TCP_IFACE": placement.iface, "I_MPI_HYDRA_IFACE": placement.iface},
                      binding="none")

    def wrapper_flags(self, impl: Implementation) -> list[str]:
        return ["-show"]


FAMILY = IntelMpi()
