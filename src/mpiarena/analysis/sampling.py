"""The narrow interface adaptive sampling consults: whether a cell's figure is known to the
precision asked, over launches, and afterwards which cells got there; under a time budget,
which cells' comparisons more launches are bought for, early stops paid for at looks."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import numpy as np

from ..base.records import Cell
from ..model.benchmarks import BENCHMARKS, Kind
from ..model.guidelines import GUIDELINES
from ..store.results import RunData
from .counterparts import COUNTERPARTS
from .groups import measured
from .stats import MAX_LOOKS, Sample, ci_halfwidth, crosses, looks

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
    each look taken once (keyed by the unordered pair: a flip of which side is faster does not
    restart its count)."""

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
        n = min(len(a), len(b))  # launches with observations (a sample holds no others)
        if n >= self.base * 2 ** (MAX_LOOKS - 1):  # the last look reached: the design's end
            return True
        due = looks(self.base, n)
        if any(crosses(a, b, at) for at in due[self.taken.get(pair, 0):]):
            self.closed.add(pair)
        self.taken[pair] = len(due)
        return pair in self.closed


def open_pairs(cells: Mapping[K, Mapping[str, Sample]], seen: Looks) -> list[tuple[K, str, str]]:
    """Every pair of variants of every cell (all pairs, fixed before the data) that has not
    crossed a look's boundary: the comparisons the budget still buys launches for. Nothing
    else of a comparison's data decides whether it gets launches."""
    return [(key, a, b) for key, cell in cells.items()
            for a, b in itertools.combinations(cell, 2)
            if not seen.closes(key, a, b, cell[a], cell[b])]


@dataclass
class Spending(Generic[K]):
    """The budget's loop, one decision a round (`mpiarena run --budget` and
    `rule_check.simulate` both run it): `sessions` are the base sessions, by index (each its
    shared session and its lone ones, each a list of (cell, variant) turns in order),
    `together` the cells judged launch by launch against a cell (a collective and its
    mock-up), bought in the same launches."""

    seen: Looks
    sessions: Sequence[Sequence[Sequence[tuple[K, str]]]]
    rng: random.Random
    together: Mapping[K, Sequence[K]] = field(default_factory=dict)
    rounds: int = 0

    def next_round(self, cells: Mapping[K, Mapping[str, Sample]], seconds: float,
                   cost: Mapping[str, float]) -> list[list[tuple[K, str]]]:
        """The sessions of the next round's partial launches: of one base index picked at random,
        the turns of both sides of every pair not closed (`open_pairs`), with the cells bought
        together with them, a variant costing `period` times the cheapest one's launch only
        every that many rounds; none where nothing is open or they do not fit in `seconds`
        together (a launch of variant v costing cost[v]). Which pairs are open changes only at
        looks, where a boundary is crossed; no comparison's estimate orders or starves it."""
        wanted = {(key, v) for key, a, b in open_pairs(cells, self.seen) for v in (a, b)}
        wanted |= {(k, v) for key, v in wanted for k in self.together.get(key, ())}
        cheapest = min((cost[v] for _, v in wanted if cost[v] > 0), default=0.0)
        due = {v for _, v in wanted if self.rounds % period(cost[v], cheapest) == 0}
        self.rounds += 1
        session = self.rng.choice(self.sessions)
        launches = [kept for launch in session
                    if (kept := [t for t in launch if t in wanted and t[1] in due])]
        if sum(cost[v] for v in {v for launch in launches for _, v in launch}) > seconds:
            return []
        return launches


def period(cost: float, cheapest: float) -> int:
    """Every how many rounds a variant whose launch costs `cost` is launched, the cheapest
    launched every round: a PVM launch of 1.6 s beside MPI libraries' 0.12 s would otherwise
    take most of each round."""
    return max(1, round(cost / cheapest)) if cheapest > 0 else 1


def bought_together(cells: Iterable[Cell]) -> dict[Cell, list[Cell]]:
    """Each cell's partners among `cells` that a variant's cell is judged against launch by
    launch (a collective and its mock-up, a benchmark and its MPI-1 counterpart): a partial
    launch measuring one measures the other too, so the pair keeps sharing all its launches."""
    pairs = [(g.collective, g.mockup) for g in GUIDELINES] + \
        [(c.bench, c.against) for c in COUNTERPARTS]
    known = set(cells)
    out: dict[Cell, list[Cell]] = {}
    for x, y in pairs:
        for cell in known:
            for mine, other in ((x, y), (y, x)):
                partner = Cell(other, cell.size, cell.np)
                if cell.bench == mine and partner in known:
                    out.setdefault(cell, []).append(partner)
    return out


@dataclass(frozen=True)
class Missed:
    """A cell whose figure never reached the precision."""

    key: Cell
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
