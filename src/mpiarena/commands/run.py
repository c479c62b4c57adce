"""`mpiarena run`: build the cores, run a suite, store and summarise."""

from __future__ import annotations

import shlex
import socket
import sys
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from ..analysis.estimate import estimate
from ..base import users
from ..base.errors import ArenaError
from ..base.records import Datatype
from ..base.status import CellStatus, RunStatus
from ..cluster.topology import Where
from ..report import dry_run
from ..report.renderers import Format, RenderOptions, render
from ..report.source import RunSource
from ..runner.benchmark_asks import BenchmarkAsk, Measurement, Selection
from ..store import Store
from ..store.results import RunData
from . import grouping, placing, stores, suite_options, sweeping
from .batch import Submitted, run_batch
from .consoles import console, err
from .durations import DURATION, DURATION_HELP
from .exit_status import Exit
from .placing import Submit
from .stores import db_option
from .suite_options import impl_option

if TYPE_CHECKING:
    from ..platform.plan import Plan
    from ..runner.session import RunContext


def _fraction(text: str | None) -> float | None:
    """'2%' or '0.02' -> 0.02."""
    if text is None:
        return None
    try:
        value = float(text.rstrip("%")) / (100 if text.endswith("%") else 1)
    except ValueError as e:
        raise ArenaError(f"bad --precision '{text}'; use e.g. 2%") from e
    if not 0 < value < 1:
        raise ArenaError(f"--precision must lie between 0% and 100%, got '{text}'")
    return value


def parse_selection(suite: str, impl_specs: tuple[str, ...], bench: str | None,
                    nps: tuple[int, ...] | None, sizes: str | None, perturb: bool) -> Selection:
    """--suite, --impl, --bench, --np, --sizes and --perturb as a selection."""
    return Selection(suite, impl_specs, suite_options.benchmarks(bench), nps,
                     suite_options.sizes(sizes, perturb))


def parse_measurement(precision: str | None, datatype: str | None,
                      **given: Any) -> Measurement:
    """How to measure, from the options of the same names."""
    return Measurement(precision=_fraction(precision),
                       datatype=Datatype(datatype) if datatype else None, **given)


def _say(line: str) -> None:
    """A note: one line on stderr, as it is."""
    err.print(line, soft_wrap=True, markup=False)


def _failed_cells(data: RunData) -> int:
    """How many cells of a variant no launch measured: failed, invalid or skipped."""
    lost = (CellStatus.FAILED, CellStatus.INVALID, CellStatus.SKIPPED)
    return sum(g.status in lost for cell in data.cells.values() for g in cell.values())


@dataclass(frozen=True)
class Output:
    """What the summary adds: tables per benchmark, the method in full."""

    tables: bool
    method: bool


def _here_only(where: Where, submit: Submit) -> None:
    """--dry-run plans on this machine: one line if the run would go elsewhere."""
    if submit.sbatch or where.cluster or where.hosts or where.slurm:
        raise ArenaError("--dry-run plans a run on this machine: leave out --cluster, --hosts, "
                         "--slurm and --sbatch")


def _print_plan(plan: Plan, db: str) -> None:
    """--dry-run: the plan and what it would take, from earlier runs on this machine."""
    runs = [run for run, _ in stores.store(db).runs()] if stores.exists(db) else []
    for line in dry_run.lines(plan, estimate(plan, runs, socket.gethostname()), db):
        console.print(line, soft_wrap=True, markup=False)


@click.command("run", cls=grouping.Sectioned)
@grouping.grouped(
    "selection", parse_selection,
    suite_options.SUITE,
    impl_option("ids to compare, or NAME=/prefix"),
    suite_options.BENCH,
    suite_options.NPS,
    suite_options.SIZES,
    click.option("--perturb", is_flag=True, help="add NetPIPE's size-3 and size+3 neighbours"),
    title="What to run")
