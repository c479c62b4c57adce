"""The machine floor: what this machine's cores allow two processes to pass, measured beside
the libraries (kernels/mod_floor.c). A reference for their figures, never a contestant."""

from __future__ import annotations

from collections.abc import Mapping

from ..base import core_env
from ..cluster.placement import Placement
from ..model.whatran import Cvar
from .base import CoreOnly, Implementation, Launch


class Floor(CoreOnly):
    name = "floor"
    title = "the machine floor"
    order = 70
    floor = True
    mpi = False
    kernel_modules = ("mod_floor.c", "ext_none.c", "apps.c")
    benchmarks = ("pingpong", "sendrecv", "reduce", "allreduce")

    def hosts_launch(self, impl: Implementation, placement: Placement) -> Launch:
        """Both processes on the head node: its own floor, not the cluster's (a cluster run
        leaves the floor out: commands/run.py)."""
        return Launch([], {core_env.NP: "2", core_env.BIND: "none"}, binding="none")

    def transport(self, impl: Implementation, cvars: tuple[Cvar, ...] | None, version: str,
                  env: Mapping[str, str], said: str = "") -> tuple[str, str]:
        """One shared mapping between two forked processes (kernels/mod_floor.c)."""
        return ("shared memory: one cache line, or one copy by the receiver",
                "the machine floor's own module (mod_floor.c)")


FAMILY = Floor()
