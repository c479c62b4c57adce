"""Raw TCP: the reference every library is held against; two processes, one socket."""

from __future__ import annotations

from collections.abc import Mapping

from ..base import core_env
from ..cluster.placement import Placement
from ..model.whatran import Cvar
from .base import CoreOnly, Implementation, Launch


class Tcp(CoreOnly):
    name = "tcp"
    title = "raw TCP"
    order = 60
    reference = True
    mpi = False
    kernel_modules = ("mod_tcp.c", "ext_none.c", "apps.c")

    def hosts_launch(self, impl: Implementation, placement: Placement) -> Launch:
        used = placement.used
        env = {core_env.NP: "2", core_env.BIND: "none", core_env.TCP_BIND: used[0].address}
        if len(used) > 1:  # else rank 1 is forked on the head, as on one machine
            env.update({core_env.TCP_RSH: str(placement.rsh), core_env.TCP_PEER: used[-1].name})
        return Launch([], env, binding="none")


    def transport(self, impl: Implementation, cvars: tuple[Cvar, ...] | None, version: str,
                  env: Mapping[str, str], said: str = "") -> tuple[str, str]:
        """The core's own socket (kernels/mod_tcp.c): loopback unless a cluster node's address
        is bound."""
        where = f"TCP on {env[core_env.TCP_BIND]}" if env.get(core_env.TCP_BIND) else \
            "loopback TCP"
        return f"{where}, TCP_NODELAY", "the core's own socket (mod_tcp.c)"


FAMILY = Tcp()
