"""`mpiarena run`'s kind of run: the suite and implementations a benchmark run asks for, fitted
to where it runs, measured through the one sequence (session.run_suite), each note on the way
said in one line."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from .. import suites
from ..analysis.sampling import default_budget
from ..analysis.stats import ALPHA, CORRECTION, decidable, smallest_p
from ..base import paths
from ..base.errors import ArenaError
from ..base.machine import cores
from ..base.records import LOCAL, Datatype
from ..base.sizes import format_size
from ..cluster.placement import Placement
from ..cluster.topology import Topology, opened
from ..impls import Implementation, crashes, discover, family_of, parse_user_impls, select
from ..impls.discover import with_floor
from ..launchers.srun import refusal
from ..model.benchmarks import BENCHMARKS, rounded_up
from ..platform.plan import Plan, check_variants, make_plan
from ..suites import Suite, fit_to_cores
from ..suites import load as load_suite
from .benchmark_asks import BenchmarkAsk
from .session import Outcome, RunContext, SuiteAsk, run_suite

Say = Callable[[str], None]  # one line to the user


@dataclass(frozen=True)
class Chosen:
    """What a benchmark run measures: the suite as its file says, the suite as asked, the
    implementations, and whether the user named them."""

    loaded: Suite
    suite: Suite
    impls: list[Implementation]
    named: bool


def choose(ask: BenchmarkAsk, say: Say) -> Chosen:
    """The suite with the command line's overrides and the implementations it compares: those
    named (with the machine floor, for a comparison on this machine), else every one found."""
    selection = ask.selection
    loaded = load_suite(selection.suite)
    suite = ask.measurement.suite(loaded, selection)
    if not ask.suite_named and (selection.benchmarks or selection.sizes):
        suite = suites.selection(suite, selection.suite, bool(selection.benchmarks),
                                 bool(selection.sizes))
    ids, user_prefixes = parse_user_impls(selection.impl_specs)
    found = discover(user_prefixes, paths.impls_dir())
    check_variants(suite.variants, [f.name for f in found], f"suite {selection.suite}")
    impls = select(found, ids, say)
    if ids and not suite.variants and not ask.elsewhere:
        impls = with_floor(impls, found, suite.benchmarks)  # a comparison here: the floor too
    return Chosen(loaded, suite, impls, bool(ids))


def say_chosen(chosen: Chosen, say: Say) -> None:
    """Which implementations a default run compares, and their known crashes."""
    if not chosen.named:
        say(f"comparing {', '.join(i.id for i in chosen.impls)}: every implementation found "
            "(--impl chooses)")
    for known in (line for impl in chosen.impls for line in crashes.said_of(impl)):
        say(f"note: {known}")


def dry_plan(ask: BenchmarkAsk, chosen: Chosen, say: Say) -> Plan:
    """The plan on this machine, measuring nothing (--dry-run)."""
    suite = chosen.suite
    if ask.selection.nps is None:
        suite = fit_to_cores(suite, cores(), "this machine", say)
    m = ask.measurement
    return make_plan(suite, chosen.impls, m.seed, m.options())


def run_benchmark(ask: BenchmarkAsk, chosen: Chosen, context: Callable[[], RunContext],
                  say: Say) -> Outcome:
    """Measure the chosen suite where the run asks (the machines found first): fitted to their
    cores, with the implementations that can start there; `context` is made once they are."""
    with opened(ask.where) as topology:  # where the machines are missing, that is the one line
        say_chosen(chosen, say)
        suite = chosen.suite
        if ask.selection.nps is None:
            place = "this machine" if topology.label == LOCAL else topology.label
            suite = fit_to_cores(suite, topology.cores, place, say)
        impls = _startable_there(chosen, topology, ask, say)
        m = ask.measurement
        run = SuiteAsk(suite, impls, m.settings(topology.label), m.options(), m.seed,
                       explicit=chosen.named)
        return run_suite(run, context(), topology,
                         lambda plan: _reviewed(plan, ask, chosen.loaded, say))


def _startable_there(chosen: Chosen, topology: Topology, ask: BenchmarkAsk,
                     say: Say) -> list[Implementation]:
    """The chosen implementations that can run on the topology."""
    impls = chosen.impls
    if ask.where.slurm:
        impls = _startable(impls, topology.placement(2), chosen.named, say)
    if topology.label != LOCAL:
        impls = _on_this_machine_only(impls, say)
    return impls


def _on_this_machine_only(impls: list[Implementation], say: Say) -> list[Implementation]:
    """The implementations without the machine floor, which measures this machine's cores, not
    a cluster's link (a note says so)."""
    kept = [i for i in impls if not family_of(i).floor]
    if not kept:
        raise ArenaError("the machine floor is measured on this machine only: name a library "
                         "to run on the cluster with --impl")
    if len(kept) < len(impls):
        say("note: the machine floor left out: it is measured on this machine only, not "
            "across a cluster's link")
    return kept


