"""The narrow interface adaptive sampling consults: whether a cell's figure is known to the
precision asked, over launches, and afterwards which cells got there; under a time budget,
which cells' comparisons are still open and decidable."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from ..benchmarks import BENCHMARKS
from ..results import Key, RunData
from .groups import measured
from .stats import Sample, ci_halfwidth, verdicts
from .verdicts import Speed

K = TypeVar("K")  # a cell, as its caller keys it


def precise(by_launch: Iterable[Sequence[float]], precision: float) -> bool:
    """The 95% interval of the figure over these launches' observations is within +-precision
    of it (relative); never with fewer than 6 launches."""
    return ci_halfwidth([np.asarray(v) for v in by_launch if len(v)]) <= precision


# benchmark kinds whose comparisons the budget buys no launches for: the costs, and the timer,
# which reads a clock, not the libraries' message passing (PVM's and raw TCP's timer cells read
# the same clock, on the 5% line: a quick run's budget spent 22 PVM launches, 19 s of its 170,
# on that one cell)
UNBUDGETED = ("cost", "timer")


def budgeted(bench: str) -> bool:
    """Whether the budget may buy launches to decide a comparison of this benchmark."""
    return BENCHMARKS[bench].kind not in UNBUDGETED


def open_comparisons(cells: dict[K, dict[str, Sample]], seconds: float,
                     cost: Mapping[str, float]) -> list[tuple[K, str]]:
    """The (cell, variant) of the comparisons (a cell's fastest variant against another, as the
    report makes them, one family across the cells) still undecided that the launches `seconds`
    allows can decide, a launch of variant v costing cost[v] seconds: the cheapest decisions
    first (more launches needed times both variants' cost), while every variant's launches
    (the most its chosen comparisons need) fit in the time together. When none fits, those of
    every open comparison that more launches could decide (one more may still do)."""
    keys = [k for k, cell in cells.items() if len(cell) > 1]
    open_: list[tuple[int, K, str, str]] = []
    for key, judged in zip(keys, verdicts([cells[k] for k in keys]), strict=True):
        open_ += [(v.needed - min(v.launches_fast, v.launches_slow), key, v.fast, v.slow)
                  for v in judged if v.outcome == Speed.UNDECIDED and v.needed]
    open_.sort(key=lambda o: o[0] * (cost[o[2]] + cost[o[3]]))
    need: dict[str, int] = {}  # the launches each chosen variant needs
    fits = []
    for more, key, fast, slow in open_:
        trial = {**need, fast: max(need.get(fast, 0), more), slow: max(need.get(slow, 0), more)}
        if sum(cost[v] * n for v, n in trial.items()) <= seconds:
            need = trial
            fits.append((more, key, fast, slow))
    return list(dict.fromkeys(t for _, key, fast, slow in fits or open_
                              for t in ((key, fast), (key, slow))))


@dataclass(frozen=True)
class Missed:
    """A cell whose figure never reached the precision."""

    key: Key
    launches: int
    observations: int
    halfwidth: float  # of its 95% CI, relative


@dataclass(frozen=True)
class Precision:
    """One variant's cells under adaptive sampling."""

    variant: str
    cells: int
    launches: tuple[int, ...]  # per cell, sorted
    missed: tuple[Missed, ...]


def precision_reached(data: RunData, precision: float) -> list[Precision]:
    """Per variant, how many launches its cells took and which never reached the precision."""
    out = []
    for variant in data.variants:
        groups = [(k, c[variant]) for k, c in data.cells.items() if measured(c.get(variant))]
        if not groups:
            continue
        missed = tuple(Missed(k, len(g.nested), len(g.values), w) for k, g in groups
                       if (w := ci_halfwidth(g.nested)) > precision)
        out.append(Precision(variant, len(groups), tuple(sorted(len(g.nested) for _, g in groups)),
                             missed))
    return out
