"""What the commands share: the consoles, the --db, --impl, -o and where options, options
grouped into one record, the parsers of sizes, benchmarks and rank counts, and the sweep of what
a crashed mpiarena left."""

from __future__ import annotations

import functools
import math
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TypeVar, cast

import click
from rich.console import Console

from .. import paths
from ..cluster import sbatch
from ..cluster.topology import Where
from ..errors import ArenaError
from ..records import VariantRecord
from ..results import RunData, load
from ..runner import watchdog
from ..runner.cleanup import sweep_stale
from ..sizes import parse_sizes
from ..store import Store

# piped: COLUMNS where set, else 150 columns (rich's 80 would break most lines)
console = Console(highlight=False, width=None if sys.stdout.isatty() or "COLUMNS" in os.environ
                  else 150)
err = Console(stderr=True, highlight=False,
              width=None if sys.stderr.isatty() or "COLUMNS" in os.environ else 150)
DB_HELP = "results store (SQLite file)"

F = TypeVar("F", bound=Callable[..., Any])


def db_option(f: F) -> F:
    """--db FILE: the results store, mpiarena.db by default."""
    return click.option("--db", default="mpiarena.db", show_default=True, help=DB_HELP)(f)


def impl_option(help: str, required: bool = False) -> Callable[[F], F]:
    """--impl (repeatable) into `impl_specs`: implementation ids or NAME=/prefix."""
    return click.option("--impl", "impl_specs", multiple=True, required=required, help=help)


def output_option(help: str, directory: bool = False, **kwargs: Any) -> Callable[[F], F]:
    """-o/--output: a file, or with `directory` a directory."""
    kind = click.Path(file_okay=False) if directory else click.Path(dir_okay=False)
    return click.option("-o", "--output", type=kind, help=help, **kwargs)


def grouped(into: str, build: Callable[..., Any],
            *decorators: Callable[[Callable[..., Any]], Callable[..., Any]]) -> Callable[[F], F]:
    """Options (click.option decorators, in the order they show) whose values reach the command
    as one record: parameter `into` = build(their values by parameter name)."""
    def probe() -> None: ...
    for decorate in reversed(decorators):
        decorate(probe)
    params: list[click.Parameter] = vars(probe)["__click_params__"]
    names = [p.name for p in params if p.name]

    def wrap(f: F) -> F:
        @functools.wraps(f)
        def command(*args: Any, **kwargs: Any) -> Any:
            kwargs[into] = build(**{n: kwargs.pop(n) for n in names})
            return f(*args, **kwargs)

        vars(command)["__click_params__"] = [*vars(f).get("__click_params__", []), *params]
        return cast(F, command)
    return wrap


def where_options(cluster: str, hosts: str, slurm: str) -> Callable[[F], F]:
    """--cluster, --hosts and --slurm (with these helps) into `where`."""
    return grouped("where", Where,
                   click.option("--cluster", help=cluster),
                   click.option("--hosts", type=click.Path(dir_okay=False), help=hosts),
                   click.option("--slurm", is_flag=True, help=slurm))


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
            raise ArenaError("--partition, --time, --nodes, --no-wait and --cancel-on-interrupt "
                             "go with --sbatch; add --sbatch to submit the run as a batch job")

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
SBATCH_VALUED = ("--partition", "--time", "--nodes")


def sbatch_options(what: str) -> Callable[[F], F]:
    """--sbatch and its Slurm requests into `submit`; `what` names what the job runs."""
    return grouped(
        "submit", Submit,
        click.option("--sbatch", is_flag=True, help=f"submit {what} as a Slurm batch job (the "
                     "same command with --slurm, its script kept beside the store), follow it "
                     "and show what it measured"),
        click.option("--partition", help="with --sbatch: the partition (default: the cluster's)"),
        click.option("--time", help="with --sbatch: the job's time limit, e.g. 30 (minutes), "
                     "1:30:00"),
        click.option("--nodes", help="with --sbatch: how many nodes, N or MIN-MAX"),
        click.option("--no-wait", is_flag=True, help="with --sbatch: print the job id and "
                     "return"),
        click.option("--cancel-on-interrupt", is_flag=True, help="with --sbatch: Ctrl-C "
                     "cancels the job (default: it keeps running)"))


