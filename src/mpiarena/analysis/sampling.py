"""The narrow interface adaptive sampling consults: whether a cell's figure is known to the
precision asked, over launches, and afterwards which cells got there; under a time budget,
which cells' comparisons are still open and decidable."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from ..benchmarks import BENCHMARKS
from ..results import Key, RunData
from .groups import measured
from .stats import ci_halfwidth, verdicts

T = TypeVar("T")  # a planned turn: (cell, variant)


def precise(by_launch: Iterable[Sequence[float]], precision: float) -> bool:
    """The 95% interval of the figure over these launches' observations is within +-precision
    of it (relative); never with fewer than 6 launches."""
    return ci_halfwidth([np.asarray(v) for v in by_launch if len(v)]) <= precision


def open_turns(planned: list[T], sampled: dict[tuple[Any, str], tuple[dict[int, list[float]],
                                                                     float]],
               broken: dict[tuple[Any, str], str], more: float) -> list[T]:
    """The planned (cell, variant) turns whose cell has a comparison, fastest against another
    as the report makes it, that is still undecided and that about `more` further launches
    could decide, the comparisons nearest a decision first; `sampled` holds each measured
    turn's observations per launch."""
    by_cell: dict[Any, dict[str, T]] = {}
    for turn in planned:
        cell, variant = turn  # type: ignore[misc]
        if BENCHMARKS[cell.bench].kind == "cost" or (cell, variant.id) in broken:
            continue
        by_launch = sampled.get((cell, variant.id), ({}, 0.0))[0]
        if any(by_launch.values()):
            by_cell.setdefault(cell, {})[variant.id] = turn
    cells = [c for c, turns in by_cell.items() if len(turns) > 1]
    samples = [{v: [np.asarray(x) for x in sampled[c, v][0].values() if x] for v in by_cell[c]}
               for c in cells]
    wanted: list[tuple[int, T]] = []
    for cell, judged in zip(cells, verdicts(samples), strict=True):
        for v in judged:
            short = v.needed - max(v.launches_fast, v.launches_slow)
            if v.outcome == "undecided" and v.needed and short <= more:
                wanted += [(short, by_cell[cell][v.fast]), (short, by_cell[cell][v.slow])]
    return list(dict.fromkeys(turn for _, turn in sorted(wanted, key=lambda w: w[0])))


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
