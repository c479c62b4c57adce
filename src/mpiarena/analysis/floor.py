"""The machine floor (the floor family's variant, kernels/mod_floor.c) kept apart from the
libraries: its figure in each cell it measured, where its ranks ran, and a library's figure as
a multiple of it. It is never a contestant: `split` takes it out of the data every verdict,
ranking and budget sees. On an emulated cluster the link as set is the floor (`link_floor`)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..base.errors import ArenaError
from ..base.records import Cell, impl_of
from ..cluster.spec import EmulatedSpec
from ..cluster.spec import parse as parse_spec
from ..impls.registry import families
from ..store.results import Group, RunData
from .groups import comparable, measured
from .models import P2pModel
from .stats import center, center_ci, launch_medians, ratio_ci


@dataclass(frozen=True)
class MachineFloor:
    """The floor's variant, its cells, and the CPUs each of its launches' ranks ran on."""

    variant: str
    cells: dict[Cell, Group]
    cpus: frozenset[tuple[str, ...]]  # per launch: each rank's CPU list, as reported

    def figure(self, key: Cell) -> float | None:
        group = self.cells.get(key)
        sample = comparable({self.variant: group}) if group else {}
        return center(sample[self.variant]) if sample else None


@dataclass(frozen=True)
class Multiple:
    """A library's figure in a cell as a multiple of the machine floor's (`times`: the one
    figure over the other, as printed), with the 95% interval of that ratio over launches;
    `placement` says where their ranks' CPUs differed ("": not)."""

    key: Cell
    variant: str
    figure: float
    floor: float
    times: float
    low: float
    high: float
    placement: str

    @property
    def below(self) -> bool:
        """The figure reads below the floor's: the floor, measured in launches of its own,
        ran slower there than this library's launches (a report says why beside it)."""
        return self.times < 1

    @property
    def wrong(self) -> bool:
        """Below the floor by more than its interval: the floor is wrong there."""
        return self.high < 1


def floor_variants(data: RunData) -> list[str]:
    """The run's variants of the machine floor."""
    floors = {f.name for f in families() if f.floor}
    family = {i.impl_id: i.family for i in data.implementations}
    return [v for v in data.variants if family.get(impl_of(v)) in floors]


def _cpus(data: RunData, variant: str) -> frozenset[tuple[str, ...]]:
    return frozenset(tuple(str(r.get("cpus", "?")) for r in job.ranks)
                     for job in data.jobs if job.variant == variant and job.ranks)


def split(data: RunData) -> tuple[RunData, MachineFloor | None]:
    """The run without its floor's variants, and the floor (None: it measured none)."""
    gone = floor_variants(data)
    if not gone:
        return data, None
    kept = replace(data, variants=[v for v in data.variants if v not in gone],
                   cells={k: {v: g for v, g in cell.items() if v not in gone}
                          for k, cell in data.cells.items()},
                   variant_rows=[r for r in data.variant_rows if r.variant not in gone])
    kept.cells = {k: cell for k, cell in kept.cells.items() if cell}
    variant = gone[0]
    cells = {k: cell[variant] for k, cell in data.cells.items() if variant in cell}
    return kept, MachineFloor(variant, cells, _cpus(data, variant))


def placement(data: RunData, floor: MachineFloor, variant: str) -> str:
    """Where the variant's ranks ran unlike the floor's, in words ("": on the same CPUs)."""
    mine = _cpus(data, variant)
    if not mine or not floor.cpus:
        return "where the ranks ran is unknown"
    if mine == floor.cpus:
        return ""
    return f"its ranks ran on CPUs {_said(mine)}, the floor's on {_said(floor.cpus)}"


def _said(cpus: frozenset[tuple[str, ...]]) -> str:
    """Each launch's CPUs per rank: '0 | 1; 1 | 0'."""
    return "; ".join(sorted(" | ".join(c) for c in cpus))


def multiple(data: RunData, floor: MachineFloor, key: Cell, variant: str) -> Multiple | None:
    """The variant's figure in the cell against the floor's (None: either did not measure it)."""
    group, under = data.cells.get(key, {}).get(variant), floor.cells.get(key)
    if group is None or under is None:
        return None
    samples = comparable({"floor": under, "it": group})
    if len(samples) < 2:
        return None
    _, low, high = ratio_ci(samples["floor"], samples["it"])
    figure, below = center(samples["it"]), center(samples["floor"])
    return Multiple(key, variant, figure, below, figure / below, low, high,
                    placement(data, floor, variant))


def multiples(data: RunData, floor: MachineFloor) -> list[Multiple]:
    """Every library's figure against the floor, cell by cell."""
    return [m for key in sorted(floor.cells) for v in data.variants
            if (m := multiple(data, floor, key, v)) is not None]


