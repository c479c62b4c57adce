"""Read one run back from the store as observations grouped per cell, ready for statistics."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import numpy as np

from .benchmarks import BENCHMARKS
from .stats import nest
from .store import Store

Key = tuple[str, int, int]  # bench, size, np


@dataclass
class Group:
    """Everything measured for one variant in one cell (benchmark x size x ranks)."""

    status: str = "ok"  # ok when any launch measured it, else na | skipped | invalid | failed
    reason: str = ""
    values: list[float] = field(default_factory=list)  # reduced observations, in bench.unit
    launches: list[int] = field(default_factory=list)  # each value's launch
    per_rank: list[list[float]] = field(default_factory=list)
    extras: list[dict[str, list[float]]] = field(default_factory=list)  # per observation
    iterations: int | None = None
    lost: dict[int, tuple[str, str]] = field(default_factory=dict)  # launch -> (status, why)
    timing: str = "loop"  # how its calls were timed: loop, barrier or window (plan.timing)
    late: list[float] = field(default_factory=list)  # window: share of calls dropped, per obs.

    @property
    def array(self) -> np.ndarray:
        """Every observation, all launches together."""
        return np.asarray(self.values, dtype=float)

    @property
    def nested(self) -> list[np.ndarray]:
        """The observations of each launch, in launch order: the unit of every statistic
        (a group built without launches is one launch)."""
        if len(self.launches) != len(self.values):
            return [self.array] if self.values else []
        return nest(self.values, self.launches)


@dataclass
class RunData:
    run_id: int
    run: dict
    status: str
    implementations: list[dict]
    variants: list[str]
    jobs: list[dict]
    settings: dict
    cells: dict[Key, dict[str, Group]]

    @property
    def machine(self) -> dict:
        return json.loads(self.run["machine"])

    def benches(self) -> list[str]:
        present = {k[0] for k in self.cells}
        return [b for b in BENCHMARKS if b in present]


_SEVERITY = {"ok": 0, "na": 1, "skipped": 2, "invalid": 3, "failed": 4}


def load(store: Store, run_id: int) -> RunData:
    obs = store.observations(run_id)
    extras = store.extras(run_id)
    cells: dict[Key, dict[str, Group]] = {}
    for row in store.cells(run_id):
        bench = BENCHMARKS[row["bench"]]
        group = cells.setdefault((row["bench"], row["size"], row["np"]), {}).setdefault(
            row["variant"], Group())
        if row["status"] != "ok":
            if row["status"] != "na":
                group.lost[row["launch"]] = (row["status"], row["reason"] or "")
            if not group.values and _SEVERITY[row["status"]] > _SEVERITY[group.status]:
                group.status, group.reason = row["status"], row["reason"] or ""
        elif group.status != "ok":  # a launch measured what an earlier one could not
            group.status, group.reason = "ok", ""
        group.iterations = row["iterations"] or group.iterations
        group.timing = row["timing"]
        figures = [x for _, x in sorted(extras.get(row["id"], {}).items())]
        for i, per_rank in enumerate(obs.get(row["id"], [])):
            extra = {name: v + [math.nan] * (len(per_rank) - len(v))  # not finite: not stored
                     for name, v in (figures[i] if i < len(figures) else {}).items()}
            group.late += extra.get("late", [])[:1]  # kept even where every call was dropped
            value = bench.observation(per_rank, extra)
            if math.isfinite(value):
                group.launches.append(row["launch"])
                group.per_rank.append(per_rank)
                group.extras.append(extra)
                group.values.append(value)
    run = dict(store.run(run_id))
    variants = [v["variant"] for v in store.variants(run_id)]
    return RunData(run_id, run, store.status(store.run(run_id)),
                   [dict(r) for r in store.implementations(run_id)], variants,
                   [dict(j) for j in store.jobs(run_id)], json.loads(run["settings"]), cells)
