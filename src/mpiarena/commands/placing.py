"""Where the ranks run: --cluster, --hosts and --slurm into one Where; --sbatch and its Slurm
requests into one Submit."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import click

from ..base.errors import ArenaError
from ..cluster import sbatch
from ..cluster.topology import Where
from .durations import SLURM_TIME_TYPE
from .grouping import F, grouped
from .renames import renamed


def where_options(cluster: str, hosts: str, slurm: str) -> Callable[[F], F]:
    """--cluster, --hosts and --slurm (with these helps) into `where`."""
    return grouped("where", Where,
                   click.option("--cluster", help=cluster),
                   click.option("--hosts", type=click.Path(dir_okay=False), help=hosts),
                   click.option("--slurm", is_flag=True, help=slurm), title="Where ranks run")


@dataclass(frozen=True)
class Submit:
    """--sbatch and what it asks of Slurm (commands/batch.py submits); False: measure now."""

    sbatch: bool = False
    partition: str | None = None
    time: str | None = None  # Slurm's format: minutes, M:S, H:M:S, D-H:M...
    nodes: str | None = None  # N or MIN-MAX
    no_wait: bool = False
    cancel_on_interrupt: bool = False

    def __post_init__(self) -> None:
        if not self.sbatch and (self.partition or self.time or self.nodes or self.no_wait
                                or self.cancel_on_interrupt):
            raise ArenaError("--partition, --sbatch-time, --nodes, --no-wait and "
                             "--cancel-on-interrupt go with --sbatch; add --sbatch to submit the "
                             "run as a batch job")

    def check(self, where: Where) -> None:
        """--sbatch runs in the job's own allocation, not where --cluster/--hosts/--slurm say,
        and needs Slurm's commands."""
        if not self.sbatch:
            return
        if where.cluster or where.hosts or where.slurm:
            raise ArenaError("--sbatch runs the measurement inside the job's allocation (as "
                             "--slurm): leave out --cluster, --hosts and --slurm")
        for name in ("sbatch", "squeue", "scontrol"):
            sbatch.tool(name)


SBATCH_FLAGS = ("--sbatch", "--no-wait", "--cancel-on-interrupt")
SBATCH_VALUED = ("--partition", "--sbatch-time", "--time", "--nodes")  # --time: the old one


def sbatch_options(what: str) -> Callable[[F], F]:
    """--sbatch and its Slurm requests into `submit`; `what` names what the job runs."""
    return grouped(
        "submit", Submit,
        click.option("--sbatch", is_flag=True, help=f"submit {what} as a Slurm batch job (the "
                     "same command with --slurm, its script kept beside the store), follow it "
                     "and show what it measured"),
        click.option("--partition", help="with --sbatch: the partition (default: the cluster's)"),
        click.option("--sbatch-time", "time", type=SLURM_TIME_TYPE, help="with --sbatch: "
                     "Slurm's time limit of the job, as sbatch's --time takes it (a bare number "
                     "is minutes, M:S, H:M:S, D-H) or a duration with its unit: 90s, 30m, 1h"),
        renamed("--time", "--sbatch-time", "time", type=SLURM_TIME_TYPE),
        click.option("--nodes", help="with --sbatch: how many nodes, N or MIN-MAX"),
        click.option("--no-wait", is_flag=True, help="with --sbatch: print the job id and "
                     "return"),
        click.option("--cancel-on-interrupt", is_flag=True, help="with --sbatch: Ctrl-C "
                     "cancels the job (default: it keeps running)"), title="As a Slurm batch job")
