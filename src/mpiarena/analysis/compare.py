"""Two runs compared: the two are two sets of launches, and every shared cell timed by the
same method gets the verdicts' ratio, interval, launch test and decision, held against the
drift between the two runs that the shared cells show together (`Drift`)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ..base.records import Cell
from ..model.benchmarks import BENCHMARKS
from ..store.results import Group, RunData
from .comparison import Compared, Comparison
from .groups import measured
from .stats import ALPHA, CONFIDENCE, NORMAL, THRESHOLD, Pair, judge, median, widened
from .verdicts import MOVEMENTS, Judgement, Movement

Z = NORMAL.inv_cdf((1 + CONFIDENCE) / 2)  # how many sds a normal's 95% range reaches either way
# How many of Drift's sds (the MAD of the variants' log ratios, each variant's drift one draw
# shared by its cells) cover 97.5% of the drifts a variant draws, for 1..12 variants: worked out
# from 200,000 sets of normal draws each, the variant's own draw inside the MAD (with one
# variant the MAD is its own drift; with three, the median of three |draws| can sit far below
# the largest). The normal's 1.96 called 2.8% of identical cells changed with 3 variants.
DRIFT_REACH = (0.67, 1.30, 3.35, 2.54, 3.02, 2.64, 2.83, 2.60, 2.71, 2.56, 2.63, 2.53)
MIN_CELLS = 3  # log ratios before drift is measured: a median that one real change cannot move
MAD_SD = 1 / NORMAL.inv_cdf(0.75)  # a normal's sd over its median absolute deviation
# a ratio of medians of launch medians spreads more than Moses' interval (a Hodges-Lehmann
# shift) says: their asymptotic efficiencies are 2/pi and 3/pi
MEDIAN_OVER_SHIFT = math.sqrt(1.5)


@dataclass(frozen=True)
class Drift:
    """How far figures moved between the runs beyond their launches' noise, as all the cells
    judged together show it: the robust sd (MAD about no change) of their log ratios, less the
    part their launches' intervals explain. Unchanged cells move by it too, so no launch sees
    it; a run-level drift common to a variant's cells counts once per variant."""

    spread: float  # sd of the log ratio that drift alone gives (0: the launches explain it all)
    cells: int  # log ratios it was measured on
    variants: int

    @property
    def covered(self) -> bool:
        """Whether there were enough cells to measure it (else drift is not covered)."""
        return self.cells >= MIN_CELLS

    @property
    def allowance(self) -> float:
        """How far drift alone moves a log ratio, 97.5% of the time; 0 when not covered. Its
        sd is estimated from as many draws as variants, not cells (a drift common to a
        variant's cells is drawn once), so the range is DRIFT_REACH's, not the normal's."""
        return self.reach * self.spread if self.covered else 0.0

    @property
    def reach(self) -> float:
        """How many sds of drift its range reaches, for as many variants as drew it
        (DRIFT_REACH; the last beyond)."""
        return DRIFT_REACH[min(max(self.variants, 1), len(DRIFT_REACH)) - 1]


@dataclass(frozen=True)
class Change(Compared):
    """One cell of one variant in run a (before) against run b (after)."""

    key: Cell
    variant: str  # in run a
    other: str  # in run b
    comparison: Comparison  # b over a: above 1 is slower after
    drift: Drift  # between the runs, as the cells judged with this one show it
    held: bool  # the launches decided it, the drift between the runs leaves it undecided

    @property
    def outcome(self) -> Movement:
        """Regression, improvement, indistinguishable, or undecided (held by the drift too)."""
        return Movement.UNDECIDED if self.held else MOVEMENTS[self.comparison.outcome]


Shared = tuple[Cell, str, str, Group, Group]  # key, variant in a, variant in b, their groups


def compare_runs(a: RunData, b: RunData, pairs: dict[str, str] | None = None,
                 alpha: float = ALPHA, threshold: float = THRESHOLD) -> list[Change]:
    """Every cell measured in both runs for the same variant (or the `pairs` a -> b, to follow
    an upgrade such as mpich-4.0.2 -> mpich-5.0.2): the two runs are two sets of launches, and
    the ratio, its interval, the launch test (corrected across all cells, stats.CORRECTION) and the
    decision are those of `stats.judge`, held against the drift between the runs that all
    shared cells show (`judged`); with fewer than MIN_CELLS of them drift is not covered. Cells
    whose calls were timed by different methods are not compared (see `timed_differently`)."""
    return judged([s for s in _shared(a, b, pairs) if s[3].timing == s[4].timing], alpha,
                  threshold)


