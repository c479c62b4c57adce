"""Whether a difference between two builds of neighbouring releases (a distribution's and the
index's) follows the build or the release: the two measured together with the second under
each build lever it has (a netmod it can run instead of its default), every pair judged by
`stats.judge` as one family."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from ..base.records import Cell
from .bisection import DECIDED
from .comparison import Comparison
from .stats import ALPHA, THRESHOLD, Pair, Sample, judge
from .verdicts import Judgement


class Follows(StrEnum):
    """What a difference between two builds follows: a build choice a lever undoes, the release
    (no lever tried makes them alike), or neither can be told here."""

    BUILD = "build"
    RELEASE = "release"
    NOT_SEPARABLE = "not separable here"


@dataclass(frozen=True)
class Attribution:
    """One cell: the second build over the first as they come, and under each lever."""

    key: Cell
    plain: Comparison
    follows: Follows
    levers: tuple[tuple[str, Comparison], ...]  # (lever, the second under it over the first)

    @property
    def undone_by(self) -> str | None:
        """The first lever under which the two lie within the threshold."""
        return next((name for name, j in self.levers if j.outcome == Judgement.SAME), None)


def attribute(samples: Mapping[Cell, Mapping[str, Sample]], first: str, second: str,
              levers: Sequence[str], alpha: float = ALPHA,
              threshold: float = THRESHOLD) -> list[Attribution]:
    """For every cell where the two builds as they come are decided different (samples keyed
    by variant: `first`, `second`, and `second` under each of `levers`): the build, where
    under some lever the two lie within the threshold; the release, where under every lever
    they differ the same way; else not separable here (no lever, or one undecided)."""
    asked = [(key, other) for key in sorted(samples) if {first, second} <= set(samples[key])
             for other in (second, *levers) if other in samples[key]]
    judged = dict(zip(asked, judge([Pair(samples[k][first], samples[k][o]) for k, o in asked],
                                   alpha, threshold), strict=True))
    out = []
    for key in sorted({k for k, _ in asked}):
        plain = judged[(key, second)]
        if plain.outcome not in DECIDED:
            continue
        under = tuple((name, judged[(key, name)]) for name in levers if (key, name) in judged)
        if any(j.outcome == Judgement.SAME for _, j in under):
            follows = Follows.BUILD
        elif under and all(j.outcome == plain.outcome for _, j in under):
            follows = Follows.RELEASE
        else:
            follows = Follows.NOT_SEPARABLE
        out.append(Attribution(key, plain, follows, under))
    return out
