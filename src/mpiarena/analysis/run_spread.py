"""How far a figure and a ratio move between runs of one machine, and the allowance a run's
intervals carry for it.

A library's level can move between runs while its launches agree inside each: no launch of a
run sees what moves the whole run, so no interval made from them holds a rerun. Each run's
figures and ratios therefore carry a run-to-run spread, a log sd per size band:

- learned from the host's earlier runs in the store (`results.earlier`: the same kind of run,
  complete, before this one) for every band where enough (cell, variant) series were measured
  in this run and in one of them, with the same timing method: the variance of a series' run
  figures less what its launches already account for, trimmed-mean pooled over the band;
- else the stated allowance `ALLOWANCE`, measured on this kind of machine, which is also the
  least a learned band carries (docs/statistics.md, "Between runs of one machine").

`level` is the spread of one variant's figure (a rerun range widens by it: the rerun's run and
this one each move), `ratio` the spread of the log ratio of two variants of one cell (a verdict's
interval widens by it): a state of the machine that moves every library of a run together
leaves ratios alone.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from ..base.records import Cell
from ..store.results import Levels
from .stats import CONFIDENCE, NORMAL, THRESHOLD, RunAllowance, center_ci, widened

Z = NORMAL.inv_cdf((1 + CONFIDENCE) / 2)
MIN_SERIES = 8  # (cell, variant) series of a band measured in two runs before it is learned
TRIM = 0.1  # the share cut from each end of a band's series before their variances are pooled


class Band(StrEnum):
    """Message sizes that move alike between runs."""

    SMALL = "4 KiB and below"
    MEDIUM = "above 4 KiB, below 256 KiB"
    LARGE = "256 KiB and above"


def band_of(size: int) -> Band:
    return Band.SMALL if size <= 4096 else Band.MEDIUM if size < 256 * 1024 else Band.LARGE


class SpreadSource(StrEnum):
    """Where a band's run-to-run spread comes from."""

    EARLIER = "earlier runs"
    ALLOWANCE = "stated allowance"


@dataclass(frozen=True)
class BandSpread:
    """One band's run-to-run spread: log sds of a figure and of a ratio, and their source."""

    level: float
    ratio: float
    source: SpreadSource
    series: int = 0  # (cell, variant) series it was learned from (0: the allowance)


# The least spread a band carries, learned or not: six quick runs back to back on this kind of
# machine (2 vCPUs, quiet, 2026-12-02, bench/reruns.py), each widened by the same allowance:
# level 0.03 and ratio 0.02 held a rerun's figure in its range 87.7% of the time and its ratio in
# the verdict's interval 79.2% (73.8% at 256 KiB and above); 0.05 and 0.04, 92.4% and 84.7%
# (80.9%); 0.08 and 0.06, 96.0% and 89.1%, deciding 76-79% of the comparisons between MPI
# libraries instead of 78-81% (docs/statistics.md, "Between runs of one machine").
ALLOWANCE = {Band.SMALL: BandSpread(0.08, 0.04, SpreadSource.ALLOWANCE),
             Band.MEDIUM: BandSpread(0.08, 0.04, SpreadSource.ALLOWANCE),
             Band.LARGE: BandSpread(0.08, 0.04, SpreadSource.ALLOWANCE)}


@dataclass(frozen=True)
class RunSpread:
    """A run's run-to-run spread by band, how many earlier runs it was learned from, and the
    (cell, variant)s whose figure in this run lies beyond what the earlier runs showed."""

    bands: dict[Band, BandSpread]
    runs: int
    moved: frozenset[tuple[Cell, str]] = frozenset()

    def allowance(self, key: Cell, variants: Iterable[str]) -> RunAllowance:
        """What the verdicts of cell `key` allow for between runs."""
        return RunAllowance(self.ratio_allowance(key),
                            frozenset(v for v in variants if (key, v) in self.moved))

    def of(self, key: Cell) -> BandSpread:
        return self.bands[band_of(key.size)]

    def widened_rerun(self, key: Cell, figure: float, low: float, high: float
                      ) -> tuple[float, float]:
        """A rerun range widened by the spread of this run's figure and of the rerun's."""
        return widened(figure, low, high, Z * math.sqrt(2) * self.of(key).level)

    def ratio_allowance(self, key: Cell) -> float:
        """What a ratio's interval in this cell is widened by (log, both ends)."""
        return Z * self.of(key).ratio

    @property
    def learned(self) -> bool:
        return any(b.source == SpreadSource.EARLIER for b in self.bands.values())


