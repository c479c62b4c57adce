"""Which collective algorithm a library's default behaves like, per cell of a tuning run.

A tuning run measures each algorithm a library offers, forced, beside the library's default.
Per collective, size and rank count, the default is judged against every forced algorithm by
`stats.judge`, all pairs of the run one family (corrected together): 'like' an algorithm where
the two are indistinguishable, 'unlike' where the default is decidedly faster or slower, 'open'
otherwise. An algorithm that failed, hung or gave wrong data in a launch of the cell is not
compared there; a cell whose default did not measure has no fingerprint.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..store.results import RunData
from .comparison import Compared, Comparison
from .library_tuning import Tuned, own_losses, usable
from .stats import Pair, center, judge
from .verdicts import SPEED_OF_B, Judgement, Speed


@dataclass(frozen=True)
class Unlike(Compared):
    """A forced algorithm the default decidedly differs from."""

    algorithm: str
    comparison: Comparison  # the default's figure over the algorithm's (above 1: slower)

    @property
    def speed(self) -> Speed:
        """The default's against the algorithm: faster or slower."""
        return SPEED_OF_B[self.comparison.outcome]


@dataclass(frozen=True)
class Fingerprint:
    """One cell of one implementation: the forced algorithms its default behaves like."""

    coll: str
    size: int
    np: int
    impl_id: str
    like: list[str]  # indistinguishable from the default
    unlike: list[Unlike]  # decidedly faster or slower than the default
    open: list[str]  # undecided
    fastest: str  # the forced algorithm with the lowest figure


def tuned_of(data: RunData) -> dict[str, Tuned]:
    """A run's forced-algorithm variants, as the tuning run recorded them ({} for other runs)."""
    return {v: Tuned(t["impl"], t["coll"], t["algorithm"])
            for v, t in data.settings.tuning.items()}


def fingerprints(data: RunData, tuned: dict[str, Tuned]) -> list[Fingerprint]:
    """Per cell and implementation, the default against every forced algorithm measured there."""
    cells, pairs = [], []
    for key in sorted(data.cells):
        bench, size, np_ = key
        cell = data.cells[key]
        for impl in sorted({t.impl for t in tuned.values() if t.coll == bench}):
            default = cell.get(impl)
            mine = sorted(v for v, t in tuned.items() if t.impl == impl and t.coll == bench
                          and usable(cell.get(v)) and not own_losses(cell, v, impl))
            if default is None or not usable(default) or not mine:
                continue
            cells.append((bench, size, np_, impl, mine,
                          min(mine, key=lambda v: center(cell[v].nested))))
            pairs += [Pair(cell[v].nested, default.nested) for v in mine]
    judged = iter(judge(pairs))
    out = []
    for bench, size, np_, impl, mine, fastest in cells:
        like, unlike, undecided = [], [], []
        for v in mine:
            j, name = next(judged), tuned[v].algorithm
            if j.outcome == Judgement.SAME:
                like.append(name)
            elif j.outcome in (Judgement.ABOVE, Judgement.BELOW):
                unlike.append(Unlike(name, j))
            else:
                undecided.append(name)
        out.append(Fingerprint(bench, size, np_, impl, like, unlike, undecided,
                               tuned[fastest].algorithm))
    return sorted(out, key=lambda f: (f.impl_id, f.coll, f.np, f.size))
