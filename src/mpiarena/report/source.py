"""A stored run as the renderers read it: its kind, and what the store gives for it (its data,
an app run's analysis, its variants' rows), each read once, when a renderer first asks."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from typing import TYPE_CHECKING

from ..analysis.simulated import is_simulated
from ..records import RunRecord, VariantRecord
from ..results import RunData, load
from ..store import Store

if TYPE_CHECKING:
    from ..analysis.program import AppResult
    from ..analysis.tuned_app import TuneResult


class RunKind(Enum):
    """Which renderings a run has: its words, tables and exports differ by kind."""

    BENCHMARK = "benchmark"  # `mpiarena run` (and imports, tune and reproduce runs)
    APP = "app"  # `mpiarena app`: a program's launches
    SIMULATED = "simulated"  # `mpiarena simulate`: deterministic, no intervals or verdicts


@dataclass
class RunSource:
    """Run `run_id` of `store`."""

    store: Store
    run_id: int

    @cached_property
    def record(self) -> RunRecord:
        return self.store.run(self.run_id)

    @cached_property
    def kind(self) -> RunKind:
        # here, not at the top: ~9 ms more start-up for every command
        from ..analysis.program import is_app_run

        if is_app_run(self.record):
            return RunKind.APP
        return RunKind.SIMULATED if is_simulated(self.record) else RunKind.BENCHMARK

    @cached_property
    def data(self) -> RunData:
        return load(self.store, self.run_id)

    @cached_property
    def app(self) -> AppResult:
        """An app run as judged (launches, verdicts, decompositions)."""
        # here, not at the top: ~9 ms more start-up for every command
        from ..analysis.program import analyze

        return analyze(self.store, self.run_id)

    @cached_property
    def tuned(self) -> TuneResult | None:
        """An `app --tune` run's space, race and verdicts (None: any other run)."""
        # here, not at the top: ~20 ms more start-up for every command
        from ..analysis.tuned_app import is_tune_run, tune_result

        return tune_result(self.store, self.run_id) if is_tune_run(self.record) else None

    @cached_property
    def variants(self) -> list[VariantRecord]:
        """The store's variant rows (settings, binding)."""
        return self.store.variants(self.run_id)
