"""The narrow interface adaptive sampling consults: whether a cell's figure is known to the
precision asked, over launches, and afterwards which cells got there; under a time budget,
which cells' comparisons more launches are bought for, early stops paid for at looks."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from ..model.benchmarks import BENCHMARKS, Kind
from ..store.results import Key, RunData
from .groups import measured
from .stats import (
    MAX_LOOKS,
    Sample,
    ci_halfwidth,
    crosses,
    final_alpha,
    launch_medians,
    looks,
    verdicts,
)
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
UNBUDGETED = (Kind.COST, Kind.TIMER)


def budgeted(bench: str) -> bool:
    """Whether the budget may buy launches to decide a comparison of this benchmark."""
    return BENCHMARKS[bench].kind not in UNBUDGETED


# seconds of budget a variant takes by default where the cells are the user's own (--bench,
# --sizes): about 150 partial launches at 0.1-0.15 s each, what a comparison at a 14% spread
# between launches needs to find a true 10% (docs/statistics.md)
BUDGET_A_VARIANT = 25.0


def default_budget(variants: int, suite_budget: float) -> float:
    """A budget for a run of the user's own cells: BUDGET_A_VARIANT a variant that takes part
    in comparisons, the suite's at most."""
    return min(suite_budget, BUDGET_A_VARIANT * variants) if variants > 1 else 0.0


class Looks:
    """A budget's looks at its comparisons, remembered: which (cell, pair of variants) crossed
    a look's boundary (`stats.crosses`), looks counted from the run's `base` launches a side,
    each look taken once."""

    def __init__(self, base: int):
        self.base = base
        self.closed: set[tuple[object, str, str]] = set()
        self.taken: dict[tuple[object, str, str], int] = {}  # looks taken of each pair

    def closes(self, key: object, fast: str, slow: str, a: Sample, b: Sample) -> bool:
        """Whether the comparison has crossed a look's boundary, or reached the last look (the
        design's most launches: it is judged there); the looks its launches a side have
        newly reached are taken now."""
        pair = (key, min(fast, slow), max(fast, slow))
        if pair in self.closed:
            return True
        n = min(len(launch_medians(a)), len(launch_medians(b)))
        if n >= self.base * 2 ** (MAX_LOOKS - 1):  # the last look reached: the design's end
            return True
        due = looks(self.base, n)
        if any(crosses(a, b, at) for at in due[self.taken.get(pair, 0):]):
            self.closed.add(pair)
        self.taken[pair] = len(due)
        return pair in self.closed


def open_comparisons(cells: dict[K, dict[str, Sample]], seconds: float,
                     cost: Mapping[str, float], seen: Looks) -> list[tuple[K, str]]:
    """The (cell, variant) of the comparisons (a cell's fastest variant against another, as the
    report makes them, one family across the cells) that more launches are bought for:
    - every one the rule decides on the data so far that has not crossed a look's boundary
      (`Looks`): it keeps its launches until the budget ends, since stopping it where it looks
      decided would spend the error rate again at every look;
    - of the undecided, those the launches `seconds` allows can decide, a launch of variant v
      costing cost[v] seconds: the cheapest decisions first (more launches needed times both
      variants' cost; one whose ratio sits on the threshold last), while every variant's
      launches (the most its chosen comparisons need) fit in the time together; when none
      fits, every undecided one.
    None for a comparison that crossed a boundary: it closed early, paid for. No comparison is
    stopped for looking decided or hopeless on the data so far: both would be looks unpaid."""
    keys = [k for k, cell in cells.items() if len(cell) > 1]
    kept: list[tuple[K, str, str]] = []
    open_: list[tuple[int, K, str, str]] = []
    for key, judged in zip(keys, verdicts([cells[k] for k in keys], final_alpha(True)),
                           strict=True):
        for v in judged:
            if seen.closes(key, v.fast, v.slow, cells[key][v.fast], cells[key][v.slow]):
                continue
            now = min(v.launches_fast, v.launches_slow)
            if v.outcome != Speed.UNDECIDED:
                kept.append((key, v.fast, v.slow))
            else:  # on the line (needed 0): last, as if it needed ten times its launches
                open_.append(((v.needed or 10 * now) - now, key, v.fast, v.slow))
    open_.sort(key=lambda o: o[0] * (cost[o[2]] + cost[o[3]]))
    need: dict[str, int] = {}  # the launches each chosen variant needs
    for _, fast, slow in kept:
        need |= {fast: max(need.get(fast, 0), 1), slow: max(need.get(slow, 0), 1)}
    fits = []
    for more, key, fast, slow in open_:
        trial = {**need, fast: max(need.get(fast, 0), more), slow: max(need.get(slow, 0), more)}
        if sum(cost[v] * n for v, n in trial.items()) <= seconds:
            need = trial
            fits.append((more, key, fast, slow))
    chosen = [(key, fast, slow) for key, fast, slow in kept] + \
        [(key, fast, slow) for _, key, fast, slow in fits or open_]
    return list(dict.fromkeys(t for key, fast, slow in chosen
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