def _within(medians: np.ndarray) -> float:
    """The variance of a figure (the median of launch medians, log) from its launches: the
    half-width of its order-statistics interval over the normal's reach, squared (launch levels
    are bimodal here: their variance overstates the median's many times over)."""
    if len(medians) < 2:
        return math.nan
    low, high = center_ci([np.array([m]) for m in medians])
    return (math.log(high / low) / (2 * Z)) ** 2
def _between(runs: list[tuple[float, float]]) -> float:
    """A series' variance between runs less what its launches account for: (figure, its
    within variance) per run."""
    figures = np.array([f for f, _ in runs])
    return float(np.var(figures, ddof=1)) - float(np.mean([w for _, w in runs]))


def _pooled(estimates: list[float]) -> float:
    """The trimmed mean of a band's series' variance estimates as an sd (0 at least)."""
    x = np.sort(np.array(estimates))
    cut = int(TRIM * len(x))
    kept = x[cut:len(x) - cut] if len(x) > 2 * cut else x
    return math.sqrt(max(0.0, float(np.mean(kept))))


# run id -> (log figure, within)
RunFigures = dict[tuple[Cell, str], dict[int, tuple[float, float]]]


def _series(now: Levels, earlier: Iterable[Levels]) -> RunFigures:
    """Each (cell, variant) of this run measured the same way in at least one earlier run:
    its log figure and within variance, by run."""
    out: RunFigures = {}
    for levels in [now, *earlier]:
        for key, medians in levels.medians.items():
            if key in now.medians and levels.timing.get(key) == now.timing.get(key) and \
                    np.all(medians > 0) and math.isfinite(w := _within(medians)):
                out.setdefault(key, {})[levels.run_id] = (math.log(float(np.median(medians))), w)
    return {k: runs for k, runs in out.items() if len(runs) > 1}


def _ratio_series(series: RunFigures) -> dict[Cell, list[float]]:
    """Each cell's pairs of variants measured in the same runs: the variance of their log ratio
    between runs less what their launches account for, by cell."""
    out: dict[Cell, list[float]] = {}
    by_cell: dict[Cell, list[str]] = {}
    for cell, variant in series:
        by_cell.setdefault(cell, []).append(variant)
    for cell, variants in by_cell.items():
        for i, a in enumerate(variants):
            for b in variants[i + 1:]:
                ra, rb = series[(cell, a)], series[(cell, b)]
                both = [r for r in ra if r in rb]
                if len(both) > 1:
                    out.setdefault(cell, []).append(_between(
                        [(rb[r][0] - ra[r][0], ra[r][1] + rb[r][1]) for r in both]))
    return out


def learn(now: Levels, earlier: Sequence[Levels]) -> RunSpread:
    """The run-to-run spread for the run whose levels are `now`, from the host's `earlier`
    runs where they measured enough of its cells alike, else the stated allowance."""
    series = _series(now, earlier)
    ratios = _ratio_series(series)
    bands = dict(ALLOWANCE)
    for band in Band:
        levels = [_between(list(r.values())) for (cell, _), r in series.items()
                  if band_of(cell.size) == band]
        pairs = [v for cell, vs in ratios.items() if band_of(cell.size) == band for v in vs]
        if len(levels) >= MIN_SERIES and pairs:
            least = ALLOWANCE[band]
            bands[band] = BandSpread(max(_pooled(levels), least.level),
                                     max(_pooled(pairs), least.ratio), SpreadSource.EARLIER,
                                     len(levels))
    used = {r for runs in series.values() for r in runs if r != now.run_id}
    return RunSpread(bands, len(used), _moved(series, now.run_id, bands))


MIN_EARLIER = 2  # earlier runs of a (cell, variant) before its level can be said to have moved


def _moved(series: RunFigures, now: int, bands: dict[Band, BandSpread]
           ) -> frozenset[tuple[Cell, str]]:
    """The (cell, variant)s whose figure in run `now` lies beyond the median of at least
    MIN_EARLIER earlier runs by more than twice the threshold and more than their spread, its
    launches' and the band's run-to-run spread allow (95%)."""
    out = set()
    for (cell, variant), runs in series.items():
        earlier = [f for r, f in runs.items() if r != now]
        if now not in runs or len(earlier) < MIN_EARLIER:
            continue
        figure, within = runs[now]
        figures = np.array([f for f, _ in earlier])
        reach = Z * math.sqrt(within + float(np.mean([w for _, w in earlier]))
                              + float(np.var(figures, ddof=1)) + bands[band_of(cell.size)].level**2)
        if abs(figure - float(np.median(figures))) > max(reach, math.log1p(2 * THRESHOLD)):
            out.add((cell, variant))
    return frozenset(out)


def stated() -> RunSpread:
    """The stated allowance alone (no earlier runs)."""
    return RunSpread(dict(ALLOWANCE), 0)
