"""Two program runs compared: per figure and library, run b's launches against run a's, judged by
`stats.judge` (corrected across every pair of the comparison)."""

from __future__ import annotations

from dataclasses import dataclass

from .comparison import Compared, Comparison
from .program import ProgramResult, launch_sample
from .stats import ALPHA, THRESHOLD, Pair, judge
from .verdicts import MOVEMENTS, Movement


@dataclass(frozen=True)
class ProgramChange(Compared):
    """One figure of one library in run a (before) against run b (after)."""

    figure: str
    higher: bool  # higher is better: the ratio is of the inverse, as the verdicts judge it
    variant: str  # in run a
    other: str  # in run b
    comparison: Comparison  # b over a, of the figure (of its inverse if higher): above 1 worse

    @property
    def outcome(self) -> Movement:
        return MOVEMENTS[self.comparison.outcome]


def compare_programs(a: ProgramResult, b: ProgramResult, pairs: dict[str, str] | None = None,
                 alpha: float = ALPHA, threshold: float = THRESHOLD) -> list[ProgramChange]:
    """Every figure both runs have (by name, the same direction) for the same library, or the
    `pairs` a -> b: the two runs' timed launches that ended well are two samples."""
    pairs = pairs if pairs is not None else {v: v for v in a.variants if v in b.variants}
    theirs = {f.name: f for f in b.figures}
    shared = [(fa, theirs[fa.name], va, vb) for fa in a.figures for va, vb in pairs.items()
              if fa.name in theirs and theirs[fa.name].higher == fa.higher
              and launch_sample(fa.values.get(va, []), fa.higher)
              and launch_sample(theirs[fa.name].values.get(vb, []), fa.higher)]
    judged = judge([Pair(launch_sample(fa.values[va], fa.higher),
                          launch_sample(fb.values[vb], fb.higher))
                    for fa, fb, va, vb in shared], alpha, threshold)
    return [ProgramChange(fa.name, fa.higher, va, vb, j)
            for (fa, _, va, vb), j in zip(shared, judged, strict=True)]
