"""`mpiarena cluster up|status|down`: keep an emulated cluster up across runs."""

from __future__ import annotations

import time

import click
from rich.console import Console
from rich.table import Table

from ..cluster import emulated, netns
from ..cluster.spec import parse
from ..errors import ArenaError

console = Console(highlight=False)


@click.group("cluster")
def cluster_cmd() -> None:
    """Bring an emulated cluster up, see it, take it down."""


@cluster_cmd.command("up")
@click.argument("spec", default="emulated:nodes=2")
@click.option("--name", default="default", show_default=True, help="what runs call it")
def up_cmd(spec: str, name: str) -> None:
    """Emulate SPEC, e.g. emulated:nodes=4,link=100mbit,mtu=1500 or emulated:fddi,nodes=8."""
    started = time.monotonic()
    cluster = emulated.up(parse(spec), name, keep=True)
    console.print(f"cluster '{name}' is up in {time.monotonic() - started:.2f} s: "
                  f"{cluster.label}; run with --cluster {name}")


@cluster_cmd.command("status")
def status_cmd() -> None:
    """Every emulated cluster: nodes, addresses, link shaping."""
    table = Table("cluster", "node", "address", "mtu", "shaping (node side)")
    for name in emulated.names():
        cluster = emulated.load(name)
        if cluster is None:
            table.add_row(name, "-", "-", "-", "left over: 'mpiarena cluster down --all'")
            continue
        for i, node in enumerate(cluster.nodes):
            table.add_row(name if i == 0 else "", node.name, node.address,
                          str(netns.mtu(cluster.ns(i), "eth0")),
                          "rate" + netns.qdisc(cluster.ns(i), "eth0").split(" rate", 1)[-1])
    console.print(table if table.rows else "no emulated cluster is up")


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
