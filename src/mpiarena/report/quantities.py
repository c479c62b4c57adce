"""Measured quantities of a reproduction: which variants stand for a library, and the figure
(median, mean, latency, peak, time in a call, CPU %, profiled seconds) each one gave."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import replace

import numpy as np

from ..analysis import derived
from ..benchmarks import BENCHMARKS
from ..cluster.spec import parse
from ..profile import ProfileRun
from ..results import Group, RunData
from ..studies import Quantity, Study
from .apps import call_times

TBF_SLACK = 1.04  # tbf lets 64 KiB messages through 1.5-4% over its rate (measured)
TRUSTED_FROM = 1 << 20  # on an emulated link, the smallest size a peak may come from
Measured = RunData | ProfileRun  # what an experiment gave: a run, or a profiled program


def variants_of(data: Measured, selectors: Iterable[str]) -> list[str]:
    """Variants of the run standing for a library: `lam` (each LAM as it is), `lam:tcp`."""
    family = {i["impl_id"]: i["family"] for i in data.implementations}
    out = []
    for sel in selectors:
        fam, _, name = sel.partition(":")
        for v in data.variants:
            impl, _, vname = v.partition(":")
            if family.get(impl) == fam and vname == name and v not in out:
                out.append(v)
    return out


def _cell(data: RunData, q: Quantity, variant: str, size: int | None) -> Group | None:
    bench = BENCHMARKS[q.bench]
    nps = [n for (b, _, n), cell in data.cells.items() if b == q.bench and variant in cell]
    if not nps:
        return None
    np_ = q.np or (2 if bench.pair else max(nps))
    sizes = [s for (b, s, n) in data.cells if b == q.bench and n == np_]
    if not sizes:
        return None
    size = size if size is not None else (q.size if q.size is not None else max(sizes))
    group = data.cells.get((q.bench, size, np_), {}).get(variant)
    return group if group is not None and group.status == "ok" and group.values else None


def value(data: Measured, q: Quantity, variant: str, size: int | None = None,
          np_: int | None = None) -> float | None:
    """The quantity for one variant, in SI units (s, B/s, B, %), or None if not measured."""
    if isinstance(data, ProfileRun):
        return data.seconds.get(variant, {}).get(q.call) if q.kind == "profile" else None
    if q.kind == "profile":
        return None
    if q.kind in ("latency", "peak", "peak_size"):
        d = derived(data, q.bench, 2).get(variant)
        if d is None:
            return None
        if q.kind == "latency":
            return d.first_latency
        return _peak(d.throughput, link_mbps(data), q.kind == "peak_size")
    group = _cell(data, q if np_ is None else replace(q, np=np_), variant,
                  size)
    if group is None:
        return None
    x = group.array
    if q.kind == "median":
        return float(np.median(x))
    if q.kind == "mean":
        return float(np.mean(x))
    if q.kind == "call":
        return call_times(group).get(q.call)
    cpu = [np.nanmean(e["cpu"]) for e in group.extras if "cpu" in e]  # cpu_during
    return 100 * float(np.median(cpu)) if cpu else None


def link_mbps(data: RunData) -> float | None:
    """The emulated link's rate in Mbit/s, None on other topologies."""
    label = str(data.settings.get("topology", ""))
    if not label.startswith("emulated:"):
        return None
    return parse(label).rate_bits * 1e-6


def _peak(throughput: dict[int, float], link: float | None, where: bool) -> float | None:
    """Peak bandwidth in B/s (or the size it is reached at). On an emulated link only sizes
    from TRUSTED_FROM count, and none over the link's rate: tbf's 4 KiB bucket lets part of a
    smaller message through at host speed (32 KiB ping-pongs read 104 Mbit/s on 100 Mbit/s,
    64 KiB ones 99 where TCP can carry 94), which no real link of that rate would carry."""
    kept = {s: mbps for s, mbps in throughput.items()
            if link is None or (s >= TRUSTED_FROM and mbps <= link * TBF_SLACK)}
    if not kept:
        return None
    size = max(kept, key=lambda s: kept[s])
    return float(size) if where else kept[size] / 8e-6


def spread(data: RunData, q: Quantity, variant: str) -> float | None:
    """Standard deviation of the cell's observations (the studies' "st.dev")."""
    group = _cell(data, q, variant, None)
    return float(np.std(group.array, ddof=1)) if group is not None and len(group.values) > 1 \
        else None


def subject_of(text: str, q: Quantity) -> tuple[str, str]:
    """'lam@mtu1000' -> (library, experiment); 'lam' -> (library, the quantity's)."""
    lib, _, exp = text.partition("@")
    return lib, exp or q.experiment


def values_of(study: Study, runs: dict[str, Measured], subject: str, q: Quantity,
            size: int | None = None) -> dict[str, float]:
    lib, exp = subject_of(subject, q)
    data = runs.get(exp)
    if data is None:
        return {}
    out = {}
    for v in variants_of(data, study.libraries[lib].measured):
        x = value(data, q, v, size)
        if x is not None and math.isfinite(x):
            out[f"{v}@{exp}" if "@" in subject else v] = x
    return out
