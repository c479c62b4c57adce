"""Two runs compared: the two are two sets of launches, and every shared cell timed by the
same method gets the verdicts' ratio, interval, launch test and decision."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from ..benchmarks import BENCHMARKS
from ..results import Group, Key, RunData
from .groups import measured
from .stats import ALPHA, THRESHOLD, Pair, judge

Outcome = Literal["regression", "improvement", "indistinguishable", "undecided"]
# stats.judge of b's figure over a's -> what it means for run b
OUTCOMES: dict[str, Outcome] = {"above": "regression", "below": "improvement",
                                "same": "indistinguishable", "open": "undecided"}


@dataclass(frozen=True)
class Change:
    """One cell of one variant in run a (before) against run b (after)."""

    key: Key
    variant: str  # in run a
    other: str  # in run b
    ratio: float  # median(b) / median(a): above 1 is slower after
    ci_low: float
    ci_high: float
    p_adjusted: float
    outcome: Outcome
    n_a: int  # launches
    n_b: int


Shared = tuple[Key, str, str, Group, Group]  # key, variant in a, variant in b, their groups


def compare_runs(a: RunData, b: RunData, pairs: dict[str, str] | None = None,
                 alpha: float = ALPHA, threshold: float = THRESHOLD) -> list[Change]:
    """Every cell measured in both runs for the same variant (or the `pairs` a -> b, to follow
    an upgrade such as mpich-4.0.2 -> mpich-5.0.2): the two runs are two sets of launches, and
    the ratio, its interval, the launch test (Holm-corrected across all cells) and the
    decision are those of `stats.judge`. Drift between the two runs that no launch saw is
    outside every interval: an A/A pair of runs shows how much there is. Cells whose calls were
    timed by different methods are not compared (see `timed_differently`)."""
    return judged([s for s in _shared(a, b, pairs) if s[3].timing == s[4].timing], alpha,
                  threshold)


def judged(shared: list[Shared], alpha: float = ALPHA,
           threshold: float = THRESHOLD) -> list[Change]:
    """Each cell's group before against after, judged by `stats.judge` as one family (a
    history's changes across many runs go through here too)."""
    verdicts = judge([Pair(ga.nested, gb.nested) for *_, ga, gb in shared], alpha, threshold)
    return [Change(key, va, vb, j.ratio, j.ci_low, j.ci_high, j.p_adjusted, OUTCOMES[j.outcome],
                   j.launches_a, j.launches_b)
            for (key, va, vb, _, _), j in zip(shared, verdicts, strict=True)]


def timed_differently(a: RunData, b: RunData,
                      pairs: dict[str, str] | None = None) -> dict[tuple[str, str], int]:
    """(method in a, method in b) -> how many cells both runs measured but timed differently:
    their figures differ by the method (a loop pipelines), so they are not compared."""
    out: dict[tuple[str, str], int] = {}
    for _key, _va, _vb, ga, gb in _shared(a, b, pairs):
        if ga.timing != gb.timing:
            out[ga.timing, gb.timing] = out.get((ga.timing, gb.timing), 0) + 1
    return out


def _shared(a: RunData, b: RunData, pairs: dict[str, str] | None) -> Iterator[Shared]:
    """(key, variant in a, variant in b, group in a, group in b) of every timed cell measured
    in both runs."""
    pairs = pairs if pairs is not None else {v: v for v in a.variants if v in b.variants}
    for key in sorted(k for k in set(a.cells) & set(b.cells) if BENCHMARKS[k.bench].unit == "s"):
        for va, vb in pairs.items():
            ga, gb = a.cells[key].get(va), b.cells[key].get(vb)
            if measured(ga) and measured(gb):
                assert ga is not None and gb is not None
                yield key, va, vb, ga, gb

