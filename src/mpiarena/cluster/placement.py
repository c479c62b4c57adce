"""The answer a topology gives the launchers: nodes, ranks per node, remote shell, head entry."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Node:
    name: str  # what launchers and /etc/hosts call it
    address: str  # its IPv4 address on the cluster network


@dataclass(frozen=True)
class Placement:
    """np ranks spread over nodes, the first node the head where launchers and daemons start."""

    nodes: tuple[Node, ...]
    ranks: tuple[int, ...]  # ranks on each node, same order
    rsh: Path  # remote-shell agent: `rsh HOST COMMAND...`, as ssh
    enter: tuple[str, ...] = ()  # nsenter options that put a command on the head, rank user
    iface: str = "eth0"  # the interface of the cluster network on every node
    label: str = ""  # for the store and reports, e.g. emulated:nodes=4,link=100mbit,mtu=1500
    srun: Path | None = None  # inside a Slurm allocation: ranks start with srun
    one_kernel: bool = False  # nodes emulated on one machine: shared memory reaches across

    @property
    def used(self) -> tuple[Node, ...]:
        return tuple(n for n, r in zip(self.nodes, self.ranks, strict=True) if r)

    def host_list(self) -> str:
        """n0:2,n1:2, the form hydra and Open MPI take."""
        return ",".join(f"{n.name}:{r}" for n, r in zip(self.nodes, self.ranks, strict=True)
                        if r)

    def on_head(self, argv: list[str], cwd: Path) -> list[str]:
        """argv run in cwd on the head node as the rank user (as is, where the head is here)."""
        return [*self.enter, f"--wd={cwd}", "--", *argv] if self.enter else argv


def spread(nodes: tuple[Node, ...], np: int,
           slots: tuple[int, ...] | None = None) -> tuple[int, ...]:
    """Ranks per node: round-robin one at a time (at most slots[i] on node i while any is free)."""
    counts = [0] * len(nodes)
    caps = slots or tuple(np for _ in nodes)
    i = 0
    for _ in range(np):
        tried = 0
        while counts[i] >= caps[i] and tried < len(nodes):
            i, tried = (i + 1) % len(nodes), tried + 1
        counts[i] += 1
        i = (i + 1) % len(nodes)
    return tuple(counts)
