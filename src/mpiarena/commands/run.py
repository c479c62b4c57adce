"""`mpiarena run`: build the cores, run a suite, store and summarise."""

from __future__ import annotations

import shlex
import socket
import sys
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from .. import suites
from ..analysis.estimate import estimate
from ..analysis.sampling import default_budget
from ..analysis.stats import ALPHA, CORRECTION, decidable, smallest_p
from ..base import paths, users
from ..base.errors import ArenaError
from ..base.machine import cores
from ..base.records import Datatype
from ..base.sizes import format_size
from ..base.status import CellStatus, RunStatus
from ..cluster.placement import Placement
from ..cluster.topology import Where, opened
from ..impls import Implementation, crashes, discover, family_of, parse_user_impls, select
from ..impls.discover import with_floor
from ..launchers.srun import refusal
from ..model.benchmarks import BENCHMARKS, rounded_up
from ..platform.build import Build, build_all
from ..platform.plan import CellOptions, Plan, check_variants, make_plan
from ..report import dry_run
from ..report.renderers import Format, RenderOptions, render
from ..report.source import RunSource
from ..store import Store
from ..store.results import RunData
from ..suites import Suite, fit_to_cores, override
from ..suites import load as load_suite
from . import grouping, placing, stores, suite_options, sweeping
from .batch import Submitted, run_batch
from .consoles import console, err
from .durations import DURATION, DURATION_HELP
from .exit_status import Exit
from .placing import Submit
from .stores import db_option
from .suite_options import impl_option

if TYPE_CHECKING:
    from ..runner.execute import Settings


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


def _builds(impls: list[Implementation], explicit: bool) -> dict[str, Build]:
    return build_all(impls, explicit, lambda line: err.print(f"[yellow]{line}[/]"))


def _on_this_machine_only(impls: list[Implementation]) -> list[Implementation]:
    """The implementations without the machine floor, which measures this machine's cores, not
    a cluster's link (a note says so)."""
    kept = [i for i in impls if not family_of(i).floor]
    if not kept:
        raise ArenaError("the machine floor is measured on this machine only: name a library "
                         "to run on the cluster with --impl")
    if len(kept) < len(impls):
        err.print("note: the machine floor left out: it is measured on this machine only, not "
                  "across a cluster's link", soft_wrap=True, markup=False)
    return kept


def _startable(impls: list[Implementation], placement: Placement | None,
               explicit: bool) -> list[Implementation]:
    """The implementations whose ranks can start across the allocation's nodes; one named on
    the command line that cannot is an error, others are left out with a note."""
    kept = []
    for impl in impls:
        why = refusal(family_of(impl), impl, placement) if placement else None
        if why is None:
            kept.append(impl)
        elif explicit:
            raise ArenaError(f"{impl.id}: {why}")
        else:
            err.print(f"note: {impl.id} left out: {why}", soft_wrap=True, markup=False)
    if not kept:
        raise ArenaError("no implementation found can start ranks across this allocation's "
                         "nodes: allocate one node, or run with --hosts")
    return kept


def _failed_cells(data: RunData) -> int:
    """How many cells of a variant no launch measured: failed, invalid or skipped."""
    lost = (CellStatus.FAILED, CellStatus.INVALID, CellStatus.SKIPPED)
    return sum(g.status in lost for cell in data.cells.values() for g in cell.values())


@dataclass(frozen=True)
class Selection:
    """What to run: a suite, the implementations, and the suite's cells the command line
    narrows (None: the suite's)."""

    suite: str
    impl_specs: tuple[str, ...]
    benchmarks: tuple[str, ...] | None
    nps: tuple[int, ...] | None  # None: the suite's, fitted to the cores
    sizes: tuple[int, ...] | None

    @classmethod
    def parse(cls, suite: str, impl_specs: tuple[str, ...], bench: str | None,
              nps: tuple[int, ...] | None, sizes: str | None, perturb: bool) -> Selection:
        return cls(suite, impl_specs, suite_options.benchmarks(bench), nps,
                   suite_options.sizes(sizes, perturb))


