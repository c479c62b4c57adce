"""A suite's measured run, the sequence every kind of suite run takes: build the cores, plan the
suite's cells, record what runs where, execute the plan under a progress bar, close the run."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from ..base.records import ImplementationRecord, RunKind, RunSettings, VariantRecord
from ..base.status import RunStatus
from ..base.users import RankUser
from ..cluster.topology import Topology
from ..impls import Implementation
from ..model.runs import SETTINGS, RunStart
from ..platform.build import Build, build_all
from ..platform.plan import CellOptions, Plan, Variant, make_plan
from ..store import Store
from ..suites import Suite
from . import presence
from .execute import Execution, Executor, Settings


@dataclass(frozen=True)
class Outcome:
    run_id: int
    status: RunStatus  # incomplete: interrupted, what was measured is kept


@dataclass(frozen=True)
class RunContext:
    """Where runs are recorded and who runs them: the store, who ranks run as, the command
    line recorded, where the progress bar goes, and where a note to the user goes (a core
    that did not build, among others)."""

    store: Store
    rank_user: RankUser | None
    command: str
    progress_to: Console
    note: Callable[[str], None]


@dataclass(frozen=True)
class Recorded:
    """A run's kind, and what its settings record holds beyond the plan's settings (a
    reproduction's study and experiment)."""

    kind: RunKind = RunKind.BENCHMARK
    fields: Mapping[str, Any] = field(default_factory=dict)


def register(store: Store, run_id: int, builds: Mapping[str, Build],
             variants: Sequence[Variant]) -> None:
    """A new run's implementations (as built) and variants, into the store."""
    for b in builds.values():
        i = b.impl
        store.add_implementation(ImplementationRecord(
            run_id=run_id, impl_id=i.id, family=i.family, version=i.version,
            version_string=b.version_string, origin=i.origin, prefix=str(i.prefix or ""),
            wrapper=str(i.wrapper), launcher=str(i.launcher), wrapper_flags=b.wrapper_flags,
            cflags=b.cflags))
    for v in variants:
        store.add_variant(VariantRecord(run_id=run_id, variant=v.id, impl_id=v.impl.id,
                                        name=v.name, env=dict(v.env), args=list(v.args),
                                        binding=v.binding or "auto"))


def progress_bar(console: Console) -> Progress:
    """The bar a measurement shows while it runs, gone when it ends."""
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeRemainingColumn(), console=console, transient=True)


@dataclass(frozen=True)
class SuiteAsk:
    """A suite to measure into a new run: the suite, the implementations to build its cores
    against, how the run goes about its plan, what every cell asks of the core, the
    interleaving's seed (None: drawn), whether a core that does not build stops the run (an
    implementation the user named) or is skipped with a warning, whether each implementation
    runs bare beside the suite's named variants, and the kind of run recorded."""

    suite: Suite
    impls: Sequence[Implementation]
    settings: Settings
    options: CellOptions = field(default_factory=CellOptions)
    seed: int | None = None
    explicit: bool = True
    bare: bool = True
    recorded: Recorded = field(default_factory=Recorded)


def _as_planned(plan: Plan) -> Plan:
    """The plan as make_plan made it."""
    return plan


def run_suite(ask: SuiteAsk, context: RunContext, topology: Topology,
              review: Callable[[Plan], Plan] = _as_planned) -> Outcome:
    """Build the cores (a warning to context.note), plan the suite's cells over what built,
    `review` the plan (a note on it, a budget of its own), and measure it on `topology` into a
    new run; Ctrl-C ends it as incomplete, never lost."""
    builds = build_all(list(ask.impls), ask.explicit, context.note)
    plan = review(make_plan(ask.suite, [b.impl for b in builds.values()], ask.seed, ask.options,
                            ask.bare))
    return _measure(plan, builds, context, topology, ask.settings, ask.recorded)


def _measure(plan: Plan, builds: dict[str, Build], context: RunContext, topology: Topology,
             settings: Settings, recorded: Recorded) -> Outcome:
    """Run the plan into a new run of the store, of the kind recorded."""
    suite, store = plan.suite, context.store
    kind = SETTINGS[recorded.kind]
    assert issubclass(kind, RunSettings)  # a kind of run that measures a suite's cells
    record = kind(
        benchmarks=tuple(suite.benchmarks), sizes=tuple(suite.sizes), nps=tuple(suite.nps),
        observations=suite.observations, launches=suite.launches, budget=suite.budget,
        target_time=suite.target_time, max_cell_time=suite.max_cell_time, window=suite.window,
        hold_time=suite.hold_time, sync=suite.sync, offcache=plan.options.offcache,
        validate=plan.options.validate, timeout=settings.timeout, topology=settings.topology,
        precision=settings.precision, max_time=settings.max_time,
        wait_quiet=settings.wait_quiet, datatype=settings.datatype,
        ranks_run_as=context.rank_user.name if context.rank_user else "self",
        **recorded.fields)
    start = RunStart(recorded.kind, suite.name, context.command, record, plan.seed)
    with store.new_run(start) as run:
        register(store, run.id, builds, plan.variants)
        with progress_bar(context.progress_to) as progress:
            task = progress.add_task("starting", total=plan.total_steps)

            def advance(what: str) -> None:
                progress.update(task, advance=1, description=what)

            def grow(more: int) -> None:
                progress.update(task, total=(progress.tasks[0].total or 0) + more)

            with presence.measuring(context.command, topology.label):
                Executor(Execution(plan, builds, store, run.id, settings, context.rank_user,
                                   advance, grow, topology)).run()
    return Outcome(run.id, run.status)
