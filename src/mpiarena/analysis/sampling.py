"""The narrow interface adaptive sampling consults: whether a cell's figure is known to the
precision asked, over launches, and afterwards which cells got there; under a time budget,
which cells' comparisons are still open and decidable."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from ..results import Key, RunData
from .groups import measured
from .stats import Sample, ci_halfwidth, verdicts

K = TypeVar("K")  # a cell, as its caller keys it


def precise(by_launch: Iterable[Sequence[float]], precision: float) -> bool:
    """The 95% interval of the figure over these launches' observations is within +-precision
    of it (relative); never with fewer than 6 launches."""
    return ci_halfwidth([np.asarray(v) for v in by_launch if len(v)]) <= precision


def open_comparisons(cells: dict[K, dict[str, Sample]], turns: float) -> list[tuple[K, str]]:
    """The (cell, variant) whose launches should come next: the comparisons (a cell's fastest
    variant against another, as the report makes them, one family across the cells) still
    undecided that more launches can decide, the nearest to a decision first, as many as about
    `turns` more launches of one cell of one variant can decide in all; when none of them fits,
    one more launch of each that `turns` allows, nearest first (a launch may still decide it)."""
    keys = [k for k, cell in cells.items() if len(cell) > 1]
    open_: list[tuple[int, K, str, str]] = []
    for key, judged in zip(keys, verdicts([cells[k] for k in keys]), strict=True):
        open_ += [(v.needed - min(v.launches_fast, v.launches_slow), key, v.fast, v.slow)
                  for v in judged if v.outcome == "undecided" and v.needed]
    open_.sort(key=lambda o: o[0])
    return _fund(open_, turns, lambda short: short) or _fund(open_, turns, lambda _: 1)


def _fund(open_: list[tuple[int, K, str, str]], turns: float, cost: Callable[[int], int]
          ) -> list[tuple[K, str]]:
    """The turns of the comparisons in order while their cost in launches per turn fits."""
    chosen: dict[tuple[K, str], None] = {}
    for short, key, fast, slow in open_:
        new = [t for t in ((key, fast), (key, slow)) if t not in chosen]
        if turns < cost(short) * len(new):
            break
        turns -= cost(short) * len(new)
        chosen.update(dict.fromkeys(new))
    return list(chosen)


@dataclass(frozen=True)
class Precision:
    """One variant's cells under adaptive sampling."""

    variant: str
    cells: int
    launches: tuple[int, ...]  # per cell, sorted
    missed: tuple[tuple[Key, int, int, float], ...]  # key, launches, observations, half-width


def precision_reached(data: RunData, precision: float) -> list[Precision]:
    """Per variant, how many launches its cells took and which never reached the precision."""
    out = []
    for variant in data.variants:
        groups = [(k, c[variant]) for k, c in data.cells.items() if measured(c.get(variant))]
        if not groups:
            continue
        missed = tuple((k, len(g.nested), len(g.values), w) for k, g in groups
                       if (w := ci_halfwidth(g.nested)) > precision)
        out.append(Precision(variant, len(groups), tuple(sorted(len(g.nested) for _, g in groups)),
                             missed))
    return out
