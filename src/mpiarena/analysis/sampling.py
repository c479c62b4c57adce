"""The narrow interface adaptive sampling consults: whether a cell's figure is known to the
precision asked, over launches, and afterwards which cells got there."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ..results import Key, RunData
from .groups import measured
from .stats import ci_halfwidth


def precise(by_launch: Iterable[Sequence[float]], precision: float) -> bool:
    """The 95% interval of the figure over these launches' observations is within +-precision
    of it (relative); never with fewer than 3 launches."""
    return ci_halfwidth([np.asarray(v) for v in by_launch if len(v)]) <= precision


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
