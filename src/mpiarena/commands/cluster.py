"""`mpiarena cluster up|status|env|down`: keep an emulated cluster (and its Slurm) up across
runs."""

from __future__ import annotations

import time

import click
from rich.console import Console
from rich.table import Table

from ..base.errors import ArenaError
from ..cluster import emulated, emulated_slurm, netns
from ..cluster.spec import parse
from ..system.procs import alive
from . import sweeping

console = Console(highlight=False)


@click.group("cluster")
def cluster_cmd() -> None:
    """Bring an emulated cluster up, see it, take it down."""


@cluster_cmd.command("up")
@click.argument("spec", default="emulated:nodes=2")
@click.option("--name", default="default", show_default=True, help="what runs call it")
@click.option("--slurm", is_flag=True, help="also a Slurm: slurmctld on the first node, a "
              "slurmd on every node, reached from here ('mpiarena cluster env NAME')")
def up_cmd(spec: str, name: str, slurm: bool) -> None:
    """Emulate SPEC, e.g. emulated:nodes=4,link=100mbit,mtu=1500 or emulated:fddi,nodes=8."""
    sweeping.sweep()  # and the watchdog: killed before it is up, the cluster goes in seconds
    started = time.monotonic()
    cluster = emulated_slurm.up(parse(spec), name) if slurm else \
        emulated.up(parse(spec), name, keep=True)
    took = f"cluster '{name}' is up in {time.monotonic() - started:.2f} s: {cluster.label}"
    if slurm:
        console.print(f"{took}, Slurm on {cluster.nodes[0].name}; in your shell: "
                      f"eval $(mpiarena cluster env {name}), then e.g. 'salloc -N "
                      f"{len(cluster.nodes)} mpiarena run --slurm ...'")
    else:
        console.print(f"{took}; run with --cluster {name}")


@cluster_cmd.command("status")
def status_cmd() -> None:
    """Every emulated cluster: nodes, addresses, link shaping."""
    table = Table("cluster", "node", "address", "mtu", "shaping (node side)", "Slurm")
    for name in emulated.names():
        cluster = emulated.load(name)
        if cluster is None:
            table.add_row(name, "-", "-", "-", "left over: 'mpiarena cluster down --all'", "-")
            continue
        try:
            rows = [(node.name, node.address, str(netns.mtu(cluster.ns(i), "eth0")),
                     "rate" + netns.qdisc(cluster.ns(i), "eth0").split(" rate", 1)[-1],
                     _daemons(cluster, i)) for i, node in enumerate(cluster.nodes)]
        except ArenaError:  # its links went, or are not there yet, as it was read
            table.add_row(name, "-", "-", "-", "changing: another mpiarena is making or "
                          "tearing it down", "-")
            continue
        for i, row in enumerate(rows):
            table.add_row(name if i == 0 else "", *row)
    console.print(table if table.rows else "no emulated cluster is up")


def _daemons(cluster: emulated.Emulated, i: int) -> str:
    """The Slurm daemons of node i (the head's munged and slurmctld too), each with its pid."""
    d = cluster.slurm
    if d is None:
        return "-"
    pids = [("slurmd", d.slurmd[i])] if i < len(d.slurmd) else []
    if i == 0:
        pids = [("munged", d.munged), ("slurmctld", d.slurmctld), *pids]
    return ", ".join(f"{name} {pid}" + ("" if alive(pid) else " (gone)") for name, pid in pids)


@cluster_cmd.command("env")
@click.argument("name", default="default")
def env_cmd(name: str) -> None:
    """The shell exports that point salloc, srun and sbatch at cluster NAME's Slurm (default:
    'default'): eval $(mpiarena cluster env NAME)."""
    for line in emulated_slurm.env_lines(name):
        click.echo(line)


@cluster_cmd.command("down")
@click.argument("name", required=False)
@click.option("--all", "everything", is_flag=True, help="also leftovers of crashed runs (not "
              "the clusters of runs still going)")
def down_cmd(name: str | None, everything: bool) -> None:
    """Tear down cluster NAME (default: 'default'), or every one with --all."""
    targets = emulated.names() if everything else [name or "default"]
    if not everything and targets[0] not in emulated.names():
        raise ArenaError(f"no emulated cluster named '{targets[0]}' (see 'mpiarena cluster "
                         "status')")
    running = [t for t in targets if everything and emulated.in_use(t)]
    for target in targets:
        if target not in running:
            emulated.teardown(target)
    removed = len(targets) - len(running)
    console.print(f"removed {removed} cluster(s)" if removed else "nothing to remove")
    if running:
        console.print(f"left {', '.join(running)}: made by an mpiarena that still runs")