def _startable(impls: list[Implementation], placement: Placement | None, explicit: bool,
               say: Say) -> list[Implementation]:
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
            say(f"note: {impl.id} left out: {why}")
    if not kept:
        raise ArenaError("no implementation found can start ranks across this allocation's "
                         "nodes: allocate one node, or run with --hosts")
    return kept


def _reviewed(plan: Plan, ask: BenchmarkAsk, loaded: Suite, say: Say) -> Plan:
    """The plan as measured, its notes said: sums rounded up, the budget of the user's own
    cells, --launches turning the suite's budget off, what its launches can decide."""
    m = ask.measurement
    _say_how_sums_round(plan, m.datatype, say)
    plan = _budget_for_own_cells(plan, ask, say)
    if loaded.budget and m.launches is not None and m.budget is None:
        say(f"note: --launches {m.launches} turns suite {ask.selection.suite}'s budget "
            f"({loaded.budget:.0f} s) off: only these launches are measured; add --budget "
            f"{loaded.budget:.0f}s to spend one after them")
    _say_what_it_can_decide(plan, say)
    return plan


def _say_how_sums_round(plan: Plan, datatype: Datatype | None, say: Say) -> None:
    """One line where --datatype's element does not divide a size a sum is measured at: the
    core sums whole elements, that size rounded up to one more."""
    sums = [b for b in plan.suite.benchmarks if BENCHMARKS[b].sums]
    if datatype is None or not sums:
        return
    if odd := rounded_up(plan.suite.sizes, datatype):
        sizes = ", ".join(format_size(s) for s in odd)
        say(f"note: {', '.join(sums)} at {sizes}: not a whole number of {datatype.mpi} "
            f"({datatype.size} B): rounded up to whole elements")


def _budget_for_own_cells(plan: Plan, ask: BenchmarkAsk, say: Say) -> Plan:
    """A run of the user's own cells (--bench or --sizes, no --budget nor --launches) gets a
    budget that scales with the variants compared (`sampling.default_budget`), said in one
    line, instead of the whole suite's."""
    selection, m = ask.selection, ask.measurement
    own = selection.benchmarks is not None or selection.sizes is not None
    if not own or m.budget is not None or m.launches is not None or not plan.suite.budget:
        return plan
    compared = [v for v in plan.variants if not family_of(v.impl).floor]  # the floor: no budget
    budget = default_budget(len(compared), plan.suite.budget)
    say(f"note: a budget of {budget:.0f} s for these cells ({len(compared)} variants, "
        f"{plan.comparisons} comparisons), spent on the comparisons still open; --budget sets "
        "another")
    return replace(plan, suite=replace(plan.suite, budget=budget))


def _say_what_it_can_decide(plan: Plan, say: Say) -> None:
    """Before measuring, one line where the plan's launches cannot decide a comparison on its
    own, or cannot decide any (a smoke run: launches are kept as asked, the line says so)."""
    launches = min([plan.suite.launches, *([plan.suite.init_launches]
                                           if plan.suite.init_launches else [])])
    d = decidable(plan.comparisons, launches)
    floor = f"the exact test's smallest p at {launches} launches a side is " \
        f"{smallest_p(launches, launches):.2g}"
    if d.comparisons and not d.anything:
        say(f"note: {d.comparisons} comparisons: {launches} launches a side cannot decide any "
            f"({floor}, the rule needs below {ALPHA:g}): every verdict will be undecided; "
            f"--launches {d.least} at least can decide")
    elif d.comparisons > 1 and not d.on_its_own:
        say(f"note: {d.comparisons} comparisons at {launches} launches a side: a comparison is "
            f"decided only where others are too ({floor}, above {ALPHA:g}/{d.comparisons}, the "
            f"first step of {CORRECTION}'s correction); from {d.alone} launches (--launches "
            f"{d.alone}) each can be on its own")
