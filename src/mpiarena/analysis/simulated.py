"""Simulated runs (`mpiarena simulate`): each cell's simulated time, SMPI's link factors fitted
to a measured pingpong, and the error of a simulation against a measured run.

A simulation is deterministic: a cell is one launch, rerunning it gives the same figures bit
for bit, so there is no interval and no test here; a figure is the median of the simulated
calls (they differ only where a library's algorithm depends on the calls before) and
`spread` says how far the calls lay apart."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..base.errors import ArenaError
from ..base.records import Cell
from ..base.status import CellStatus
from ..cluster.smpi import Factors, Link
from ..impls.registry import families, lineage
from ..store.results import Group, RunData
from .stats import center, median

MAX_BW_FACTOR = 100.0  # a size whose time is all latency: its bandwidth term vanishes


@dataclass(frozen=True)
class SimFigure:
    """One simulated cell of one variant: the time of a call (s), how far its simulated calls
    lay apart (max/min - 1), or why there is none."""

    key: Cell
    variant: str
    seconds: float
    spread: float
    status: CellStatus
    reason: str


def _figure(key: Cell, variant: str, group: Group) -> SimFigure:
    values = group.values
    if group.status != CellStatus.OK or not values:
        return SimFigure(key, variant, math.nan, math.nan, group.status, group.reason)
    low, high = min(values), max(values)
    return SimFigure(key, variant, median(values), high / low - 1 if low > 0 else 0.0,
                     CellStatus.OK, "")


def figures(data: RunData) -> list[SimFigure]:
    """Every cell of a simulated run, in benchmark, rank count and size order."""
    order = {b: i for i, b in enumerate(data.benches())}
    return [_figure(key, v, group)
            for key in sorted(data.cells, key=lambda k: (order[k.bench], k.np, k.size))
            for v, group in sorted(data.cells[key].items())]


def pingpong_medians(data: RunData, variant: str) -> dict[int, float]:
    """size -> the measured one-way pingpong time of `variant` (the median of its launch
    medians), at the fewest ranks the run measured it."""
    keys = [k for k in data.cells if k.bench == "pingpong" and variant in data.cells[k]]
    if not keys:
        raise ArenaError(f"run {data.run_id} holds no pingpong of {variant}: calibrate from a "
                         "run with --bench pingpong")
    np_ = min(k.np for k in keys)
    out = {k.size: center(g.nested) for k in keys if k.np == np_
           if (g := data.cells[k][variant]).values}
    if len(out) < 2:
        raise ArenaError(f"run {data.run_id} measured pingpong of {variant} at {len(out)} "
                         "size(s); calibration needs 2 or more (e.g. --sizes 8,1K,64K,1M)")
    return out


def nominal_link(measured: dict[int, float], bits: float | None) -> Link:
    """The link a calibration's factors correct, where none is given: the measured run's
    emulated rate (else its pingpong's peak) and its smallest message's one-way time, so the
    factors stay near 1 (they reach MAX_BW_FACTOR at most)."""
    sizes = sorted(measured)
    peak = max(8 * s / measured[s] for s in sizes[1:])
    return Link(bits or peak, measured[sizes[0]])


def fit_factors(measured: dict[int, float], bare: dict[int, float], link: Link) -> Factors:
    """SMPI's latency factor and a bandwidth factor per size that make the simulated pingpong
    the measured one: the simulation of the bare link (factors 1) gives the harness's offset
    at each size beyond the link's own latency + size / rate; the quickest size fixes the
    latency factor, each size its bandwidth factor (after the feasibility note's fit2.py)."""
    sizes = sorted(s for s in measured if s in bare)
    if len(sizes) < 2:
        raise ArenaError("calibration needs the measured and the simulated pingpong at 2 or "
                         "more common sizes")
    rate = link.bits / 8

    def offset(s: int) -> float:
        return bare[s] - (link.latency + s / rate)

    # the latency: what the quickest size leaves beyond the harness; each size's bandwidth
    # factor then makes up the rest of its time. On a loaded machine a larger message can beat
    # the smaller ones between launches: those get a latency factor of their own instead, as
    # SMPI's time of a small message does not follow a bandwidth factor far below 1 (8 B that
    # a 1 KiB pingpong beat, its bandwidth factor 0.0013, simulated 84% slower than measured)
    needed = {s: measured[s] - offset(s) for s in sizes}
    quickest = min(sizes, key=lambda s: (needed[s], s))
    slower = [s for s in sizes if s < quickest]  # all latency: their bandwidth term vanishes
    own = [(0 if i == 0 else s, max(needed[s] / link.latency, 1e-6))
           for i, s in enumerate(slower)]  # the first from 0 bytes
    lat = max(needed[quickest] / link.latency, 1e-6)
    bw = [(s, MAX_BW_FACTOR) for s in slower]
    for s in sizes[len(slower):]:
        left = needed[s] - lat * link.latency
        bw.append((s, min(MAX_BW_FACTOR, s / (rate * left)) if left > 0 else MAX_BW_FACTOR))
    return Factors((*own, (quickest if own else 0, lat)), tuple(bw))


@dataclass(frozen=True)
class Error:
    """A simulated cell against the same cell measured: sim / measured - 1."""

    key: Cell
    simulated_variant: str
    measured_variant: str
    simulated: float
    measured: float

    @property
    def error(self) -> float:
        return self.simulated / self.measured - 1


def _selector(variant: str) -> str:
    return variant.partition(":")[2].partition("+")[0]


def counterparts(sim: RunData, real: RunData, sim_variant: str) -> list[str]:
    """The measured variants a simulated one is held against: those of the family whose
    selection logic it models, else every variant of the measured run."""
    selector = _selector(sim_variant)
    family = next((f.name for f in families() if selector in f.smpi_selectors), None)
    impl_of = {v.variant: v.impl_id for v in real.variant_rows}
    family_of = {i.impl_id: lineage(i.family) for i in real.implementations}
    same = [v for v in real.variants if family_of.get(impl_of.get(v, "")) == family]
    return same or list(real.variants)


def validate(sim: RunData, real: RunData) -> list[Error]:
    """Each simulated cell the measured run also measured, against it."""
    out = []
    for f in figures(sim):
        if f.status != CellStatus.OK or f.key not in real.cells:
            continue
        for v in counterparts(sim, real, f.variant):
            group = real.cells[f.key].get(v)
            if group is not None and group.values:
                out.append(Error(f.key, f.variant, v, f.seconds, center(group.nested)))
    return out
