"""Launchers: each builds the command that starts a job's ranks from what the job's family
supplies, as ReFrame's launchers do, and runs nothing. local.py: this machine; hosts.py: nodes
reached over ssh (a hosts file, an emulated cluster); srun.py: a Slurm allocation."""

from __future__ import annotations

from typing import Protocol

from ..cluster.placement import Placement
from ..impls.base import Family, Implementation, Launch
from .hosts import HostsLauncher
from .local import LocalLauncher
from .srun import SrunLauncher


class Launcher(Protocol):
    def command(self, family: Family, impl: Implementation, np: int, binding: str,
                as_root: bool) -> Launch:
        """The launcher argv, env and binding that start np ranks of impl, binding 'core' or
        'none' where they run on this machine; ArenaError where the family cannot run there."""
        ...

    def over_ssh(self) -> Placement | None:
        """The placement whose nodes the family's daemons reach over ssh; None where they
        start on this machine only."""
        ...


def launcher_for(placement: Placement | None) -> Launcher:
    """The launcher for ranks placed there (None: this machine)."""
    if placement is None:
        return LocalLauncher()
    return SrunLauncher(placement) if placement.srun else HostsLauncher(placement)