@grouping.grouped(
    "measurement", parse_measurement,
    click.option("--observations", type=int, help="observations per cell in each launch"),
    suite_options.LAUNCHES,
    click.option("--off-cache", is_flag=True,
                 help="rotate buffers so caches do not flatter sizes"),
    click.option("--validate", is_flag=True, help="check received data after each cell"),
    suite_options.TIMEOUT,
    click.option("--precision", help="add launches of each cell until its figure's 95% CI "
                 "(over launches) is within this, e.g. 2%"),
    click.option("--max-time", default="30s", show_default=True, type=DURATION,
                 help=f"with --precision: how long one cell may take in all ({DURATION_HELP})"),
    suite_options.BUDGET,
    click.option("--wait-quiet", type=DURATION, help="before each launch, wait up to this long "
                 f"for other processes to leave the machine quiet ({DURATION_HELP})"),
    suite_options.SEED,
    click.option("--sync", help="how collectives are timed: loop, barrier or window (default: "
                 "the suite's, else window; barrier where a family cannot do window)"),
    click.option("--datatype", type=click.Choice([t.value for t in Datatype]),
                 help="element type of the sums (reduce, allreduce, scan, ireduce, accumulate..."
                 ") and of the datatype benchmarks' blocks; sizes stay bytes (default: int "
                 "sums, MPI_BYTE blocks)"), title="How to measure")
@placing.where_options(
    cluster="emulated:nodes=4,link=100mbit,mtu=1500, a profile "
    "(emulated:fast-ethernet|fddi|gige), or the name of one kept up",
    hosts="a real cluster: one host per line (this machine first), optional slots=N",
    slurm="inside a Slurm allocation (salloc/sbatch): ranks start with srun")
@placing.sbatch_options("the run")
@grouping.grouped(
    "output", Output,
    click.option("--tables", is_flag=True, help="a table per benchmark with its verdicts, "
                 "after the scoreboard"),
    click.option("--method", is_flag=True, help="the method and the verdict rule in full"),
    title="What the summary adds")
@click.option("--dry-run", is_flag=True, help="print the plan (variants, cells, launches, "
              "budget) and an estimate of its time from earlier runs on this machine; measure "
              "nothing")
@db_option
def run_cmd(selection: Selection, measurement: Measurement, where: Where, submit: Submit,
            output: Output, dry_run: bool, db: str) -> None:
    """Build the core against each implementation, run the suite, store and summarise."""
    submit.check(where)
    # here, not at the top: ~30 ms more start-up for every command
    from ..runner import benchmark
    from ..runner.session import RunContext

    suite_named = click.get_current_context().get_parameter_source("suite") == \
        ParameterSource.COMMANDLINE
    ask = BenchmarkAsk(selection, measurement, where, suite_named, bool(submit.sbatch))
    chosen = benchmark.choose(ask, _say)
    if dry_run:
        _here_only(where, submit)
        benchmark.say_chosen(chosen, _say)
        _print_plan(benchmark.dry_plan(ask, chosen, _say), db)
        return

    def summarise(store: Store, run_id: int) -> RunData:
        source = RunSource(store, run_id)
        sys.stdout.write(render(source, Format.TERMINAL, RenderOptions(
            console, tables=output.tables, method=output.method)))
        return source.data

    def stored(done: Submitted) -> None:
        if (run := done.run_id()) is not None:
            summarise(stores.store(db), run)
        else:
            err.print(f"job {done.job} stored no run in {db}", markup=False)

    if submit.sbatch:  # the job runs this command with --slurm in its allocation
        run_batch("run", submit, max(chosen.suite.nps), db, stored)
        return
    sweeping.sweep()

    @cache
    def context() -> RunContext:
        """The store opened, and who ranks run as (Slurm: the allocation's owner)."""
        return RunContext(stores.store(db), None if where.slurm else users.for_ranks(),
                          shlex.join(["mpiarena", *sys.argv[1:]]), err,
                          lambda line: err.print(f"[yellow]{line}[/]"))

    outcome = benchmark.run_benchmark(ask, chosen, context, _say)
    data = summarise(context().store, outcome.run_id)
    stores.say_stored(db, [outcome.run_id])
    if outcome.status == RunStatus.INCOMPLETE:
        err.print(f"interrupted: run {outcome.run_id} kept what was measured "
                  "(marked incomplete)")
        sys.exit(Exit.INTERRUPTED)
    if failed := _failed_cells(data):
        err.print(f"{failed} cells failed (the warnings above name them): exit status "
                  f"{Exit.FAILED:d}", soft_wrap=True, markup=False)
        sys.exit(Exit.FAILED)
