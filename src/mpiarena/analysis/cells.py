"""Warnings about doubtful cells: noise, outliers, warm-up, interference and launches that
disagree (two levels of launch medians), each with its figures."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from ..base.records import Cell
from ..model.benchmarks import BENCHMARKS
from ..store.results import Group, RunData
from .groups import measured
from .stats import launch_medians, outliers, variance_share

HIGH_CV = 0.10  # the bulk of a cell's observations varying more than this is noise
WARMUP_SHARE = 0.2  # slow outliers all within the first fifth of a cell are a warm-up effect


class Cause(StrEnum):
    """Why a cell is doubtful: slow first observations, more ranks than cores, noise, now and
    then interference, or launches that disagree."""

    WARM_UP = "warm-up"
    OVERSUBSCRIBED = "oversubscribed"
    NOISE = "noise"
    INTERFERENCE = "interference"
    LAUNCHES = "launches"


@dataclass(frozen=True)
class CellWarning:
    """Something doubtful about one variant's observations in one cell, with its likely cause."""

    key: Cell
    variant: str
    text: str
    cause: Cause
    outliers: tuple[int, ...] = ()  # indices into the launch's observations


Warning = CellWarning  # the name the issue uses; shadows the builtin only inside this module


def _robust_cv(x: np.ndarray) -> float:
    median = float(np.median(x))
    mad = float(np.median(np.abs(x - median)))
    return 1.4826 * mad / median if median > 0 else 0.0


def cell_warnings(data: RunData, k: float = 3.0, min_rel: float = 0.25,
                  high_cv: float = HIGH_CV) -> list[CellWarning]:
    """Hyperfine-style warnings, each with its likely cause: launches that disagree (most of
    the variance between launches, their medians `LAUNCH_SPREAD` apart or more), statistical
    outliers inside a launch (beyond Tukey's fences at `k` IQR, "far out" by default, and at
    least `min_rel` away from the launch's median), or a launch whose observations vary by
    more than `high_cv` (robust CV). One warning per cell and variant, the first that applies."""
    cores = int(data.machine.get("cores", 0) or 0)
    bounds = _Bounds(k, min_rel, high_cv)
    out: list[CellWarning] = []
    for key in sorted(k for k in data.cells if BENCHMARKS[k.bench].unit == "s"):
        for variant, group in sorted(data.cells[key].items()):
            if not measured(group):
                continue
            warning = _launch_warning(key, variant, group)
            for x in group.nested if warning is None else []:
                warning = warning or _cell_warning(key, variant, x, cores, bounds)
            if warning is not None:
                out.append(warning)
    return out


LAUNCH_SPREAD = 1.25  # launch medians this far apart, with most variance between launches


def _spread(medians: np.ndarray) -> str:
    """'1.1, 1.5, 1.2 us' for a few launch medians; their range for more."""
    us = np.sort(medians) * 1e6
    if len(us) <= 6:
        return ", ".join(f"{v:.3g}" for v in medians * 1e6) + " us"
    return f"{us[0]:.3g}-{us[-1]:.3g} us over {len(us)} launches"


def _launch_warning(key: Cell, variant: str, group: Group) -> CellWarning | None:
    sample = group.nested
    share = variance_share(sample)
    medians = launch_medians(sample)
    if share is None or share < 0.5 or medians.min() <= 0 \
            or medians.max() / medians.min() < LAUNCH_SPREAD:
        return None
    return CellWarning(key, variant, f"its launches disagree: {share:.0%} of the variance lies "
                       f"between launches (launch medians {_spread(medians)}): only more "
                       "launches narrow it", Cause.LAUNCHES)


@dataclass(frozen=True)
class _Bounds:
    """When a launch's observations warn: outliers beyond `k` IQR and `min_rel` of the median,
    or a robust CV above `high_cv`."""

    k: float
    min_rel: float
    high_cv: float


def _cell_warning(key: Cell, variant: str, x: np.ndarray, cores: int,
                  bounds: _Bounds) -> CellWarning | None:
    idx = outliers(x, k=bounds.k, min_rel=bounds.min_rel)
    high_cv = bounds.high_cv
    bulk = np.delete(x, idx)
    cv = _robust_cv(bulk) if len(bulk) > 2 else 0.0
    median = float(np.median(x))
    if (len(idx) == 0 and cv <= high_cv) or median <= 0:
        return None
    slow = idx[x[idx] > median]
    cause: Cause
    if len(slow) == len(idx) > 0 and slow.min() == 0 \
            and slow.max() < max(2, WARMUP_SHARE * len(x)):
        cause = Cause.WARM_UP
        why = ("the first is the slow one" if len(slow) == 1 else
               f"the first {len(slow)} are the slow ones") + ": warm-up too short"
    elif cores > 0 and key.np > cores:
        cause = Cause.OVERSUBSCRIBED
        why = (f"oversubscribed ranks ({key.np} on {cores} cores): busy-polling libraries "
               "measure the scheduler")
    elif cv > high_cv:
        cause = Cause.NOISE
        why = "noisy machine or interference"
    else:
        cause = Cause.INTERFERENCE
        why = "something else ran now and then; re-run on a quiet machine"
    if len(idx):
        ratios = x[idx] / median
        far = float(ratios[np.argmax(np.abs(np.log(ratios)))])
        lead = (f"{len(idx)} of {len(x)} observations are statistical outliers (the farthest "
                f"{far:.2g}x the median)")
        if cv > high_cv:
            lead += f", the rest vary by {cv:.0%}"
    else:
        lead = f"the observations vary by {cv:.0%} (robust CV)"
    return CellWarning(key, variant, f"{lead}: {why}", cause, tuple(int(i) for i in idx))


@dataclass(frozen=True)
class WarningLine:
    """One variant's doubtful cells of one cause: how many, the line naming them, and its
    first cell in words (for a line that folds every variant's)."""

    cause: Cause
    cells: int
    text: str  # "lam-7.1.4: 60 cells (allreduce 0 B (2 ranks), ... and 57 more); e.g. ..."
    example: str  # "lam-7.1.4, allreduce 0 B (2 ranks): its launches disagree: ..."


def warning_lines(warnings: Sequence[CellWarning], per_variant: int = 3) -> list[WarningLine]:
    """One line per variant and cause ("12 cells: ..."), naming at most `per_variant` cells."""
    by: dict[tuple[str, Cause], list[CellWarning]] = {}
    for w in warnings:
        by.setdefault((w.variant, w.cause), []).append(w)
    lines = []
    for (variant, cause), ws in sorted(by.items()):
        named = [f"{k.bench} {BENCHMARKS[k.bench].size_text(k.size)} ({k.np} ranks)"
                 for k in (w.key for w in ws[:per_variant])]
        more = f" and {len(ws) - per_variant} more" if len(ws) > per_variant else ""
        first = ws[0].text
        lines.append(WarningLine(cause, len(ws), f"{variant}: {len(ws)} cell"
                                 f"{'s' if len(ws) > 1 else ''} ({', '.join(named)}{more}); "
                                 f"e.g. {first}", f"{variant}, {named[0]}: {first}"))
    return lines
