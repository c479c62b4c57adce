"""What each library costs the program: CPU, memory, overlap, progress, threads, message rate.

One column per figure, from the cost benchmarks and from the CPU figures every observation
carries. Lower-is-better figures (and message rates) get verdicts with the same statistics as
the time tables (stats.judge: the launch test, corrected across this section, the ratio's
interval over launches, the threshold) among the variants of one implementation (its
completion modes against its default: the table compares libraries); overlap and progress
have their median and its 95% interval. `report/costs.py` puts it into words.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from ..base.records import Cell, impl_of
from ..base.status import CellStatus
from ..model.benchmarks import OVERLAP_OPS, overlap_of
from ..store.results import Group, RunData, nest
from .groups import comparable, measured
from .stats import Sample, Summary, Verdict, summarize, verdicts
from .verdicts import Speed


class CostKind(StrEnum):
    """What a costs column holds: CPU used while waiting, memory, overlap, progress, or a
    message rate."""

    CPU = "cpu"
    MEMORY = "memory"
    OVERLAP = "overlap"
    PROGRESS = "progress"
    RATE = "rate"


@dataclass(frozen=True)
class Column:
    """One figure per variant: what it is (`kind`), its samples per variant, and whether it gets
    verdicts and with which floor (values below it count as it: ratios of ~0 mean nothing)."""

    kind: CostKind
    samples: dict[str, Sample]
    key: Cell | None = None  # the cell it reports, where it is one cell
    bench: str = ""  # cpu columns: the benchmark the CPU was measured during
    judged: bool = True
    floor: float = 0.0

    @property
    def summaries(self) -> dict[str, Summary]:
        return {v: summarize(x) for v, x in self.samples.items()}


@dataclass
class Costs:
    """The costs section: columns, the variants with a figure, the thread level each library
    granted, verdicts between variants of one implementation (indistinguishable pairs counted
    only), memory beyond the baseline, overlap per operation, oversubscribed thread counts."""

    columns: list[Column]
    variants: list[str]
    levels: dict[str, str]
    verdicts: list[tuple[Column, Verdict]] = field(default_factory=list)
    same: int = 0
    memory: dict[str, tuple[float, float]] = field(default_factory=dict)  # after init, after
    overlap: dict[str, dict[str, float]] = field(default_factory=dict)  # variant -> op -> %
    overlap_key: Cell | None = None
    oversubscribed_threads: list[int] = field(default_factory=list)
    cores: int = 0


def _last(data: RunData, bench: str) -> Cell | None:
    """The cell a column reports: the largest size at the most ranks."""
    keys = sorted((k for k in data.cells if k.bench == bench), key=lambda k: (k.np, k.size))
    return keys[-1] if keys else None


def _groups(data: RunData, bench: str) -> dict[str, list[Group]]:
    out: dict[str, list[Group]] = {}
    for key, cell in data.cells.items():
        if key.bench == bench:
            for variant, group in cell.items():
                if measured(group):
                    out.setdefault(variant, []).append(group)
    return out


def _cpu_during(data: RunData, bench: str, ranks: int | None) -> dict[str, Sample]:
    """CPU % of the active ranks (ranks 0 and 1, or all) over every observation of bench, per
    launch."""
    out: dict[str, Sample] = {}
    for variant, groups in _groups(data, bench).items():
        pairs = [(launch, v) for g in groups for x, launch in zip(g.extras, g.launches,
                                                                   strict=True)
                 if "cpu" in x and np.isfinite(v := 100 * float(np.mean(x["cpu"][:ranks])))]
        if pairs:
            out[variant] = nest([v for _, v in pairs], [launch for launch, _ in pairs])
    return out


def _cell(data: RunData, key: Cell | None) -> dict[str, Sample]:
    return comparable(data.cells[key]) if key else {}


def _columns(data: RunData) -> list[Column]:
    cpu = _last(data, "cpu")
    cols = [Column(CostKind.CPU, _cell(data, cpu), cpu, "", True, 0.5),
            Column(CostKind.CPU, _cpu_during(data, "pingpong", 2), None, "pingpong", True, 0.5),
            Column(CostKind.CPU, _cpu_during(data, "alltoall", None), None, "alltoall", True, 0.5)]
    if key := _last(data, "memory"):
        cols.append(Column(CostKind.MEMORY, _cell(data, key), key, floor=1e4))
    if key := _last(data, "overlap"):
        cols.append(Column(CostKind.OVERLAP, _cell(data, key), key, judged=False))
    if key := _last(data, "progress"):
        cols.append(Column(CostKind.PROGRESS, _cell(data, key), key, judged=False))
    if key := _last(data, "msgrate"):
        cols.append(Column(CostKind.RATE, _cell(data, key), key))
    cols += [Column(CostKind.RATE, _cell(data, key), key)
             for key in sorted(k for k in data.cells if k.bench == "threads")]
    return [c for c in cols if c.samples]


def _by_impl(samples: dict[str, Sample], floor: float) -> list[dict[str, Sample]]:
    """The samples split by implementation (variant ids are impl or impl:name)."""
    groups: dict[str, dict[str, Sample]] = {}
    for variant, x in samples.items():
        groups.setdefault(impl_of(variant), {})[variant] = [np.maximum(a, floor)
                                                                  for a in x]
    return [g for g in groups.values() if len(g) > 1]


def _levels(data: RunData) -> dict[str, str]:
    """The thread level each variant's library granted (its jobs agree; the first is shown)."""
    out: dict[str, str] = {}
    for job in data.jobs:
        if job.thread_level:
            out.setdefault(job.variant, job.thread_level)
    return out


