"""A stored run as the renderers read it: its rendering (from its kind), and what the store
gives for it (its data, a program run's analysis, its variants' rows), each read once, when a
renderer first asks."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from typing import TYPE_CHECKING

from ..base.records import RunKind, RunRecord, VariantRecord
from ..store import Store
from ..store.results import RunData, load

if TYPE_CHECKING:
    from ..analysis.program import ProgramResult
    from ..analysis.program_tuning import TuneResult


class Rendering(Enum):
    """Which renderings a run has: its words, tables and exports differ by it."""

    BENCHMARK = "benchmark"  # the core's cells: run, import, tune, reproduce and releases runs
    PROGRAM = "program"  # `mpiarena program`: a program's launches
    SIMULATED = "simulated"  # `mpiarena simulate`: deterministic, no intervals or verdicts


def rendering_of(kind: RunKind) -> Rendering:
    """A kind's rendering: a program's launches, SMPI's figures, or the core's cells (every
    other kind, so that a new kind of the core's runs needs no entry here)."""
    if kind.runs_a_program:
        return Rendering.PROGRAM
    return Rendering.SIMULATED if kind == RunKind.SIMULATED else Rendering.BENCHMARK


@dataclass
class RunSource:
    """Run `run_id` of `store`."""

    store: Store
    run_id: int

    @cached_property
    def record(self) -> RunRecord:
        return self.store.run(self.run_id)

    @cached_property
    def rendering(self) -> Rendering:
        return rendering_of(self.record.kind)

    @cached_property
    def data(self) -> RunData:
        return load(self.store, self.run_id)

    @cached_property
    def program(self) -> ProgramResult:
        """A program run as judged (launches, verdicts, decompositions)."""
        # here, not at the top: ~9 ms more start-up for every command
        from ..analysis.program import analyze

        return analyze(self.store, self.run_id)

    @cached_property
    def tuned(self) -> TuneResult | None:
        """An `program --tune` run's space, race and verdicts (None: any other run)."""
        # here, not at the top: ~20 ms more start-up for every command
        from ..analysis.program_tuning import is_tune_run, tune_result

        return tune_result(self.store, self.run_id) if is_tune_run(self.record) else None

    @cached_property
    def variants(self) -> list[VariantRecord]:
        """The store's variant rows (settings, binding)."""
        return self.store.variants(self.run_id)
