"""One measured run: record what runs where, execute the plan under a progress bar, close it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from .. import __version__, machine
from ..build import Build
from ..cluster.topology import Topology
from ..plan import Plan, Variant
from ..records import ImplementationRecord, VariantRecord
from ..status import RunStatus
from ..store import Store
from ..users import RankUser
from . import presence
from .execute import Execution, Executor, Settings


@dataclass(frozen=True)
class Outcome:
    run_id: int
    status: RunStatus  # incomplete: interrupted, what was measured is kept


def register(store: Store, run_id: int, builds: Mapping[str, Build],
             variants: Sequence[Variant]) -> None:
    """A new run's implementations (as built) and variants, into the store."""
    for b in builds.values():
        i = b.impl
        store.add_implementation(ImplementationRecord(
            run_id, i.id, i.family, i.version, b.version_string, i.origin, str(i.prefix or ""),
            str(i.wrapper), str(i.launcher), b.wrapper_flags, b.cflags))
    for v in variants:
        store.add_variant(VariantRecord(run_id, v.id, v.impl.id, v.name, dict(v.env),
                                        list(v.args), v.binding or "auto"))


def progress_bar(console: Console) -> Progress:
    """The bar a measurement shows while it runs, gone when it ends."""
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeRemainingColumn(), console=console, transient=True)


def measure(plan: Plan, builds: dict[str, Build], store: Store, topology: Topology,
            settings: Settings, rank_user: RankUser | None, command: str, progress_to: Console,
            recorded: Mapping[str, object] | None = None) -> Outcome:
    """Run the plan into a new run of the store; Ctrl-C ends it as incomplete, never lost.

    `recorded` adds to the run's settings (a reproduction names its study and experiment).
    """
    suite = plan.suite
    run_id = store.begin_run(suite.name, command, plan.seed, __version__, machine.describe(), {
        "benchmarks": suite.benchmarks, "sizes": suite.sizes, "nps": suite.nps,
        "observations": suite.observations, "launches": suite.launches,
        "budget": suite.budget,
        "target_time": suite.target_time,
        "max_cell_time": suite.max_cell_time, "window": suite.window,
        "hold_time": suite.hold_time, "sync": suite.sync,
        "offcache": plan.options.offcache, "validate": plan.options.validate,
        "timeout": settings.timeout,
        "topology": settings.topology, "precision": settings.precision,
        "max_time": settings.max_time, "wait_quiet": settings.wait_quiet,
        "datatype": settings.datatype,
        "ranks_run_as": rank_user.name if rank_user else "self", **(recorded or {})})
    register(store, run_id, builds, plan.variants)
    status = RunStatus.COMPLETE
    with progress_bar(progress_to) as progress:
        task = progress.add_task("starting", total=plan.total_steps)

        def advance(what: str) -> None:
            progress.update(task, advance=1, description=what)

        def grow(more: int) -> None:
            progress.update(task, total=(progress.tasks[0].total or 0) + more)

        try:
            with presence.measuring(command, topology.label):
                Executor(Execution(plan, builds, store, run_id, settings, rank_user, advance,
                                   grow, topology)).run()
        except KeyboardInterrupt:
            status = RunStatus.INCOMPLETE
    store.end_run(run_id, status, "interrupted" if status == RunStatus.INCOMPLETE else None)
    return Outcome(run_id, status)