def store(db: str) -> Store:
    """The store in file `db`."""
    return Store(Path(db))


def existing_store(db: str) -> Store:
    """The store in file `db`, which must exist: a command that only reads never makes one."""
    if not Path(db).exists():
        raise ArenaError(f"no store at {db}; give --db FILE or start one with 'mpiarena run'")
    return store(db)


def existing_run(db: str, run: str) -> tuple[RunData, list[VariantRecord]]:
    """Run `run` of the store `db`, which must exist, and its variants' rows."""
    opened = existing_store(db)
    run_id = opened.resolve(run)
    return load(opened, run_id), opened.variants(run_id)


def check_baseline(data: RunData, baseline: str | None) -> None:
    """--baseline, when given, must name a variant of the run."""
    if baseline is not None and baseline not in data.variants:
        raise ArenaError(f"unknown baseline '{baseline}'; run {data.run_id} has "
                         f"{', '.join(data.variants) or 'no variants'}")


def write_report(path: Path, text: str) -> None:
    """Write a report file; a path that cannot be written is one line naming -o."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as e:
        raise ArenaError(f"cannot write {path}: {e.strerror}; choose another -o FILE") from e
    click.echo(f"wrote {path} ({len(text.encode()) / 1024:.0f} KiB)")


class Seconds(click.ParamType[float]):
    """A finite number of seconds above 0."""

    name = "seconds"

    def convert(self, value: str | float, param: click.Parameter | None,
                ctx: click.Context | None) -> float:
        try:
            seconds = float(value)
        except ValueError:
            seconds = math.nan
        if not 0 < seconds < math.inf:
            self.fail(f"'{value}' is not a finite number of seconds above 0; e.g. "
                      f"{param.opts[0] if param else ''} 60", param, ctx)
        return seconds


SECONDS = Seconds()


class Duration(click.ParamType[float]):
    """A time budget: 180, 180s, 3m or 1h; 0 or off for none."""

    name = "duration"

    def convert(self, value: str | float, param: click.Parameter | None,
                ctx: click.Context | None) -> float:
        text = str(value).strip().lower()
        if text in ("0", "off", "none"):
            return 0.0
        scale = {"s": 1, "m": 60, "h": 3600}.get(text[-1:], 1)
        try:
            seconds = float(text.rstrip("smh")) * scale
        except ValueError:
            seconds = math.nan
        if not 0 < seconds < math.inf:
            self.fail(f"'{value}' is not a time budget; e.g. 3m, 180s, or off", param, ctx)
        return seconds


DURATION = Duration()


def sizes(text: str | None, perturb: bool) -> tuple[int, ...] | None:
    """--sizes: message sizes, or None when not given."""
    return None if text is None else tuple(parse_sizes(text, perturb))


def benchmarks(text: str | None) -> tuple[str, ...] | None:
    """--bench: comma-separated benchmark names, or None when not given."""
    if text is None:
        return None
    names = tuple(b.strip() for b in text.split(","))
    if "" in names:
        raise ArenaError(f"--bench '{text}' has an empty benchmark name; give a comma-separated "
                         "list, e.g. --bench pingpong,bcast")
    return names


def nps(text: str | None) -> tuple[int, ...] | None:
    """--np: comma-separated rank counts, or None when not given."""
    if text is None:
        return None
    try:
        counts = tuple(int(x) for x in text.split(","))
    except ValueError as e:
        raise ArenaError(f"bad rank count list '{text}'; use e.g. --np 2,4") from e
    if min(counts) < 1:
        raise ArenaError(f"rank counts must be 1 or more, got '{text}'; use e.g. --np 2,4")
    return counts


def sweep() -> None:
    """Clear what an earlier mpiarena that crashed left running, and start the watchdog that
    clears what this one starts should it be killed outright."""
    if killed := sweep_stale(paths.scratch_dir()):
        err.print(f"cleaned up {killed} processes left by an earlier mpiarena that crashed")
    watchdog.guard()


def on_sigterm(*_: object) -> NoReturn:
    """SIGTERM handler: stop as cleanly as Ctrl-C."""
    raise KeyboardInterrupt