@dataclass(frozen=True)
class Measurement:
    """How to measure: observations and launches, the budget of more, what a cell checks, how
    long a job may hang, the interleaving's seed and how collectives are timed (None: the
    suite's)."""

    observations: int | None
    launches: int | None
    off_cache: bool
    validate: bool
    timeout: float
    precision: float | None  # adaptive: sample until the median's 95% CI is this tight
    max_time: float
    budget: float | None
    wait_quiet: float | None
    seed: int | None
    sync: str | None
    datatype: Datatype | None  # the sums' element type (None: not asked, int)

    @classmethod
    def parse(cls, precision: str | None, datatype: str | None, **given: Any) -> Measurement:
        return cls(precision=_fraction(precision),
                   datatype=Datatype(datatype) if datatype else None, **given)

    def suite(self, chosen: Suite, selection: Selection) -> Suite:
        """The suite with the command line's overrides; --launches alone means no budget."""
        budget = 0.0 if self.budget is None and self.launches is not None else self.budget
        return override(chosen, sizes=selection.sizes, nps=selection.nps,
                        observations=self.observations, launches=self.launches, budget=budget,
                        sync=self.sync, benchmarks=selection.benchmarks)

    def settings(self, topology: str) -> Settings:
        # here, not at the top: ~20 ms more start-up for every command
        from ..runner.execute import Settings

        return Settings(timeout=self.timeout, topology=topology, precision=self.precision,
                        max_time=self.max_time, wait_quiet=self.wait_quiet or 0.0,
                        datatype=self.datatype)

    def options(self) -> CellOptions:
        """What every cell asks of the core beyond the suite."""
        return CellOptions(offcache=self.off_cache, validate=self.validate)


@dataclass(frozen=True)
class Output:
    """What the summary adds: tables per benchmark, the method in full."""

    tables: bool
    method: bool


def _say_how_sums_round(plan: Plan, datatype: Datatype | None) -> None:
    """One line where --datatype's element does not divide a size a sum is measured at: the
    core sums whole elements, that size rounded up to one more."""
    sums = [b for b in plan.suite.benchmarks if BENCHMARKS[b].sums]
    if datatype is None or not sums:
        return
    if odd := rounded_up(plan.suite.sizes, datatype):
        sizes = ", ".join(format_size(s) for s in odd)
        err.print(f"note: {', '.join(sums)} at {sizes}: not a whole number of {datatype.mpi} "
                  f"({datatype.size} B): rounded up to whole elements", soft_wrap=True,
                  markup=False)


def _budget_for_own_cells(plan: Plan, selection: Selection, measurement: Measurement) -> Plan:
    """A run of the user's own cells (--bench or --sizes, no --budget nor --launches) gets a
    budget that scales with the variants compared (`sampling.default_budget`), said in one
    line, instead of the whole suite's."""
    own = selection.benchmarks is not None or selection.sizes is not None
    if not own or measurement.budget is not None or measurement.launches is not None or \
            not plan.suite.budget:
        return plan
    compared = [v for v in plan.variants if not family_of(v.impl).floor]  # the floor: no budget
    budget = default_budget(len(compared), plan.suite.budget)
    err.print(f"note: a budget of {budget:.0f} s for these cells ({len(compared)} variants, "
              f"{plan.comparisons} comparisons), spent on the comparisons still open; "
              "--budget sets another", soft_wrap=True, markup=False)
    return replace(plan, suite=replace(plan.suite, budget=budget))


def _say_what_it_can_decide(plan: Plan) -> None:
    """Before measuring, one line where the plan's launches cannot decide a comparison on its
    own, or cannot decide any (a smoke run: launches are kept as asked, the line says so)."""
    launches = min([plan.suite.launches, *([plan.suite.init_launches]
                                           if plan.suite.init_launches else [])])
    d = decidable(plan.comparisons, launches)
    floor = f"the exact test's smallest p at {launches} launches a side is " \
        f"{smallest_p(launches, launches):.2g}"
    if d.comparisons and not d.anything:
        err.print(f"note: {d.comparisons} comparisons: {launches} launches a side cannot decide "
                  f"any ({floor}, the rule needs below {ALPHA:g}): every verdict will be "
                  f"undecided; --launches {d.least} at least can decide", soft_wrap=True,
                  markup=False)
    elif d.comparisons > 1 and not d.on_its_own:
        err.print(f"note: {d.comparisons} comparisons at {launches} launches a side: a "
                  f"comparison is decided only where others are too ({floor}, above "
                  f"{ALPHA:g}/{d.comparisons}, the first step of {CORRECTION}'s correction); "
                  f"from {d.alone} launches (--launches {d.alone}) each can be on its own",
                  soft_wrap=True, markup=False)


def _here_only(where: Where, submit: Submit) -> None:
    """--dry-run plans on this machine: one line if the run would go elsewhere."""
    if submit.sbatch or where.cluster or where.hosts or where.slurm:
        raise ArenaError("--dry-run plans a run on this machine: leave out --cluster, --hosts, "
                         "--slurm and --sbatch")


