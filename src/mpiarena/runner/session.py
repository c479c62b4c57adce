"""One measured run: record what runs where, execute the plan under a progress bar, close it."""

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
from ..model.runs import SETTINGS, RunStart
from ..platform.build import Build
from ..platform.plan import Plan, Variant
from ..store import Store
from . import presence
from .execute import Execution, Executor, Settings


@dataclass(frozen=True)
class Outcome:
    run_id: int
    status: RunStatus  # incomplete: interrupted, what was measured is kept


@dataclass(frozen=True)
class RunContext:
    """Where runs are recorded and who runs them: the store, who ranks run as, the command
    line recorded, where the progress bar goes, and where a note to the user goes."""

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


def measure(plan: Plan, builds: dict[str, Build], context: RunContext, topology: Topology,
            settings: Settings, recorded: Recorded = Recorded()) -> Outcome:
    """Run the plan into a new run of the store, of the kind recorded; Ctrl-C ends it as
    incomplete, never lost."""
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
