"""MPICH: hydra's mpiexec, binding with -bind-to."""

from __future__ import annotations

import re

from ..cluster.placement import Placement
from .base import Daemonless, Implementation, Launch, srun

# UCX (Debian's MPICH) and libfabric (PyPI's) would find a peer's shared memory across network
# namespaces: only TCP on the cluster network between nodes (MPICH's own shm stays per node)
NETWORK_ONLY = {"UCX_TLS": "tcp,self", "FI_PROVIDER": "tcp"}


class Mpich(Daemonless):
    name = "mpich"
    order = 10
    kernel_modules = ("mod_mpi.c", "apps.c")
    install_hint = "apt-get install mpich libmpich-dev  (or: mpiarena install mpich)"
    wrapper_pattern = re.compile(r"for MPICH version (\S+)")
    debian = (("/usr/bin/mpicc.mpich", "/usr/bin/mpiexec.mpich"),)
    pypi_distributions = ("mpich",)  # finds everything relative to itself
    pmpi = True

    def launch(self, impl: Implementation, np: int, binding: str, as_root: bool) -> Launch:
        return Launch([str(impl.launcher), "-n", str(np), "-bind-to", binding])

    def cluster_launch(self, impl: Implementation, placement: Placement) -> Launch:
        if placement.srun:
            return srun(placement, "pmi2")
        return Launch([str(impl.launcher), "-launcher", "ssh", "-launcher-exec",
                       str(placement.rsh), "-hosts", placement.host_list(), "-n",
                       str(sum(placement.ranks)), "-bind-to", "none"],
                      {**NETWORK_ONLY, "UCX_NET_DEVICES": placement.iface,
                       "FI_TCP_IFACE": placement.iface}, binding="none")

    def wrapper_flags(self, impl: Implementation) -> list[str]:
        return ["-show"]


FAMILY = Mpich()
