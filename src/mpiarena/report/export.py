"""Exports of one run: every observation of every rank, as CSV or JSON, with its extra figures
(CPU seconds per wall second, resident bytes, overlap and progress timings) where it has them.

`seconds_per_iteration` is what a rank timed: one iteration of the benchmark's loop (a whole
round trip for pingpong). `figure` is the observation as the tables report it, in `unit`: the
ranks reduced as the benchmark says (pingpong: half the round trip of ranks 0 and 1;
collectives: the slowest rank), the same on every rank's row."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import asdict

from ..model.benchmarks import BENCHMARKS
from ..store import Store

COLUMNS = ["run", "variant", "impl", "bench", "size", "np", "launch", "timing", "status",
           "iterations", "obs", "rank", "seconds_per_iteration", "figure", "unit"]
UNITS = {"s": "seconds", "%": "percent", "B": "bytes"}


def _extras(store: Store, run_id: int) -> dict[int, list[dict[str, list[float]]]]:
    """cell id -> per observation, name -> every rank's value."""
    return {c: [x for _, x in sorted(d.items())] for c, d in store.extras(run_id).items()}


def _rows(store: Store, run_id: int, names: list[str]) -> Iterator[list[object]]:
    impl_of = {v.variant: v.impl_id for v in store.variants(run_id)}
    obs = store.observations(run_id)
    extras = _extras(store, run_id)
    for cell in store.cells(run_id):
        figures = extras.get(cell.id, [])
        bench = BENCHMARKS[cell.bench]
        for index, per_rank in enumerate(obs.get(cell.id, [])):
            extra = figures[index] if index < len(figures) else {}
            figure = bench.observation(per_rank, {n: v + [float("nan")] * (len(per_rank) - len(v))
                                                  for n, v in extra.items()})
            for rank, t in enumerate(per_rank):
                yield [run_id, cell.variant, impl_of.get(cell.variant, ""), cell.bench,
                       cell.size, cell.np, cell.launch, cell.timing, cell.status,
                       cell.iterations, index, rank, t, figure, UNITS[bench.unit],
                       *(extra[n][rank] if n in extra else "" for n in names)]


def to_csv(store: Store, run_id: int) -> str:
    names = sorted({n for d in store.extras(run_id).values() for x in d.values() for n in x})
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(COLUMNS + names)
    writer.writerows(_rows(store, run_id, names))
    return out.getvalue()


def to_json(store: Store, run_id: int) -> str:
    run = store.run(run_id)
    obs = store.observations(run_id)
    extras = _extras(store, run_id)
    doc = {
        # the run's row as exported before runs recorded their kind (the format unchanged)
        "run": {k: v for k, v in asdict(run).items() if k != "kind"} |
               {"status": store.status(run)},
        "implementations": [asdict(r) for r in store.implementations(run_id)],
        "variants": [asdict(r) for r in store.variants(run_id)],
        "jobs": [asdict(j) for j in store.jobs(run_id)],
        "cells": [asdict(c) | {"observations": obs.get(c.id, []), "extras": extras.get(c.id, [])}
                  for c in store.cells(run_id)],
    }
    return json.dumps(doc, indent=1)
