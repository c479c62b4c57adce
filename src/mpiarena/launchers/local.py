"""This machine: the family's own launcher, with the binding asked for."""

from __future__ import annotations

from ..cluster.placement import Placement
from ..impls.base import Family, Implementation, Launch


class LocalLauncher:
    def command(self, family: Family, impl: Implementation, np: int, binding: str,
                as_root: bool) -> Launch:
        return family.launch(impl, np, binding, as_root)

    def over_ssh(self) -> Placement | None:
        return None
