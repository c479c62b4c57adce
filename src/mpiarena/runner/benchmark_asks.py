"""What `mpiarena run` asks of a benchmark run, as one record: what to run, how to measure it,
where. Light to import: the command's options are built into it before anything runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..base.records import Datatype
from ..cluster.topology import Where
from ..platform.plan import CellOptions
from ..suites import Suite, override

if TYPE_CHECKING:
    from .execute import Settings


@dataclass(frozen=True)
class Selection:
    """What to run: a suite, the implementations, and the suite's cells the command line
    narrows (None: the suite's)."""

    suite: str
    impl_specs: tuple[str, ...]
    benchmarks: tuple[str, ...] | None
    nps: tuple[int, ...] | None  # None: the suite's, fitted to the cores
    sizes: tuple[int, ...] | None


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

    def suite(self, chosen: Suite, selection: Selection) -> Suite:
        """The suite with the command line's overrides; --launches alone means no budget."""
        budget = 0.0 if self.budget is None and self.launches is not None else self.budget
        return override(chosen, sizes=selection.sizes, nps=selection.nps,
                        observations=self.observations, launches=self.launches, budget=budget,
                        sync=self.sync, benchmarks=selection.benchmarks)

    def settings(self, topology: str) -> Settings:
        # here, not at the top: ~20 ms more start-up for every command
        from .execute import Settings

        return Settings(timeout=self.timeout, topology=topology, precision=self.precision,
                        max_time=self.max_time, wait_quiet=self.wait_quiet or 0.0,
                        datatype=self.datatype)

    def options(self) -> CellOptions:
        """What every cell asks of the core beyond the suite."""
        return CellOptions(offcache=self.off_cache, validate=self.validate)


@dataclass(frozen=True)
class BenchmarkAsk:
    """A benchmark run as asked: what to run, how to measure, where, whether the suite was
    named (a suite not named, narrowed by --bench or --sizes, becomes the selection) and
    whether the run is submitted as a batch job (which runs it with --slurm)."""

    selection: Selection
    measurement: Measurement
    where: Where
    suite_named: bool
    batch: bool = False

    @property
    def elsewhere(self) -> bool:
        """Whether the run goes to other machines than this one."""
        w = self.where
        return bool(self.batch or w.cluster or w.hosts or w.slurm)