def _ordered(data: RunData, key: Cell) -> list[tuple[str, Group]]:
    """The variants that measured a cell, in the report's order."""
    cell = data.cells[key]
    return [(v, cell[v]) for v in data.variants
            if v in cell and cell[v].status == CellStatus.OK and cell[v].extras]


def _overhead(extras: dict[str, list[float]], name: str) -> float:
    """The worst rank's resident bytes beyond the baseline's (name: rss_init or rss)."""
    return max(a - b for a, b in zip(extras[name], extras[f"base_{name}"], strict=True))


def _median_overhead(group: Group, name: str) -> float:
    """The median over a cell's observations of the worst rank's overhead."""
    return float(np.median([_overhead(x, name) for x in group.extras]))


def costs(data: RunData) -> Costs | None:
    """The costs section, or None when the run measured no cost."""
    cols = _columns(data)
    if not cols:
        return None
    out = Costs(cols, [v for v in data.variants if any(v in c.samples for c in cols)],
                _levels(data))
    judged = [(c, g) for c in cols if c.judged for g in _by_impl(c.samples, c.floor)]
    for (c, _), vs in zip(judged, verdicts([g for _, g in judged]), strict=True):
        for v in vs:
            if v.outcome == Speed.INDISTINGUISHABLE:
                out.same += 1
            else:
                out.verdicts.append((c, v))
    if key := _last(data, "memory"):
        out.memory = {variant: (_median_overhead(g, "rss_init"), _median_overhead(g, "rss"))
                      for variant, g in _ordered(data, key)}
    if key := _last(data, "overlap"):
        out.overlap_key = key
        for variant, group in _ordered(data, key):
            ops = {op: float(np.median([overlap_of(x, op) for x in group.extras]))
                   for op in OVERLAP_OPS if op != "exchange"
                   and f"pure{OVERLAP_OPS[op]}" in group.extras[0]}
            if ops:
                out.overlap[variant] = ops
    out.cores = int(data.machine.get("cores", 0) or 0)
    out.oversubscribed_threads = sorted(k.size for k in data.cells if k.bench == "threads"
                                        and out.cores and k.size * k.np > out.cores)
    return out
