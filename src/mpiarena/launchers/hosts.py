"""Nodes reached over ssh: the family's launcher, started on the head node, told the hosts and
the remote-shell agent. A hosts file and an emulated cluster differ only in that agent (an
emulated one's enters the nodes' namespaces) and in how a command gets onto the head
(Placement.on_head), so one launcher serves both."""

from __future__ import annotations

from dataclasses import dataclass

from ..cluster.placement import Placement
from ..impls.base import Family, Implementation, Launch


@dataclass(frozen=True)
class HostsLauncher:
    placement: Placement

    def command(self, family: Family, impl: Implementation, np: int, binding: str,
                as_root: bool) -> Launch:
        return family.hosts_launch(impl, self.placement)

    def over_ssh(self) -> Placement | None:
        return self.placement
