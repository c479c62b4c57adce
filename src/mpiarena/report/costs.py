"""The costs section in words: one row per variant, a column per figure, the verdicts between
variants of one implementation and the notes (see `analysis.costs`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import assert_never

from ..analysis.costs import Column, CostKind, costs
from ..analysis.stats import CONFIDENCE, Verdict
from ..analysis.verdicts import Speed
from ..base.sizes import format_size
from ..model.benchmarks import progress_verdict
from ..store.results import RunData
from .summary import ci_text, undecided_why

MB = 1e6


KIND_NAMES = {CostKind.CPU: "CPU", CostKind.MEMORY: "memory", CostKind.OVERLAP: "overlap",
              CostKind.PROGRESS: "progress", CostKind.RATE: "message rate"}
POLLING = 95.0  # % of a core used while waiting: the library polls for messages


@dataclass
class CostsText:
    title: str = "costs"  # what the columns hold: "costs: thread level, CPU"
    header: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)  # as the header says
    verdicts: list[str] = field(default_factory=list)  # differences called or not backed
    same: int = 0  # pairs found indistinguishable, not listed
    notes: list[str] = field(default_factory=list)


def _rate(seconds: float) -> str:
    rate = 1 / seconds if seconds > 0 else 0.0
    for unit, scale in (("M/s", 1e6), ("k/s", 1e3)):
        if rate >= scale:
            return f"{rate / scale:.3g} {unit}"
    return f"{rate:.3g} /s"


def _percent(v: float) -> str:
    return f"{v:.3g}%" if v < 10 else f"{v:.0f}%"


def _threads(c: Column) -> str:
    assert c.key is not None
    return f"{c.key.size} thread{'s' if c.key.size > 1 else ''}"


def _title(c: Column) -> str:
    if c.kind == CostKind.CPU:
        return f"CPU % {c.bench or 'blocked'}"
    assert c.key is not None
    if c.kind == CostKind.MEMORY:
        return f"memory MB ({format_size(c.key.size)}, {c.key.np} ranks)"
    if c.kind == CostKind.OVERLAP:
        return f"overlap % ({format_size(c.key.size)}, {CONFIDENCE:.0%} CI)"
    if c.kind == CostKind.PROGRESS:
        return f"progress (%, {CONFIDENCE:.0%} CI)"
    return "msgrate" if c.key.bench == "msgrate" else _threads(c)


def _shown(c: Column, v: float) -> str:
    match c.kind:
        case CostKind.CPU:
            return _percent(v)
        case CostKind.MEMORY:
            return f"{v / MB:.3g}"
        case CostKind.OVERLAP:
            return f"{v:.0f}"
        case CostKind.PROGRESS:
            return f"{progress_verdict(v)} {v:.0f}"
        case CostKind.RATE:
            return _rate(v)
        case _:
            assert_never(c.kind)


def _better(c: Column) -> str:
    """How a 'faster' verdict reads, {r} the ratio."""
    if c.kind == CostKind.CPU:
        where = f"during {c.bench}" if c.bench else "in a blocked receive"
        return f"used {{r}}x less CPU {where} than"
    if c.kind == CostKind.MEMORY:
        return "used {r}x less memory than"
    assert c.key is not None
    return "sent messages {r}x faster than" if c.key.bench == "msgrate" else \
        f"sent messages {{r}}x faster with {_threads(c)} than"


def cost_verdict_text(label: str, better: str, v: Verdict) -> str:
    ci = ci_text(v.ci_low, v.ci_high)
    said = better.format(r=f"{v.ratio:.2f}")
    if v.outcome == Speed.FASTER:
        return f"{label}: {v.fast} {said} {v.slow} ({ci})"
    if v.outcome == Speed.INDISTINGUISHABLE:
        return f"{label}: {v.fast} and {v.slow} are indistinguishable (ratio {v.ratio:.2f}, {ci})"
    return (f"{label}: undecided, {v.fast} looks as if it {said} {v.slow} ({ci}); "
            f"{undecided_why(v)}")


def costs_text(data: RunData) -> CostsText | None:
    """The costs section, or None when the run measured no cost."""
    c = costs(data)
    if c is None:
        return None
    kinds = dict.fromkeys(KIND_NAMES[col.kind] if col.kind != CostKind.RATE or
                          (col.key and col.key.bench == "msgrate") else "threads"
                          for col in c.columns)
    out = CostsText(f"costs: {', '.join(['thread level', *kinds])}",
                    ["variant", "thread level", *(_title(col) for col in c.columns)], same=c.same)
    summaries = [col.summaries for col in c.columns]
    for variant in c.variants:
        row = [variant, c.levels.get(variant, "-")]
        for col, s in zip(c.columns, summaries, strict=True):
            x = s.get(variant)
            row.append("-" if x is None else _shown(col, x.median) if col.judged else
                       f"{_shown(col, x.median)} ({x.ci_low:.0f}-{x.ci_high:.0f})")
        out.rows.append(row)
    out.verdicts = [cost_verdict_text(_title(col), _better(col), v) for col, v in c.verdicts]
    out.notes = [f"{v}: {init / MB:.3g} MB more than the baseline after init, "
                 f"{after / MB:.3g} MB after the benchmark"
                 for v, (init, after) in c.memory.items()]
    if c.overlap_key is not None:
        at = format_size(c.overlap_key[1])
        out.notes += [f"{v}: overlap " + ", ".join(f"{op} {_percent(x)}" for op, x in ops.items())
                      + f" at {at}" for v, ops in c.overlap.items()]
    polling = sorted({v for col, s in zip(c.columns, summaries, strict=True)
                      if col.kind == CostKind.CPU for v, x in s.items() if x.median >= POLLING})
    if polling:
        out.notes.append(f"{', '.join(polling)}: {POLLING:.0f}% of a core or more while "
                         "waiting for messages: the library polls (busy-waits) instead of "
                         "sleeping, which takes that core from any other work")
    if c.oversubscribed_threads:
        out.notes.append(f"threads: {', '.join(map(str, c.oversubscribed_threads))} threads per "
                         f"rank on {c.cores} cores are oversubscribed; libraries that spin on "
                         "their locks measure the scheduler")
    return out