def judged(shared: list[Shared], alpha: float = ALPHA, threshold: float = THRESHOLD,
           gauges: Sequence[bool] | None = None) -> list[Change]:
    """Each cell's group before against after, judged by `stats.judge` as one family (a
    history's changes across many runs go through here too), then held against the drift that
    the changes `gauges` marks (all by default) show together (`drift_of`): a regression or
    improvement stands only where its interval widened by the drift still excludes no change,
    and indistinguishable only where it still lies within the threshold."""
    verdicts = judge([Pair(ga.nested, gb.nested) for *_, ga, gb in shared], alpha, threshold)
    marks = gauges if gauges is not None else [True] * len(shared)
    drift = drift_of([(s[1], j) for s, j, mark in zip(shared, verdicts, marks, strict=True)
                      if mark])
    out = []
    for (key, va, vb, _, _), j in zip(shared, verdicts, strict=True):
        held = _held(j, drift.allowance, threshold)
        out.append(Change(key, va, vb, j, drift, held))
    return out


def drift_of(reads: Sequence[tuple[str, Comparison]]) -> Drift:
    """The drift between runs that these changes (variant, verdict) show together: the robust
    sd of their log ratios about no change (a median, so that changes of under half of them
    leave it), less the typical variance their launches' intervals account for."""
    logs = [abs(math.log(j.ratio)) for _, j in reads if 0 < j.ratio < math.inf]
    variants = len({variant for variant, _ in reads})
    if len(logs) < MIN_CELLS:
        return Drift(0.0, len(logs), variants)
    noise = [(MEDIAN_OVER_SHIFT * math.log(j.ci_high / j.ci_low) / (2 * Z)) ** 2
             for _, j in reads if 0 < j.ci_low <= j.ci_high < math.inf]
    moved = MAD_SD * median(logs)
    return Drift(math.sqrt(max(0.0, moved**2 - (median(noise) if noise else 0.0))),
                 len(logs), variants)


def _held(j: Comparison, allowance: float, threshold: float) -> bool:
    """Whether the drift undoes the launches' decision: a change whose widened interval
    reaches no change, or an indistinguishable one whose widened interval reaches beyond the
    threshold."""
    low, high = widened(j.ratio, j.ci_low, j.ci_high, allowance)
    return {Judgement.ABOVE: low <= 1, Judgement.BELOW: high >= 1,
            Judgement.SAME: low < 1 / (1 + threshold) or high > 1 + threshold
            }.get(j.outcome, False)


def timed_differently(a: RunData, b: RunData,
                      pairs: dict[str, str] | None = None) -> dict[tuple[str, str], int]:
    """(method in a, method in b) -> how many cells both runs measured but timed differently:
    their figures differ by the method (a loop pipelines), so they are not compared."""
    out: dict[tuple[str, str], int] = {}
    for _key, _va, _vb, ga, gb in _shared(a, b, pairs):
        if ga.timing != gb.timing:
            out[ga.timing, gb.timing] = out.get((ga.timing, gb.timing), 0) + 1
    return out


def same_sums(a: RunData, b: RunData, bench: str) -> bool:
    """Whether two runs' figures of bench are like with like as far as datatypes go: it adds
    nothing up, or both runs summed the same datatype."""
    return not BENCHMARKS[bench].sums or a.settings.sums == b.settings.sums


def summed_differently(a: RunData, b: RunData) -> list[str]:
    """The sum benchmarks both runs measured where they summed different datatypes (none where
    they summed the same): those cells are not compared."""
    both = {k.bench for k in a.cells} & {k.bench for k in b.cells}
    return [bench for bench in BENCHMARKS if bench in both and not same_sums(a, b, bench)]


def _shared(a: RunData, b: RunData, pairs: dict[str, str] | None) -> Iterator[Shared]:
    """(key, variant in a, variant in b, group in a, group in b) of every timed cell measured
    in both runs (a sum: of the same datatype)."""
    pairs = pairs if pairs is not None else {v: v for v in a.variants if v in b.variants}
    for key in sorted(k for k in set(a.cells) & set(b.cells)
                      if BENCHMARKS[k.bench].unit == "s" and same_sums(a, b, k.bench)):
        for va, vb in pairs.items():
            ga, gb = a.cells[key].get(va), b.cells[key].get(vb)
            if measured(ga) and measured(gb):
                assert ga is not None and gb is not None
                yield key, va, vb, ga, gb
