"""Intel MPI: hydra's mpiexec; pinning through I_MPI_PIN."""

from __future__ import annotations

from ..cluster.placement import Placement
from .base import Daemonless, Implementation, Launch


class IntelMpi(Daemonless):
    name = "impi"
    kernel_modules = ("mod_mpi.c", "apps.c")
    install_hint = "mpiarena install impi"

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
