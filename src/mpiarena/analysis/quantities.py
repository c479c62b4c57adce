"""Measured quantities of a reproduction: which variants stand for a library, and the figure
(median, mean, latency, peak, time in a call, CPU %, profiled seconds, a fitted model's start-up
or asymptotic bandwidth) each one gave."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import TypeVar

import numpy as np

from ..base.records import Cell, impl_of
from ..base.status import CellStatus
from ..cluster.spec import EmulatedSpec, parse
from ..impls.registry import lineage
from ..model.benchmarks import BENCHMARKS
from ..model.profiled import ProfileRun
from ..store.results import Group, RunData, nest
from ..studies import Quantity, QuantityKind, Study
from .app_kernels import call_times
from .curves import derived
from .models import P2pModel, fit_models
from .stats import THRESHOLD, Sample, center

MARGIN = 1 + THRESHOLD  # a difference within the verdicts' threshold is noise on this machine
Measured = RunData | ProfileRun  # what an experiment gave: a run, or a profiled program
T = TypeVar("T")


def variants_of(data: Measured, selectors: Iterable[str]) -> list[str]:
    """Variants of the run standing for a library: `lam` (each LAM as it is), `lam:tcp`."""
    family = {i.impl_id: lineage(i.family) for i in data.implementations}
    out = []
    for sel in selectors:
        fam, _, name = sel.partition(":")
        for v in data.variants:
            impl = impl_of(v)
            vname = v.removeprefix(impl).removeprefix(":")
            if family.get(impl) == fam and vname == name and v not in out:
                out.append(v)
    return out


def _np(data: RunData, q: Quantity) -> int | None:
    """The quantity's rank count: its own, 2 for point-to-point, else the most measured."""
    nps = [n for (b, _, n) in data.cells if b == q.bench]
    if not nps:
        return None
    return q.np or (2 if BENCHMARKS[q.bench].pair else max(nps))


def sizes_of(data: Measured, q: Quantity) -> list[int]:
    """Every size measured for the quantity's benchmark at its rank count, smallest first."""
    if isinstance(data, ProfileRun):
        return []
    np_ = _np(data, q)
    return sorted({s for (b, s, n) in data.cells if b == q.bench and n == np_})


def _cell(data: RunData, q: Quantity, variant: str, size: int | None) -> Group | None:
    np_ = _np(data, q)
    sizes = [s for (b, s, n) in data.cells if b == q.bench and n == np_]
    if np_ is None or not sizes:
        return None
    size = size if size is not None else (q.size if q.size is not None else max(sizes))
    group = data.cells.get(Cell(q.bench, size, np_), {}).get(variant)
    return group if group is not None and group.status == CellStatus.OK and group.values else None


def observations(group: Group, q: Quantity) -> np.ndarray:
    """The cell's observations: the benchmark's reduction over ranks, or one rank's time."""
    if q.rank is None:
        return group.array
    scale = BENCHMARKS[q.bench].scale
    return np.asarray([r[q.rank] * scale for r in group.per_rank if len(r) > q.rank])


def value(data: Measured, q: Quantity, variant: str, size: int | None = None,
          np_: int | None = None) -> float | None:
    """The quantity for one variant, in SI units (s, B/s, B, %), or None if not measured."""
    if isinstance(data, ProfileRun):
        return data.seconds.get(variant, {}).get(q.call) if q.kind == QuantityKind.PROFILE else None
    if q.kind == QuantityKind.PROFILE:
        return None
    if q.kind == QuantityKind.LATENCY:
        d = derived(data, q.bench, 2).get(variant)
        return d.first_latency if d is not None else None
    if q.kind == QuantityKind.PEAK:
        return _peak(data, variant, q.bench)
    if q.kind in (QuantityKind.ALPHA, QuantityKind.ASYMPTOTE):
        model = _models(data, q.bench).get(variant)
        if model is None:
            return None
        if q.kind == QuantityKind.ALPHA:
            return model.regimes[0].alpha.value
        beta = model.regimes[-1].beta.value
        return 1 / beta if beta > 0 else None
    group = _cell(data, q if np_ is None else replace(q, np=np_), variant,
                  size)
    if group is None:
        return None
    x = observations(group, q)
    if not len(x):
        return None
    if q.kind == QuantityKind.MEDIAN:  # as every table: the median of the launch medians
        return center(nest(x, group.launches)) if len(x) == len(group.launches) else \
            float(np.median(x))  # a rank's time where some rows lack it
    if q.kind == QuantityKind.MEAN:
        return float(np.mean(x))
    if q.kind == QuantityKind.CALL:
        return call_times(group).get(q.call)
    cpu = [np.nanmean(e["cpu"]) for e in group.extras if "cpu" in e]  # cpu_during
    return 100 * float(np.median(cpu)) if cpu else None


def link_of(data: RunData) -> EmulatedSpec | None:
    """The emulated link of the run (a Slurm allocation's too: 'slurm:job3 on emulated:...'),
    None on other topologies."""
    label = data.settings.topology.rsplit(" on ", 1)[-1]
    return parse(label) if label.startswith("emulated:") else None


