"""What each library costs the program: CPU, memory, overlap, progress, threads, message rate.

One row per variant, from the cost benchmarks and from the CPU figures every observation
carries. Lower-is-better figures get verdicts with the same statistics as the time tables
(Mann-Whitney, Holm across this section, bootstrap ratio interval, at least 5%) among the
variants of one implementation (its completion modes against its default: the table compares
libraries); overlap and progress show their median and its 95% interval.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..benchmarks import OVERLAP_OPS, overlap_of, progress_verdict
from ..results import Group, Key, RunData
from ..sizes import format_size
from ..stats import Sample, Verdict, nest, summarize, verdicts
from ..status import CellStatus
from .summary import comparable

COST_BENCHES = ("cpu", "memory", "overlap", "progress", "threads", "msgrate")
MB = 1e6


@dataclass(frozen=True)
class Figure:
    """One column: its samples per variant, how to print a median, how a verdict reads."""

    title: str
    samples: dict[str, Sample]
    show: Callable[[float], str]
    better: str = ""  # "used {r}x less CPU than"; empty: no verdicts (higher is better)
    floor: float = 0.0  # values below this count as this (ratios of ~0 mean nothing)


@dataclass
class Costs:
    header: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)  # as the header says
    verdicts: list[str] = field(default_factory=list)  # differences called or not backed
    same: int = 0  # pairs found indistinguishable, not listed
    notes: list[str] = field(default_factory=list)


def _last(data: RunData, bench: str) -> Key | None:
    """The cell a column reports: the largest size at the most ranks."""
    keys = sorted((k for k in data.cells if k[0] == bench), key=lambda k: (k[2], k[1]))
    return keys[-1] if keys else None


def _groups(data: RunData, bench: str) -> dict[str, list[Group]]:
    out: dict[str, list[Group]] = {}
    for key, cell in data.cells.items():
        if key[0] == bench:
            for variant, group in cell.items():
                if group.status == CellStatus.OK and group.values:
                    out.setdefault(variant, []).append(group)
    return out


def _cpu_during(data: RunData, bench: str, ranks: int | None) -> dict[str, Sample]:
    """CPU % of the active ranks (ranks 0 and 1, or all) over every observation of bench, per
    launch."""
    out = {}
    for variant, groups in _groups(data, bench).items():
        pairs = [(launch, v) for g in groups for x, launch in zip(g.extras, g.launches,
                                                                   strict=True)
                 if "cpu" in x and np.isfinite(v := 100 * float(np.mean(x["cpu"][:ranks])))]
        if pairs:
            out[variant] = nest([v for _, v in pairs], [launch for launch, _ in pairs])
    return out


def _cell(data: RunData, key: Key | None) -> dict[str, Sample]:
    return comparable(data.cells[key]) if key else {}


def _rate(seconds: float) -> str:
    rate = 1 / seconds if seconds > 0 else 0.0
    for unit, scale in (("M/s", 1e6), ("k/s", 1e3)):
        if rate >= scale:
            return f"{rate / scale:.3g} {unit}"
    return f"{rate:.3g} /s"


def _percent(v: float) -> str:
    return f"{v:.3g}%" if v < 10 else f"{v:.0f}%"


def _figures(data: RunData) -> list[Figure]:
    figs = [Figure("CPU % blocked", _cell(data, _last(data, "cpu")), _percent,
                   "used {r}x less CPU in a blocked receive than", 0.5),
            Figure("CPU % pingpong", _cpu_during(data, "pingpong", 2), _percent,
                   "used {r}x less CPU during pingpong than", 0.5),
            Figure("CPU % alltoall", _cpu_during(data, "alltoall", None), _percent,
                   "used {r}x less CPU during alltoall than", 0.5)]
    if key := _last(data, "memory"):
        figs.append(Figure(f"memory MB ({format_size(key[1])}, {key[2]} ranks)",
                           _cell(data, key), lambda v: f"{v / MB:.3g}",
                           "used {r}x less memory than", 1e4))
    if key := _last(data, "overlap"):
        figs.append(Figure(f"overlap % ({format_size(key[1])}, 95% CI)", _cell(data, key),
                           lambda v: f"{v:.0f}"))
    if key := _last(data, "progress"):
        figs.append(Figure("progress (%, 95% CI)", _cell(data, key),
                           lambda v: f"{progress_verdict(v)} {v:.0f}"))
    if key := _last(data, "msgrate"):
        figs.append(Figure("msgrate", _cell(data, key), _rate,
                           "sent messages {r}x faster than"))
    for key in sorted(k for k in data.cells if k[0] == "threads"):
        threads = f"{key[1]} thread{'s' if key[1] > 1 else ''}"
        figs.append(Figure(threads, _cell(data, key), _rate,
                           f"sent messages {{r}}x faster with {threads} than"))
    return [f for f in figs if f.samples]


def _by_impl(samples: dict[str, Sample], floor: float) -> list[dict[str, Sample]]:
    """The samples split by implementation (variant ids are impl or impl:name)."""
    groups: dict[str, dict[str, Sample]] = {}
    for variant, x in samples.items():
        groups.setdefault(variant.split(":")[0], {})[variant] = [np.maximum(a, floor)
                                                                  for a in x]
    return [g for g in groups.values() if len(g) > 1]


def _levels(data: RunData) -> dict[str, str]:
    """The thread level each variant's library granted (its jobs agree; the first is shown)."""
    out: dict[str, str] = {}
    for job in data.jobs:
        if job.thread_level:
            out.setdefault(job.variant, job.thread_level)
    return out