def headline_keys(floor: MachineFloor) -> list[Cell]:
    """The floor's pingpong cells a reader looks at first: 8 B, else the smallest message above
    0 B up to 64 B (latency), and the largest (bandwidth)."""
    keys = sorted((k for k in floor.cells if k.bench == "pingpong"), key=lambda k: k.size)
    small = [k for k in keys if k.size == 8] or [k for k in keys if 0 < k.size <= 64] or keys[:1]
    return list(dict.fromkeys(small[:1] + keys[-1:]))


@dataclass(frozen=True)
class LatencyTerm:
    """A library's latency term (alpha of its first pingpong regime) against the floor's: what
    lies beyond the floor is the library's software path."""

    variant: str
    alpha: float
    floor: float

    @property
    def software(self) -> float:
        return self.alpha - self.floor


def latency_terms(data: RunData, models: dict[str, P2pModel]) -> list[LatencyTerm]:
    """Each library's fitted latency term against the floor's, fitted alike (none without a
    floor model)."""
    floors = [v for v in floor_variants(data) if v in models and models[v].regimes]
    if not floors:
        return []
    base = models[floors[0]].regimes[0].alpha.value
    return [LatencyTerm(v, m.regimes[0].alpha.value, base) for v, m in models.items()
            if v not in floors and m.regimes]


@dataclass(frozen=True)
class Steadiness:
    """How much the floor's figure moves between launches against the libraries': the median
    over the floor's cells of the standard deviation of log launch medians."""

    floor: float
    library: float  # the median library's
    cells: int

    @property
    def steadier(self) -> bool:
        return self.floor <= self.library


def _log_sd(group: Group | None) -> float | None:
    if not measured(group):
        return None
    medians = launch_medians(group.nested)
    return float(np.std(np.log(medians), ddof=1)) if len(medians) > 1 else None


def steadiness(data: RunData, floor: MachineFloor) -> Steadiness | None:
    """The floor's between-launch log-sd beside the median library's, over the floor's cells
    (None: too few launches)."""
    mine = [x for g in floor.cells.values() if (x := _log_sd(g)) is not None]
    theirs = [float(np.median(found)) for v in data.variants
              if (found := [x for k in floor.cells
                            if (x := _log_sd(data.cells.get(k, {}).get(v))) is not None])]
    if not mine or not theirs:
        return None
    return Steadiness(float(np.median(mine)), float(np.median(theirs)), len(mine))


LINK_BENCHES = ("pingpong", "sendrecv")  # one message each way per iteration, timed per message


@dataclass(frozen=True)
class LinkFloor:
    """An emulated cluster's link as set: a message of `size` bytes needs its wire bytes (full
    frames, TCP and the medium's framing) at the link's rate, less tbf's bucket, which lets a
    message's first bytes through at host speed after an idle moment. No delay is emulated,
    so the link adds no latency of its own."""

    spec: EmulatedSpec

    def figure(self, key: Cell) -> float | None:
        """Seconds a pingpong's one way (or a sendrecv's exchange) needs at least (None: the
        benchmark has no link floor, or the bucket carries the whole message)."""
        if key.bench not in LINK_BENCHES or key.size <= 0:
            return None
        left = self.spec.wire_bytes(key.size) - self.spec.burst
        return left * 8 / self.spec.rate_bits if left > 0 else None


def link_floor(data: RunData) -> LinkFloor | None:
    """The link floor of a run on an emulated cluster (None: any other run)."""
    if not data.settings.topology.startswith("emulated:"):
        return None
    try:
        return LinkFloor(parse_spec(data.settings.topology))
    except ArenaError:
        return None


def link_multiple(data: RunData, link: LinkFloor, key: Cell, variant: str) -> Multiple | None:
    """The variant's figure against the link's floor, with its own interval over launches (the
    floor is set, not measured)."""
    group = data.cells.get(key, {}).get(variant)
    under = link.figure(key)
    sample = comparable({variant: group}).get(variant) if group is not None else None
    if under is None or not sample:
        return None
    low, high = center_ci(sample)
    value = center(sample)
    return Multiple(key, variant, value, under, value / under, low / under, high / under, "")


def link_headline(data: RunData, link: LinkFloor, among: list[str]) -> Multiple | None:
    """The fastest of `among` at the largest pingpong against the link's floor."""
    keys = sorted((k for k in data.cells if k.bench == "pingpong" and link.figure(k)),
                  key=lambda k: k.size)
    found = [m for v in among if keys and (m := link_multiple(data, link, keys[-1], v))]
    return min(found, key=lambda m: m.figure) if found else None
