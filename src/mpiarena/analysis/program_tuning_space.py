"""What `program --tune` searches for one library, from the program's profiled launch: the
collectives that take more than MIN_SHARE of its time get their algorithms (as `tune` forces
them), a point-to-point-heavy program the eager limits the library exposes, every program its
binding; each dimension with why it is there, and the configurations, their cross product."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from ..base.errors import ArenaError
from ..impls import Implementation, family_of
from ..model.profiled import POINT_TO_POINT
from ..model.programs import RankCalls

MIN_SHARE = 0.03  # of the profiled launch's wall time: a dimension below this is not searched
MAX_CONFIGURATIONS = 24  # per library: dimensions beyond it are left out, the smallest share first
DEFAULT = "default"  # every dimension's first value: the library as it runs untouched
COLLECTIVES = {"allreduce": "MPI_Allreduce", "bcast": "MPI_Bcast", "reduce": "MPI_Reduce",
               "allgather": "MPI_Allgather", "alltoall": "MPI_Alltoall"}
EAGER = "eager"
BINDING = "binding"
SEARCHABLE = (*COLLECTIVES, EAGER, BINDING)  # what --search may name
BINDINGS = ("core", "none")


@dataclass(frozen=True)
class Value:
    """One value of a dimension and what it sets: environment, or the ranks' binding."""

    name: str
    env: tuple[tuple[str, str], ...] = ()
    binding: str | None = None


@dataclass(frozen=True)
class Dimension:
    name: str
    values: tuple[Value, ...]  # the default first
    why: str
    share: float  # of the program's time it touches (1: binding, which touches all of it)


@dataclass(frozen=True)
class LeftOut:
    name: str
    why: str


@dataclass(frozen=True)
class Space:
    impl: str
    dimensions: tuple[Dimension, ...]
    left_out: tuple[LeftOut, ...]


@dataclass(frozen=True)
class Configuration:
    """One point of a library's space, as a variant id and what it sets."""

    id: str
    impl: str
    values: tuple[tuple[str, str], ...]  # dimension -> value name, every dimension
    env: tuple[tuple[str, str], ...]
    binding: str | None

    @property
    def is_default(self) -> bool:
        return all(v == DEFAULT for _, v in self.values)


def check_search(names: tuple[str, ...]) -> frozenset[str] | None:
    """--search's names (None: the profile decides); an unknown one is an error."""
    unknown = [n for n in names if n not in SEARCHABLE]
    if unknown:
        raise ArenaError(f"--search {unknown[0]}: no such setting; program --tune searches "
                         f"{', '.join(SEARCHABLE)}")
    return frozenset(names) or None


def shares(calls: list[RankCalls], np: int, wall: float) -> dict[str, float]:
    """MPI function -> its seconds per rank (mean over ranks) over the launch's wall time."""
    out: dict[str, float] = {}
    for c in calls:
        out[c.function] = out.get(c.function, 0.0) + c.seconds / max(np, 1) / wall
    return out


def space(impl: Implementation, share: dict[str, float], binding: str | None,
          only: frozenset[str] | None) -> Space:
    """The dimensions searched for impl, from its profile's shares; `only`: those named by
    --search, searched whatever their share; binding: what its ranks get by default (None: the
    launcher places them, on a cluster, and there is no binding to choose)."""
    family = family_of(impl)
    dims: list[Dimension] = []
    out: list[LeftOut] = []

    def wanted(name: str, fraction: float) -> bool:
        return name in only if only is not None else fraction >= MIN_SHARE

    for coll, function in COLLECTIVES.items():
        fraction = share.get(function, 0.0)
        if not wanted(coll, fraction):
            if fraction > 0 and only is None:
                out.append(LeftOut(coll, f"{function} takes {fraction:.1%} of the time, under "
                                   f"{MIN_SHARE:.0%}"))
            continue
        algs = family.algorithms(impl, coll)
        if not algs:
            out.append(LeftOut(coll, f"{impl.id} offers no way to force its algorithm"))
            continue
        dims.append(Dimension(coll, (Value(DEFAULT), *(Value(a.name, a.env) for a in algs)),
                              f"{function} takes {fraction:.1%} of the program's time", fraction))
    p2p = sum(share.get(f, 0.0) for f in POINT_TO_POINT)
    if wanted(EAGER, p2p):
        limits = family.eager_limits(impl)
        if limits:
            dims.append(Dimension(EAGER, (Value(DEFAULT), *(Value(s.value, s.env)
                                                            for s in limits)),
                                  f"point-to-point calls take {p2p:.1%} of the time", p2p))
        else:
            out.append(LeftOut(EAGER, f"{impl.id} exposes no eager limit mpiarena can set"))
    if wanted(BINDING, 1.0) and binding is not None:
        dims.append(Dimension(BINDING, (Value(DEFAULT), *(Value(b, binding=b) for b in BINDINGS
                                                           if b != binding)),
                              f"every program: where its ranks run (default: {binding})", 1.0))
    elif wanted(BINDING, 1.0):
        out.append(LeftOut(BINDING, "the launcher places the ranks on the cluster's nodes"))
    kept: list[Dimension] = []
    for d in sorted(dims, key=lambda d: -d.share):
        if _count([*kept, d]) <= MAX_CONFIGURATIONS:
            kept.append(d)
        else:
            out.append(LeftOut(d.name, f"the space would pass {MAX_CONFIGURATIONS} "
                               "configurations; name it with --search to search it"))
    return Space(impl.id, tuple(d for d in dims if d in kept), tuple(out))


def _count(dims: list[Dimension]) -> int:
    n = 1
    for d in dims:
        n *= len(d.values)
    return n


def configurations(s: Space) -> list[Configuration]:
    """Every point of the space, the library's default first."""
    out = []
    for picked in itertools.product(*(d.values for d in s.dimensions)):
        chosen = [(d.name, v) for d, v in zip(s.dimensions, picked, strict=True)]
        named = [f"{d}={v.name}" for d, v in chosen if v.name != DEFAULT]
        binding = next((v.binding for _, v in chosen if v.binding), None)
        out.append(Configuration(s.impl + (":" + ",".join(named) if named else ""), s.impl,
                                 tuple((d, v.name) for d, v in chosen),
                                 tuple(kv for _, v in chosen for kv in v.env), binding))
    return out


def space_of(stored: dict[str, Any]) -> Space:
    """A Space as the run's settings keep it (dataclasses.asdict)."""
    return Space(stored["impl"], tuple(
        Dimension(d["name"], tuple(Value(v["name"], tuple(map(tuple, v["env"])), v["binding"])
                                   for v in d["values"]), d["why"], d["share"])
        for d in stored["dimensions"]), tuple(LeftOut(**x) for x in stored["left_out"]))
