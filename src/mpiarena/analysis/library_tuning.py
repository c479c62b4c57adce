"""What a tuning run says: per collective, rank count and size, whether an algorithm beats the
library's default by a decided margin, the size ranges that follow, and the A/B gains of a
tuning file against the default.

Everything here reads a `RunData`; the statistics are the run's own (stats.py): a cell's figure
is the median of its launch medians, and every comparison goes through `stats.judge`: a switch
away from the default needs the verdict 'faster' (the launch test backing it after the
correction across every cell of the run, and the whole interval beyond the threshold).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..base.status import CellStatus
from ..store.results import Group, RunData
from .comparison import Compared, Comparison, not_judged
from .stats import Pair, center, judge, launch_medians
from .verdicts import SPEED_OF_FASTEST, TUNING_EFFECTS, Speed, TuningEffect


@dataclass(frozen=True)
class Tuned:
    """An algorithm variant of a tuning run."""

    impl: str  # implementation id (its default is the variant of that id)
    coll: str
    algorithm: str  # the library's name for it


@dataclass(frozen=True)
class Choice(Compared):
    """One cell of one implementation: its fastest algorithm against the default."""

    impl: str
    coll: str
    np: int
    size: int
    fastest: str | None  # variant id of the fastest algorithm measured (None: none measured)
    comparison: Comparison  # the default's figure over the fastest algorithm's (above 1: the
    # algorithm wins); unjudged where the default failed
    default_ok: bool
    default_figure: float | None = None  # seconds, the median of launch medians (None: failed)
    fastest_figure: float | None = None

    @property
    def outcome(self) -> Speed:
        """Of the algorithm against the default: faster, indistinguishable or undecided."""
        return SPEED_OF_FASTEST[self.comparison.outcome]

    @property
    def switch(self) -> bool:
        return self.fastest is not None and (self.outcome == Speed.FASTER or not self.default_ok)


def usable(group: Group | None) -> bool:
    """A group that measured: ok, with at least one launch."""
    return (group is not None and group.status == CellStatus.OK
            and len(launch_medians(group.nested)) > 0)


def own_losses(cell: dict[str, Group], variant: str, impl: str) -> dict[int, tuple[str, str]]:
    """The launches an algorithm lost in a cell (crashed, hung, wrong data) that the default
    did not: a launch every job lost at once was ended from outside, not by the algorithm."""
    group, default = cell.get(variant), cell.get(impl)
    if group is None:
        return {}
    return {i: why for i, why in group.lost.items() if default is None or i not in default.lost}


def choices(data: RunData, tuned: dict[str, Tuned]) -> list[Choice]:
    """For every cell and implementation, every algorithm judged against the default, the
    launch tests of the whole run one family: the pairs are fixed before the data, so a
    winner picked from noisy medians is never what is tested. The choice is the algorithm
    decided faster than the default by the most (by its Hodges-Lehmann ratio), else the one
    nearest to being faster. An algorithm that failed, hung or gave wrong data in any launch of
    the cell is not a candidate there."""
    unjudged, judged_at = [], []
    impls = sorted({t.impl for t in tuned.values()})
    for key in sorted(data.cells):
        bench, size, np_ = key
        cell = data.cells[key]
        for impl in impls:
            mine = [v for v, t in tuned.items() if t.impl == impl and t.coll == bench
                    and usable(cell.get(v)) and not own_losses(cell, v, impl)]
            if not mine:
                continue
            if usable(default := cell.get(impl)):
                assert default is not None
                judged_at.append(((impl, bench, np_, size),
                                  [(v, Pair(cell[v].nested, default.nested)) for v in mine]))
            else:
                fastest = min(mine, key=lambda v: center(cell[v].nested))
                unjudged.append(Choice(impl, bench, np_, size, fastest, not_judged(), False,
                                       None, center(cell[fastest].nested)))
    judged = iter(judge([pair for _, pairs in judged_at for _, pair in pairs]))
    out = []
    for (impl, bench, np_, size), pairs in judged_at:
        each = [(v, pair, next(judged)) for v, pair in pairs]
        (v, pair, j) = max(each, key=lambda e: (SPEED_OF_FASTEST[e[2].outcome] == Speed.FASTER,
                                                e[2].ratio))
        out.append(Choice(impl, bench, np_, size, v, j, True, center(pair.b), center(pair.a)))
    return sorted(out + unjudged, key=lambda c: (c.coll, c.size, c.np, c.impl))


@dataclass(frozen=True)
class TunedRange:
    """Sizes lo up to hi (exclusive; None: no end) of one collective at np ranks: use
    `variant` (None: the library's default)."""

    impl: str
    coll: str
    np: int
    lo: int
    hi: int | None
    variant: str | None


def ranges(picked: list[Choice]) -> list[TunedRange]:
    """Each measured size's choice holds from that size up to the next measured one (the
    smallest from 0); neighbours with the same choice merge."""
    groups: dict[tuple[str, str, int], list[Choice]] = {}
    for c in picked:
        groups.setdefault((c.impl, c.coll, c.np), []).append(c)
    out = []
    for (impl, coll, np_), cs in sorted(groups.items()):
        cs.sort(key=lambda c: c.size)
        merged: list[TunedRange] = []
        for i, c in enumerate(cs):
            variant = c.fastest if c.switch else None
            hi = cs[i + 1].size if i + 1 < len(cs) else None
            if merged and merged[-1].variant == variant:
                merged[-1] = replace(merged[-1], hi=hi)
            else:
                merged.append(TunedRange(impl, coll, np_, 0 if i == 0 else c.size, hi, variant))
        out += merged
    return out


@dataclass(frozen=True)
class Gain(Compared):
    """A cell of the A/B check: the default over the tuned file (above 1: the file helps)."""

    impl: str
    coll: str
    np: int
    size: int
    comparison: Comparison  # unjudged where a side failed
    reason: str = ""  # a side failed: which, and why

    @property
    def outcome(self) -> TuningEffect:
        """Of the file: better, worse, the same, undecided, or failed (a side failed)."""
        return TuningEffect.FAILED if self.reason else TUNING_EFFECTS[self.comparison.outcome]


def gains(data: RunData, pairs: dict[str, str]) -> list[Gain]:
    """Per cell, the default (variant impl) against the tuned file (variant pairs[impl]);
    'worse' where the default is decided faster, 'better' where the file is, 'same' where the
    interval lies within the threshold."""
    compared = []
    failed = []
    for key in sorted(data.cells):
        bench, size, np_ = key
        cell = data.cells[key]
        for impl, tuned in sorted(pairs.items()):
            a, b = cell.get(impl), cell.get(tuned)
            if not (usable(a) and usable(b)):
                bad = b if a is not None and usable(a) else a
                if bad is not None:
                    who = "with the file" if bad is b else "the default"
                    failed.append(Gain(impl, bench, np_, size, not_judged(math.nan),
                                       f"{who}: {bad.status}: {bad.reason}"))
                continue
            assert a is not None and b is not None
            compared.append((impl, bench, np_, size, Pair(b.nested, a.nested)))
    out = [Gain(impl, bench, np_, size, j)
           for (impl, bench, np_, size, _), j in zip(compared, judge([c[-1] for c in compared]),
                                                     strict=True)]
    return sorted(out + failed, key=lambda g: (g.impl, g.coll, g.size, g.np))
