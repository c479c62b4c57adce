"""The words every decision is given in, one enum per concept, defined once, and each
context's words read off a comparison's one outcome (`Judgement`), the pair's order fixed here.

They are StrEnums: each member equals the word reports print and exports write, so output stays
the same; code compares members, never the words (tests/test_vocabulary.py holds it to that).
"""

from __future__ import annotations

from enum import StrEnum


class Judgement(StrEnum):
    """`stats.judge`'s decision on a pair, the one outcome every comparison has: b's figure
    over a's above (b slower) or below (b faster) by more than the threshold, the two within
    it, or nothing decided yet. Each context's words below read it in this order."""

    ABOVE = "above"
    BELOW = "below"
    SAME = "same"
    OPEN = "open"


class Speed(StrEnum):
    """One variant (or benchmark) against another: faster or slower by more than the threshold,
    within it, or not decided."""

    FASTER = "faster"
    SLOWER = "slower"
    INDISTINGUISHABLE = "indistinguishable"
    UNDECIDED = "undecided"


class Movement(StrEnum):
    """A cell from one run to a later one: slower (a regression), faster (an improvement),
    within the threshold, or not decided."""

    REGRESSION = "regression"
    IMPROVEMENT = "improvement"
    INDISTINGUISHABLE = "indistinguishable"
    UNDECIDED = "undecided"

    @property
    def decided(self) -> bool:
        """A regression or an improvement: the cell moved beyond the threshold."""
        return self in (Movement.REGRESSION, Movement.IMPROVEMENT)


class Sureness(StrEnum):
    """How sure a cell's lowest figure is: decided against every other variant, level with some
    (within the threshold, the rest decided), or open against some."""

    DECIDED = "decided"
    LEVEL = "level"
    OPEN = "open"


class GuidelineResult(StrEnum):
    """A self-consistency guideline in one cell: its mock-up ran faster (violated), or not
    (held), or not decided."""

    VIOLATED = "violated"
    HELD = "held"
    UNDECIDED = "undecided"


class TuningEffect(StrEnum):
    """A tuning file against the library's default in one cell: better, worse, the same within
    the threshold, not decided, or not compared (a side failed)."""

    BETTER = "better"
    WORSE = "worse"
    SAME = "same"
    UNDECIDED = "undecided"
    FAILED = "failed"


class Progress(StrEnum):
    """How much of a non-blocking collective a computation hides: most of it (yes), little
    (no), some (partial), or not decided by the interval."""

    YES = "yes"
    PARTIAL = "partial"
    NO = "no"
    UNDECIDED = "undecided"


class ClaimResult(StrEnum):
    """A study's conclusion checked against what was measured."""

    HOLDS = "holds"
    FAILS = "does not hold"
    PARTLY = "partly"
    UNDECIDED = "undecided"
    CANNOT = "cannot test"


# --- each context's words, read off a comparison's outcome (b over a), every member a key ------

# b's speed against a: a benchmark over its counterpart
SPEED_OF_B = {Judgement.ABOVE: Speed.SLOWER, Judgement.BELOW: Speed.FASTER,
              Judgement.SAME: Speed.INDISTINGUISHABLE, Judgement.OPEN: Speed.UNDECIDED}
# a's speed against b, read either way round (the answer reads a pair from either side)
SPEED_OF_A = {Judgement.ABOVE: Speed.FASTER, Judgement.BELOW: Speed.SLOWER,
              Judgement.SAME: Speed.INDISTINGUISHABLE, Judgement.OPEN: Speed.UNDECIDED}
# a's speed against b, where a is a cell's fastest (or the algorithm a tuning picks): below
# says the other way round from how a was picked, so nothing is decided
SPEED_OF_FASTEST = {Judgement.ABOVE: Speed.FASTER, Judgement.SAME: Speed.INDISTINGUISHABLE,
                    Judgement.BELOW: Speed.UNDECIDED, Judgement.OPEN: Speed.UNDECIDED}
# how a cell moved from run a to run b
MOVEMENTS = {Judgement.ABOVE: Movement.REGRESSION, Judgement.BELOW: Movement.IMPROVEMENT,
             Judgement.SAME: Movement.INDISTINGUISHABLE, Judgement.OPEN: Movement.UNDECIDED}
# a collective (b) over its mock-up (a): the guideline's result
GUIDELINE_RESULTS = {Judgement.ABOVE: GuidelineResult.VIOLATED,
                     Judgement.BELOW: GuidelineResult.HELD, Judgement.SAME: GuidelineResult.HELD,
                     Judgement.OPEN: GuidelineResult.UNDECIDED}
# the default (b) over the tuning file (a): the file's effect
TUNING_EFFECTS = {Judgement.ABOVE: TuningEffect.BETTER, Judgement.BELOW: TuningEffect.WORSE,
                  Judgement.SAME: TuningEffect.SAME, Judgement.OPEN: TuningEffect.UNDECIDED}