def _plan_only(chosen: Suite, impls: list[Implementation], selection: Selection,
               measurement: Measurement, db: str) -> None:
    """--dry-run: the plan on this machine and what it would take, measuring nothing."""
    if selection.nps is None:
        chosen, note = fit_to_cores(chosen, cores(), "this machine")
        if note:
            err.print(f"note: {note}", soft_wrap=True, markup=False)
    plan = make_plan(chosen, impls, measurement.seed, measurement.options())
    runs = [run for run, _ in stores.store(db).runs()] if stores.exists(db) else []
    for line in dry_run.lines(plan, estimate(plan, runs, socket.gethostname()), db):
        console.print(line, soft_wrap=True, markup=False)


@click.command("run", cls=grouping.Sectioned)
@grouping.grouped(
    "selection", Selection.parse,
    suite_options.SUITE,
    impl_option("ids to compare, or NAME=/prefix"),
    suite_options.BENCH,
    suite_options.NPS,
    suite_options.SIZES,
    click.option("--perturb", is_flag=True, help="add NetPIPE's size-3 and size+3 neighbours"),
    title="What to run")
@grouping.grouped(
    "measurement", Measurement.parse,
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
    loaded = load_suite(selection.suite)
    chosen = measurement.suite(loaded, selection)
    suite_given = click.get_current_context().get_parameter_source("suite") == \
        ParameterSource.COMMANDLINE
    if not suite_given and (selection.benchmarks or selection.sizes):
        chosen = suites.selection(chosen, selection.suite, bool(selection.benchmarks),
                                  bool(selection.sizes))
    ids, user_prefixes = parse_user_impls(selection.impl_specs)
    found = discover(user_prefixes, paths.impls_dir())
    check_variants(chosen.variants, [f.name for f in found], f"suite {selection.suite}")
    impls = select(found, ids, lambda note: err.print(note, soft_wrap=True, markup=False))
    if ids and not chosen.variants and not (submit.sbatch or where.cluster or where.hosts or
                                            where.slurm):
        impls = with_floor(impls, found, chosen.benchmarks)  # a comparison here: the floor too
    def say_chosen() -> None:
        """Which implementations a default run compares, and their known crashes."""
        if not ids:
            err.print(f"comparing {', '.join(i.id for i in impls)}: every implementation found "
                      "(--impl chooses)", soft_wrap=True, markup=False)
        for known in (line for impl in impls for line in crashes.said_of(impl)):
            err.print(f"note: {known}", soft_wrap=True, markup=False)

    if dry_run:
        _here_only(where, submit)
        say_chosen()
        _plan_only(chosen, impls, selection, measurement, db)
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
        run_batch("run", submit, max(chosen.nps), db, stored)
        return
    sweeping.sweep()
    # here, not at the top: ~30 ms more start-up for every command
    from ..runner.session import RunContext, measure

    with opened(where) as topology:  # where the machines are missing, that is the one line
        say_chosen()
        if selection.nps is None:
            place = "this machine" if topology.label == "local" else topology.label
            chosen, note = fit_to_cores(chosen, topology.cores, place)
            if note:
                err.print(f"note: {note}", soft_wrap=True, markup=False)
        if where.slurm:
            impls = _startable(impls, topology.placement(2), explicit=bool(ids))
        if topology.label != "local":
            impls = _on_this_machine_only(impls)
        store = stores.store(db)
        builds = _builds(impls, explicit=bool(ids))
        plan = make_plan(chosen, [b.impl for b in builds.values()], measurement.seed,
                         measurement.options())
        _say_how_sums_round(plan, measurement.datatype)
        plan = _budget_for_own_cells(plan, selection, measurement)
        if loaded.budget and measurement.launches is not None and measurement.budget is None:
            err.print(f"note: --launches {measurement.launches} turns suite {selection.suite}'s "
                      f"budget ({loaded.budget:.0f} s) off: only these launches are measured; "
                      f"add --budget {loaded.budget:.0f}s to spend one after them",
                      soft_wrap=True, markup=False)
        _say_what_it_can_decide(plan)
        rank_user = None if where.slurm else users.for_ranks()  # Slurm: the allocation's owner
        context = RunContext(store, rank_user, shlex.join(["mpiarena", *sys.argv[1:]]), err,
                             err.print)
        outcome = measure(plan, builds, context, topology,
                          measurement.settings(topology.label))
        data = summarise(store, outcome.run_id)
        stores.say_stored(db, [outcome.run_id])
        if outcome.status == RunStatus.INCOMPLETE:
            err.print(f"interrupted: run {outcome.run_id} kept what was measured "
                      "(marked incomplete)")
            sys.exit(Exit.INTERRUPTED)
        if failed := _failed_cells(data):
            err.print(f"{failed} cells failed (the warnings above name them): exit status "
                      f"{Exit.FAILED:d}", soft_wrap=True, markup=False)
            sys.exit(Exit.FAILED)
