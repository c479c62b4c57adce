"""One pair judged: the record every comparison of two figures is given in, and why one is open.

`stats.judge` makes it; a context that needs words of its own (a regression, a violated
guideline, a tuning's gain) reads them off its outcome through a table of analysis/verdicts.py,
where the pair's order (b's figure over a's) is fixed once.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from .verdicts import Judgement


class Why(StrEnum):
    """Why a comparison is open: too few launches a side for any decision; the interval lies
    beyond the threshold but the corrected test does not back it; the interval reaches within
    the threshold; the ratio sits on the threshold (no number of launches would decide it); the
    launches decide it but the run-to-run spread (analysis/run_spread.py) does not let it
    stand; a side's launches fall in two states and the verdict holds in one only
    (`stats.by_state`); a side's level in this run moved from this machine's earlier runs."""

    LAUNCHES = "launches"
    TEST = "test"
    INTERVAL = "interval"
    THRESHOLD = "threshold"
    SPREAD = "spread"
    STATE = "state"
    MOVED = "moved"


@dataclass(frozen=True)
class Comparison:
    """A pair judged: b's figure over a's as the Hodges-Lehmann ratio of launch medians (paired
    launch by launch where both sides share launches), its interval, the corrected test behind
    it and the outcome."""

    ratio: float
    ci_low: float
    ci_high: float
    p_adjusted: float  # the launch test of a ratio beyond the threshold, corrected (CORRECTION)
    outcome: Judgement
    launches_a: int
    launches_b: int
    needed: int  # open: about how many launches per variant would decide it (0: unknown)
    why: Why | None = None  # open: why
    paired: bool = False  # read launch by launch over the launches both sides share
    strata: int = 1  # launch shapes both sides have, read apart and pooled (paired: 1)
    allowance: float = 0.0  # log: the run-to-run spread the interval was widened by (`allowed`)

    @property
    def launches(self) -> int:
        """The fewer launches of the two sides."""
        return min(self.launches_a, self.launches_b)


def not_judged(ratio: float = 1.0) -> Comparison:
    """The comparison of a record whose pair was not judged (a side failed): open, no
    launches."""
    return Comparison(ratio, ratio, ratio, 1.0, Judgement.OPEN, 0, 0, 0)


class Compared:
    """A record that embeds a `Comparison` (its field `comparison`) and reads its figures
    through it: the context's own words are its own properties, read off the outcome."""

    comparison: Comparison

    @property
    def ratio(self) -> float:
        return self.comparison.ratio

    @property
    def ci_low(self) -> float:
        return self.comparison.ci_low

    @property
    def ci_high(self) -> float:
        return self.comparison.ci_high

    @property
    def p_adjusted(self) -> float:
        return self.comparison.p_adjusted

    @property
    def needed(self) -> int:
        return self.comparison.needed

    @property
    def launches(self) -> int:
        return self.comparison.launches

    @property
    def launches_a(self) -> int:
        return self.comparison.launches_a

    @property
    def launches_b(self) -> int:
        return self.comparison.launches_b
