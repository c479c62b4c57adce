"""A Slurm allocation: srun starts the ranks with the PMI the family names, or the family's own
launcher finds the allocation itself; a family with neither (started by its own daemons or by a
fork) runs as on this machine, on a one-node allocation only. Ranks run as the allocation's
owner; daemons start here."""

from __future__ import annotations

from dataclasses import dataclass

from ..base.errors import ArenaError
from ..cluster.placement import Placement
from ..impls.base import Family, Implementation, Launch


@dataclass(frozen=True)
class SrunLauncher:
    placement: Placement

    def command(self, family: Family, impl: Implementation, np: int, binding: str,
                as_root: bool) -> Launch:
        if family.srun_pmi:
            return self._srun(family.srun_pmi, family.network_env(impl, self.placement)
                              if self.placement.one_kernel else {})
        own = family.slurm_launch(impl, self.placement)
        if own is not None:
            return own
        if why := refusal(family, impl, self.placement):
            raise ArenaError(why)
        return family.launch(impl, sum(self.placement.ranks), "none", as_root=False)

    def _srun(self, pmi: str, env: dict[str, str]) -> Launch:
        """srun for the placement's ranks in the current allocation, on as many of its nodes
        as the placement uses (ranks spread one per node first, as over ssh: --np 2 in a
        3-node allocation runs on two nodes), filled in turn; stdin to rank 0 only; steps
        overlap, since every variant of a round keeps its job alive at once."""
        p = self.placement
        assert p.srun is not None
        return Launch([str(p.srun), "-N", str(len(p.used)), "-n", str(sum(p.ranks)),
                       f"--mpi={pmi}", "--input=0", "--kill-on-bad-exit=1", "--cpu-bind=none",
                       "--overlap"], env, binding="none")

    def over_ssh(self) -> Placement | None:
        return None


def refusal(family: Family, impl: Implementation, placement: Placement) -> str | None:
    """Why the family's ranks cannot start on the placement's nodes of an allocation: neither
    srun nor its own launcher starts them there, and they span nodes (None: they can start)."""
    if family.srun_pmi or family.slurm_launch(impl, placement) is not None or \
            len(placement.used) <= 1:
        return None
    return (f"{family.title} under Slurm needs ssh between the nodes (srun starts no "
            f"{family.title} ranks): give the allocation's nodes with --hosts instead, or "
            "allocate one node")