def cost_verdict_text(label: str, better: str, v: Verdict) -> str:
    ci = f"95% CI {v.ci_low:.2f}-{v.ci_high:.2f}"
    said = better.format(r=f"{v.ratio:.2f}")
    if v.outcome == "faster":
        return f"{label}: {v.fast} {said} {v.slow} ({ci})"
    if v.outcome == "indistinguishable":
        return f"{label}: {v.fast} and {v.slow} are indistinguishable (ratio {v.ratio:.2f}, {ci})"
    return (f"{label}: undecided, {v.fast} looks as if it {said} {v.slow} ({ci}); "
            f"{v.launches_fast} and {v.launches_slow} launches cannot back it "
            f"(p={v.p_adjusted:.2g} after Holm)")


def _ordered(data: RunData, key: Key) -> list[tuple[str, Group]]:
    """The variants that measured a cell, in the report's order."""
    cell = data.cells[key]
    return [(v, cell[v]) for v in data.variants
            if v in cell and cell[v].status == CellStatus.OK and cell[v].extras]


def _overhead(extras: dict[str, list[float]], name: str) -> float:
    """The worst rank's resident bytes beyond the baseline's (name: rss_init or rss)."""
    return max(a - b for a, b in zip(extras[name], extras[f"base_{name}"], strict=True))


def _notes(data: RunData) -> list[str]:
    """Memory after init and after the work, overlap of the non-blocking collectives."""
    out = []
    if key := _last(data, "memory"):
        for variant, group in _ordered(data, key):
            init, after = (np.median([_overhead(x, name) for x in group.extras])
                           for name in ("rss_init", "rss"))
            out.append(f"{variant}: {init / MB:.3g} MB more than the baseline after init, "
                       f"{after / MB:.3g} MB after the benchmark")
    if key := _last(data, "overlap"):
        for variant, group in _ordered(data, key):
            ops = {op: np.median([overlap_of(x, op) for x in group.extras])
                   for op in OVERLAP_OPS if op != "exchange"
                   and f"pure{OVERLAP_OPS[op]}" in group.extras[0]}
            if ops:
                out.append(f"{variant}: overlap " + ", ".join(
                    f"{op} {_percent(v)}" for op, v in ops.items()) + f" at {format_size(key[1])}")
    cores = int(data.machine.get("cores", 0) or 0)
    over = sorted(k[1] for k in data.cells if k[0] == "threads" and cores and k[1] * k[2] > cores)
    if over:
        out.append(f"threads: {', '.join(map(str, over))} threads per rank on {cores} cores are "
                   "oversubscribed; libraries that spin on their locks measure the scheduler")
    return out


def costs(data: RunData) -> Costs | None:
    """The costs section, or None when the run measured no cost."""
    figs = _figures(data)
    if not figs:
        return None
    levels = _levels(data)
    out = Costs(["variant", "thread level", *(f.title for f in figs)])
    variants = [v for v in data.variants if any(v in f.samples for f in figs)]
    out.rows = [[v, levels.get(v, "-")] for v in variants]
    for row in out.rows:
        for f in figs:
            x = f.samples.get(row[0])
            if x is None:
                row.append("-")
                continue
            s = summarize(x)
            row.append(f.show(s.median) if f.better else
                       f"{f.show(s.median)} ({s.ci_low:.0f}-{s.ci_high:.0f})")
    cells = [(f, g) for f in figs if f.better for g in _by_impl(f.samples, f.floor)]
    for (f, _), vs in zip(cells, verdicts([g for _, g in cells]), strict=True):
        for v in vs:
            if v.outcome == "indistinguishable":
                out.same += 1
            else:
                out.verdicts.append(cost_verdict_text(f.title, f.better, v))
    out.notes = _notes(data)
    return out