def trusted_from(link: EmulatedSpec | None) -> int:
    """The smallest message whose throughput the emulated link cannot flatter: its bucket's
    bytes pass at host speed, so a message counts only when those bytes cannot lift it over
    the link's rate (the frames' headers outweigh them) and shorten its time at the rate by
    less than the noise margin: 42765 B on Fast Ethernet, 244954 B on FDDI's 4352-byte frames
    (fewer headers to outweigh the bucket), 0 off emulated links."""
    if link is None:
        return 0
    headers = link.wire_bytes(1) - 1  # header bytes on the wire per byte of payload
    over_rate = link.burst / headers
    noise = link.burst * MARGIN / (MARGIN - 1) / (1 + headers)
    return math.ceil(max(over_rate, noise))


def throughput(data: RunData, variant: str, bench: str = "pingpong") -> dict[int, float]:
    """NetPIPE throughput in Mbit/s per size of one variant, from the sizes the link cannot
    flatter (see trusted_from)."""
    d = derived(data, bench, 2).get(variant)
    floor = trusted_from(link_of(data))
    return {s: mbps for s, mbps in d.throughput.items() if s >= floor} if d else {}


def _peak(data: RunData, variant: str, bench: str) -> float | None:
    """Peak bandwidth in B/s, from the sizes the link cannot flatter."""
    kept = throughput(data, variant, bench)
    return max(kept.values()) / 8e-6 if kept else None


def spread(data: RunData, q: Quantity, variant: str) -> float | None:
    """Standard deviation of the cell's observations (the studies' "st.dev")."""
    group = _cell(data, q, variant, None)
    x = observations(group, q) if group is not None else np.empty(0)
    return float(np.std(x, ddof=1)) if len(x) > 1 else None


def subject_of(text: str, q: Quantity) -> tuple[str, str]:
    """'lam@mtu1000' -> (library, experiment); 'lam' -> (library, the quantity's)."""
    impl, _, exp = text.partition("@")
    return impl, exp or q.experiment


def values_of(study: Study, runs: dict[str, Measured], subject: str, q: Quantity,
              size: int | None = None) -> dict[str, float]:
    """The figure of each variant standing for the subject's library, where it measured one."""
    got = _per_variant(study, runs, subject, lambda data, v: value(data, q, v, size), q)
    return {v: x for v, x in got.items() if math.isfinite(x)}


def _models(data: RunData, bench: str) -> dict[str, P2pModel]:
    """The run's models of `bench` at 2 ranks, fitted once per run and benchmark."""
    key = (id(data), bench)
    if key not in _FITTED or _FITTED[key][0] is not data:
        if len(_FITTED) >= 8:  # a reproduction's runs; no older run is asked again
            _FITTED.clear()
        _FITTED[key] = (data, fit_models(data, bench, 2))
    return _FITTED[key][1]


_FITTED: dict[tuple[int, str], tuple[RunData, dict[str, P2pModel]]] = {}


def _fitted(data: RunData, q: Quantity, variant: str) -> Sample | None:
    """Per launch, a fitted quantity of the variant's model: the first regime's alpha, or the
    last regime's 1 / beta (B/s); None without a model or with a launch whose fit is not
    above 0."""
    model = _models(data, q.bench).get(variant)
    if model is None:
        return None
    fits = model.regimes[0].alpha.per_launch if q.kind == QuantityKind.ALPHA else \
        tuple(1 / b if b > 0 else 0.0 for b in model.regimes[-1].beta.per_launch)
    return [np.array([x]) for x in fits] if fits and min(fits) > 0 else None


def sample_of(data: Measured, q: Quantity, variant: str, size: int | None = None
              ) -> Sample | None:
    """The observations of each launch behind a median or mean figure (the benchmark's
    reduction over ranks), or each launch's fit of a fitted quantity, for intervals over
    launches; None for other quantities."""
    if isinstance(data, RunData) and q.kind in (QuantityKind.ALPHA, QuantityKind.ASYMPTOTE):
        return _fitted(data, q, variant)
    if isinstance(data, ProfileRun) or q.kind not in (QuantityKind.MEDIAN, QuantityKind.MEAN) \
            or q.rank is not None:
        return None
    group = _cell(data, q, variant, size)
    return group.nested if group is not None else None


def samples_of(study: Study, runs: dict[str, Measured], subject: str, q: Quantity,
               size: int | None = None) -> dict[str, Sample]:
    """As `values_of`, the launches' observations behind each variant's figure."""
    return _per_variant(study, runs, subject, lambda data, v: sample_of(data, q, v, size), q)


def _per_variant(study: Study, runs: dict[str, Measured], subject: str,
                 measure: Callable[[Measured, str], T | None], q: Quantity) -> dict[str, T]:
    """measure(run, variant) for each variant standing for the subject's library in the
    subject's experiment, where it gives something ('variant@experiment' when the subject
    names its experiment)."""
    impl, exp = subject_of(subject, q)
    data = runs.get(exp)
    if data is None:
        return {}
    out = {}
    for v in variants_of(data, study.libraries[impl].measured):
        if (x := measure(data, v)) is not None:
            out[f"{v}@{exp}" if "@" in subject else v] = x
    return out
