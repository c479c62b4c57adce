"""Self-consistency guidelines: each collective against its mock-up from other calls, decided
by the verdicts' rule."""

from __future__ import annotations

from dataclasses import dataclass

from ..base.records import Cell
from ..model.guidelines import GUIDELINES, Guideline
from ..store.results import Group, RunData
from .comparison import Compared, Comparison
from .groups import beside, figure, launch_ids, measured
from .stats import ALPHA, THRESHOLD, Pair, judge
from .verdicts import GUIDELINE_RESULTS, GuidelineResult


@dataclass(frozen=True)
class GuidelineCheck(Compared):
    """One guideline for one variant in one cell: the collective against its mock-up."""

    guideline: Guideline
    variant: str
    key: Cell  # the collective's cell; the mock-up's is (guideline.mockup, size, np)
    collective: float  # seconds: the median of launch medians
    mockup: float
    comparison: Comparison  # collective over mock-up: above 1, the mock-up ran faster

    @property
    def outcome(self) -> GuidelineResult:
        return GUIDELINE_RESULTS[self.comparison.outcome]

    @property
    def leaning(self) -> bool:
        """Undecided, but the collective looks faster than its mock-up."""
        return self.outcome == GuidelineResult.UNDECIDED and self.ratio < 1

    @property
    def saving(self) -> float:
        """The share of the collective's time the mock-up saves (negative: it costs more)."""
        return 1 - 1 / self.ratio


def guideline_checks(data: RunData, alpha: float = ALPHA,
                     threshold: float = THRESHOLD) -> list[GuidelineCheck]:
    """Every guideline in every cell where a variant measured both the collective and its
    mock-up. Violated: the mock-up ran faster by the verdicts' rule (the whole ratio interval
    beyond `threshold` and the launch test, corrected across every check of the run, backing
    it); held: the collective ran faster by that rule, or the two are indistinguishable;
    anything else is undecided."""
    found = [(g, *pair) for g in GUIDELINES for pair in beside(data, g.collective, g.mockup)]
    judged = judge([Pair(gm.nested, gc.nested, (launch_ids(gm), launch_ids(gc)))
                    for *_, gc, gm in found], alpha, threshold)
    return [GuidelineCheck(g, variant, key, figure(gc), figure(gm), j)
            for (g, variant, key, gc, gm), j in zip(found, judged, strict=True)]


def guidelines_unchecked(data: RunData) -> dict[tuple[str, str], str]:
    """(mock-up, variant) -> why a guideline the run asked for was checked at no cell for that
    variant: what the core said of the collective or its mock-up (n/a, failed...) at the
    largest size (a 0-byte cell's reason is only its own)."""
    out: dict[tuple[str, str], str] = {}
    for g in GUIDELINES:
        cells = {(k.size, k.np) for k in data.cells if k.bench in (g.collective, g.mockup)}
        for variant in data.variants:
            def group(bench: str, cell: tuple[int, int], variant: str = variant) -> Group | None:
                return data.cells.get(Cell(bench, *cell), {}).get(variant)

            if not cells or any(measured(group(g.collective, c)) and measured(group(g.mockup, c))
                                for c in cells):
                continue
            largest = max(c[0] for c in cells)
            lost = sorted({f"{bench}: {x.reason or x.status}" for c in cells if c[0] == largest
                           for bench in (g.collective, g.mockup)
                           if (x := group(bench, c)) is not None and not measured(x)})
            out[g.mockup, variant] = "; ".join(lost) or "not measured"
    return out
