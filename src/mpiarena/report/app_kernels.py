"""The application kernels' section: wall time, time inside each kind of call, correctness.

One row per kernel, size, rank count and variant: the wall time of a run (slowest rank; the
median of launch medians), the median over observations of the slowest rank's seconds in each
kind of call with its share of the wall time, and the correctness figure of rank 0 (the worst
observation).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..analysis.app_kernels import call_times, check_figure
from ..analysis.groups import figure
from ..base import units
from ..base.status import CellStatus
from ..model.benchmarks import APP_CHECKS, BENCHMARKS, Kind
from ..store.results import RunData

STATUS: dict[str, str] = {CellStatus.NA: "n/a", CellStatus.SKIPPED: "skipped",
                          CellStatus.INVALID: "invalid", CellStatus.FAILED: "failed"}


@dataclass
class AppKernels:
    header: list[str] = field(default_factory=lambda: [
        "kernel", "size", "ranks", "variant", "wall", "inside message passing", "check"])
    rows: list[list[str]] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)  # why a cell's answer was wrong


def _check_text(figure: tuple[str, float] | None) -> str:
    if figure is None:
        return "-"
    name, value = figure
    shown = f"{value:.0f}" if name == "primes" else f"{value:.1e}"
    return f"{APP_CHECKS[name]} {shown}"


def app_kernels(data: RunData) -> AppKernels | None:
    """The section, or None when the run measured no application kernel."""
    order = list(BENCHMARKS)
    keys = sorted((k for k in data.cells if BENCHMARKS[k.bench].kind == Kind.APP),
                  key=lambda k: (order.index(k.bench), k.size, k.np))
    if not keys:
        return None
    out = AppKernels()
    for key in keys:
        bench, size, np_ = key
        for variant in data.variants:
            group = data.cells[key].get(variant)
            if group is None:
                continue
            row = [bench.removeprefix("app-"), f"{size:,}", str(np_), variant]
            if group.status != CellStatus.OK or not group.values:
                out.rows.append([*row, STATUS.get(group.status, "-"), "", ""])
                if group.status == CellStatus.INVALID:
                    out.invalid.append(f"{bench} {size:,} at {np_} ranks, {variant}: "
                                       f"{group.reason}")
                continue
            wall = figure(group)
            calls = ", ".join(f"{call} {units.seconds(t)} {100 * t / wall:.0f}%"
                              for call, t in call_times(group).items() if t > 0 and wall > 0)
            out.rows.append([*row, units.seconds(wall), calls or "-",
                             _check_text(check_figure(group))])
    return out
