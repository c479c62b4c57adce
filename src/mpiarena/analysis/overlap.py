"""Which library progresses a non-blocking collective in the background: per collective, size,
rank count and variant, the share of it that a computation of its own length hides (OSU's
overlap), with no MPI call during the computation (`-overlap`: the library's own progress) and
with MPI_Test called through it (`-overlap-test`: progress the program drives). Each is the
median of launch medians with its 95% interval over launches, and a word the interval decides:
yes (the whole interval at or above 80%), no (at or below 20%), partial (within 20-80%),
undecided (anything else)."""

from __future__ import annotations

from dataclasses import dataclass

from ..base.records import Cell
from ..model.benchmarks import BENCHMARKS
from ..store.results import RunData
from .groups import measured
from .stats import Summary, summarize
from .verdicts import Progress

YES, NO = 80.0, 20.0  # % hidden: progress in the background, none


@dataclass(frozen=True)
class Hidden:
    """One variant's overlap in one cell: median % of launch medians, interval, word."""

    summary: Summary
    word: Progress


@dataclass(frozen=True)
class OverlapRow:
    collective: str  # the latency benchmark: ibcast, iallreduce...
    size: int
    np: int
    variant: str
    background: Hidden | None  # -overlap
    tested: Hidden | None  # -overlap-test


def word(s: Summary) -> Progress:
    if s.ci_low >= YES:
        return Progress.YES
    if s.ci_high <= NO:
        return Progress.NO
    return Progress.PARTIAL if s.ci_low >= NO and s.ci_high <= YES else Progress.UNDECIDED


def overlap_collectives() -> list[str]:
    """The non-blocking collectives with overlap benchmarks, in the benchmarks' order."""
    return [b for b in BENCHMARKS if f"{b}-overlap" in BENCHMARKS]


def _hidden(data: RunData, key: Cell, variant: str) -> Hidden | None:
    group = data.cells.get(key, {}).get(variant)
    if not measured(group):
        return None
    s = summarize(group.nested)
    return Hidden(s, word(s))


def overlap_rows(data: RunData) -> list[OverlapRow]:
    """Every cell of an -overlap or -overlap-test benchmark, per variant that measured one."""
    out = []
    for coll in overlap_collectives():
        cells = sorted({(k.np, k.size) for k in data.cells
                        if k.bench in (f"{coll}-overlap", f"{coll}-overlap-test")})
        for np_, size in cells:
            for variant in data.variants:
                bg = _hidden(data, Cell(f"{coll}-overlap", size, np_), variant)
                tested = _hidden(data, Cell(f"{coll}-overlap-test", size, np_), variant)
                if bg or tested:
                    out.append(OverlapRow(coll, size, np_, variant, bg, tested))
    return out
