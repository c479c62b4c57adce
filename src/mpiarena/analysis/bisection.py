"""The release where a figure changed, as asv's `find` bisects commits: the ends of a series
measured together first; each cell the verdict rule decides differs between them bisected,
every step measuring a midpoint with its two bracketing releases in fresh launches, judged by
`stats.judge` as one family per step."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from ..base.records import Cell
from .comparison import Comparison
from .stats import ALPHA, THRESHOLD, Pair, Sample, judge
from .verdicts import Judgement

# what one step measured: each cell's sample per release (an index into the series)
StepSamples = Mapping[Cell, Mapping[int, Sample]]
# measures the releases (series indexes, oldest first) in fresh launches, for these cells
# (none named: every cell)
MeasureReleases = Callable[[tuple[int, ...], Collection[Cell]], StepSamples]
DECIDED = (Judgement.ABOVE, Judgement.BELOW)


class Placed(StrEnum):
    """How closely a change was placed: between two neighbours of the series; over a range no
    single pair of them carries (both halves of its last step within the threshold); or not
    placed within a range, a half of it undecided or not judged (more launches, or a release
    that measured, would place it)."""

    LOCATED = "located"
    SPREAD = "spread"
    UNPLACED = "unplaced"


@dataclass(frozen=True)
class SpanStep:
    """One pair of releases judged in one step: the later's figure over the earlier's."""

    before: int
    after: int
    judged: Comparison


@dataclass(frozen=True)
class ReleaseChange:
    """A cell that changed between releases `before` and `after` of the series: slower (above)
    or faster (below), located between neighbours or spread, with the verdict that placed it,
    the step that measured it (an index into Bisection.steps) and, spread, the sizes of the
    steps inside."""

    key: Cell
    before: int
    after: int
    direction: Judgement
    judged: Comparison
    where: Placed
    step: int
    inside: tuple[SpanStep, ...] = ()


@dataclass
class Bisection:
    """What the bisection measured and found: the ends' verdict per cell, the changes, each
    step's releases in the order measured."""

    size: int  # releases in the series
    ends: dict[Cell, Comparison] = field(default_factory=dict)
    changes: list[ReleaseChange] = field(default_factory=list)
    steps: list[tuple[int, ...]] = field(default_factory=list)

    @property
    def measured(self) -> list[int]:
        """The releases measured at least once, oldest first."""
        return sorted({r for step in self.steps for r in step})

    @property
    def differs(self) -> bool:
        """The ends were decided different in some cell."""
        return any(j.outcome in DECIDED for j in self.ends.values())


def bisect(size: int, measure: MeasureReleases, alpha: float = ALPHA,
           threshold: float = THRESHOLD) -> Bisection:
    """Bisect a series of `size` releases (oldest first). The ends first: where no cell is
    decided different, nothing more is measured. Then each span (before, after) that carries
    changed cells is split at its midpoint, measured with both ends: a half decided different
    carries the change on (both halves: a change in each, each followed in its own direction);
    where both halves lie within the threshold, the change is spread over the span; where
    neither half is decided different and one is undecided or not judged, it is not placed
    within the span; both reported with the halves' sizes. A span of neighbours places its
    changes there."""
    out = Bisection(size)
    if size < 2:
        return out
    last = size - 1
    out.steps.append((0, last))
    ends = _judged(measure((0, last), ()), [(0, last)], None, alpha, threshold)
    out.ends = {key: j for (key, _, _), j in ends.items()}
    spans: dict[tuple[int, int], set[Cell]] = {}
    for (key, _, _), j in ends.items():
        if j.outcome in DECIDED:
            spans.setdefault((0, last), set()).add(key)
    verdicts = {(key, b, a): _Verdict(j, 0) for (key, b, a), j in ends.items()}
    while spans:
        (lo, hi), cells = min(spans.items())
        del spans[(lo, hi)]
        if hi - lo == 1:
            out.changes += [_change(key, lo, hi, verdicts[(key, lo, hi)], Placed.LOCATED)
                            for key in sorted(cells)]
            continue
        mid = (lo + hi) // 2
        out.steps.append((lo, mid, hi))
        step = _judged(measure((lo, mid, hi), cells), [(lo, mid), (mid, hi)], cells, alpha,
                       threshold)
        verdicts |= {k: _Verdict(j, len(out.steps) - 1) for k, j in step.items()}
        for key in sorted(cells):
            halves = [(b, a) for b, a in ((lo, mid), (mid, hi))
                      if (key, b, a) in step and step[(key, b, a)].outcome in DECIDED]
            for half in halves:
                spans.setdefault(half, set()).add(key)
            if not halves:
                inside = tuple(SpanStep(b, a, step[(key, b, a)]) for b, a in ((lo, mid), (mid, hi))
                               if (key, b, a) in step)
                spread = len(inside) == 2 and all(s.judged.outcome == Judgement.SAME
                                                  for s in inside)
                out.changes.append(_change(key, lo, hi, verdicts[(key, lo, hi)],
                                           Placed.SPREAD if spread else Placed.UNPLACED, inside))
    out.changes.sort(key=lambda c: (c.key, c.before))
    return out


@dataclass(frozen=True)
class _Verdict:
    """A span's verdict on a cell and the step (an index into Bisection.steps) that gave it."""

    judged: Comparison
    step: int


def _change(key: Cell, before: int, after: int, verdict: _Verdict, where: Placed,
            inside: tuple[SpanStep, ...] = ()) -> ReleaseChange:
    return ReleaseChange(key, before, after, verdict.judged.outcome, verdict.judged, where,
                         verdict.step, inside)


def _judged(measured: StepSamples, pairs: Sequence[tuple[int, int]], cells: Collection[Cell] | None,
            alpha: float, threshold: float) -> dict[tuple[Cell, int, int], Comparison]:
    """Every cell's pairs (earlier, later) that both sides measured, judged as one family."""
    asked = [(key, b, a) for key in sorted(measured) if cells is None or key in cells
             for b, a in pairs if b in measured[key] and a in measured[key]]
    judged = judge([Pair(measured[key][b], measured[key][a]) for key, b, a in asked], alpha,
                   threshold)
    return dict(zip(asked, judged, strict=True))
