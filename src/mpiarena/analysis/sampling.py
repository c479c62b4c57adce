"""The narrow interface adaptive sampling consults: whether a cell's figure is known to the
precision asked, over launches, and afterwards which cells got there; under a time budget,
which cells' comparisons are still open and decidable."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from ..results import Key, RunData
from .groups import measured
from .stats import Sample, ci_halfwidth, verdicts
from .verdicts import Speed

K = TypeVar("K")  # a cell, as its caller keys it


def precise(by_launch: Iterable[Sequence[float]], precision: float) -> bool:
    """The 95% interval of the figure over these launches' observations is within +-precision
    of it (relative); never with fewer than 6 launches."""
    return ci_halfwidth([np.asarray(v) for v in by_launch if len(v)]) <= precision


def open_comparisons(cells: dict[K, dict[str, Sample]], launches: float) -> list[tuple[K, str]]:
    """The (cell, variant) of the comparisons (a cell's fastest variant against another, as the
    report makes them, one family across the cells) still undecided that about `launches` more
    launches of each variant can decide, the nearest to a decision first; when none can, those
    of every open comparison that more launches could decide (one more may still do)."""
    keys = [k for k, cell in cells.items() if len(cell) > 1]
    open_: list[tuple[int, K, str, str]] = []
    for key, judged in zip(keys, verdicts([cells[k] for k in keys]), strict=True):
        open_ += [(v.needed - min(v.launches_fast, v.launches_slow), key, v.fast, v.slow)
                  for v in judged if v.outcome == Speed.UNDECIDED and v.needed]
    open_.sort(key=lambda o: o[0])
    fits = [o for o in open_ if o[0] <= launches] or open_
    return list(dict.fromkeys(t for _, key, fast, slow in fits for t in ((key, fast),
                                                                          (key, slow))))


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
