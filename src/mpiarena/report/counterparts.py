"""The section "beside MPI-1": each benchmark of MPI beyond MPI-1 against its counterpart in the
same library (analysis.counterparts decides; this module only words it), one line per library
and pair, its sizes side by side."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import groupby

from ..analysis.counterparts import CounterpartCheck, counterpart_checks
from ..analysis.stats import CONFIDENCE
from ..analysis.verdicts import Speed
from ..base.sizes import format_size
from ..store.results import RunData
from .summary import rule_text

LEAD = ("Each benchmark against its counterpart in the same library, size and ranks: below 1x "
        "it ran faster. The rule: " + rule_text("every comparison of the run", "faster"))


@dataclass(frozen=True)
class CounterpartLine:
    variant: str
    pair: str  # "bcast_init against bcast"
    question: str
    cells: tuple[str, ...]  # "64 KiB on 2 ranks: 0.91x faster (95% CI 0.88-0.94)"


@dataclass(frozen=True)
class Counterparts:
    lead: str
    lines: list[CounterpartLine]


def cell_text(c: CounterpartCheck) -> str:
    word = "" if c.outcome == Speed.UNDECIDED else f" {c.outcome}"
    return (f"{format_size(c.key.size)} on {c.key.np} ranks: {c.ratio:.2f}x{word} "
            f"({CONFIDENCE:.0%} CI {c.ci_low:.2f}-{c.ci_high:.2f})")


def counterparts(data: RunData) -> Counterparts | None:
    """The section, or None when the run measured no benchmark beside its counterpart."""
    checks = counterpart_checks(data)
    if not checks:
        return None
    order = {v: i for i, v in enumerate(data.variants)}
    checks.sort(key=lambda c: (order[c.variant], c.counterpart.bench, c.key.np, c.key.size))
    lines = [CounterpartLine(variant, f"{cp.bench} against {cp.against}", cp.question,
                             tuple(cell_text(c) for c in group))
             for (variant, cp), group in groupby(checks, lambda c: (c.variant, c.counterpart))]
    return Counterparts(LEAD, lines)
