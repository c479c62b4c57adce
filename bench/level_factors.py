#!/usr/bin/env python3
"""What moves a library's level from run to run: one factor at a time, over several runs.

A quick run's cells at 1 MiB held a level inside a run that the next run did not (issue 60:
alltoall 1 MiB of LAM/MPI at 291, 140, 132, 302 us over four runs). This bench repeats small
"runs" as `mpiarena run` makes them, through mpiarena's own job code: each run is a series of
launches of every library, interleaved, each launch measuring allreduce and alltoall at 1 MiB
and pingpong at 8 B (the control) with one observation each, as the quick suite does. Between
the runs it changes one factor:

- `carried`: the harness as it was before 2026-12-02: the first launch of a run calibrates each
  cell's iteration count k, and every later launch of the run starts from it (`k=` hint);
- `fresh`: every launch calibrates its own k.

Before every launch it reads the machine's state: the machine floor's cache-line round trip
between the ranks' two cores (pingpong 8 B of the floor, one observation), as mpiarena now
records with every launch.

For each library, cell and setting it prints the log-scale spread of launch figures inside a
run and of run medians between runs (one-way analysis of variance, method of moments: the
between-run component is the spread of run medians that the launches inside a run do not
explain), and the correlation of launch figures with the probe.

Usage: python bench/level_factors.py [--impl mpich-4.0.2,openmpi-4.1.4] [--runs 4]
       [--launches 6] [--settings carried,fresh]
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from common import impl_ids, impl_option

from mpiarena.base import paths, users
from mpiarena.base.records import Cell, CellRequest
from mpiarena.impls import Implementation, discover
from mpiarena.model.benchmarks import BENCHMARKS
from mpiarena.platform.build import build_core
from mpiarena.platform.plan import Variant
from mpiarena.runner.launch import Daemons, job_for

NP = 2
IMPLS = ("mpich-4.0.2", "openmpi-4.1.4")
TARGET = 1e-3  # the quick suite's target_time
CELLS = [Cell("allreduce", 1 << 20, NP), Cell("alltoall", 1 << 20, NP), Cell("pingpong", 8, NP)]
PROBE = Cell("pingpong", 8, NP)


@dataclass
class Series:
    """One library's launch figures of one cell under one setting: runs x launches (seconds),
    and the probe read before each launch."""

    figures: list[list[float]] = field(default_factory=list)
    probes: list[list[float]] = field(default_factory=list)
    ks: list[list[int]] = field(default_factory=list)


def timing(cell: Cell) -> str:
    return "loop" if cell.bench.startswith("ping") else "window"


class Bench:
    """The launches, through mpiarena's job code."""

    def __init__(self, impls: list[Implementation], floor: Implementation, work: Path):
        self.impls, self.floor, self.work = impls, floor, work
        self.daemons = Daemons(work, users.for_ranks(), "bench")
        self.binaries = {i.id: build_core(i).binary for i in [*impls, floor]}

    def launch(self, impl: Implementation, cells: list[tuple[Cell, int | None, float]]
               ) -> list[tuple[float, int]]:
        """One launch measuring each (cell, k hint, target): its figure and k."""
        job, _ = job_for(Variant(impl.id, impl), NP, self.binaries[impl.id], self.work / "err",
                         self.daemons)
        out = []
        try:
            job.start(timeout=60)
            for i, (cell, hint, target) in enumerate(cells):
                res = job.cell(CellRequest(cell, timing=timing(cell), observations=1,
                                           target_time=target, max_time=2.0), i, timeout=60,
                               calibrated=hint)
                figures = [BENCHMARKS[cell.bench].observation(o.per_rank)
                           for o in res.observations]
                out.append((statistics.median(figures) if figures else math.nan,
                            res.iterations or 0))
            job.quit(timeout=30)
        finally:
            job.kill()
        return out

    def probe(self) -> float:
        return self.launch(self.floor, [(PROBE, None, TARGET)])[0][0]

    def run(self, setting: str, launches: int, data: dict[tuple[str, str], Series]) -> None:
        """One run of every library under `setting`, launch i of each before launch i+1."""
        carried: dict[tuple[str, Cell], int] = {}
        for key, s in data.items():
            if key[0] == setting:
                s.figures.append([])
                s.probes.append([])
                s.ks.append([])
        for _ in range(launches):
            for impl in self.impls:
                asked = []
                for cell in CELLS:
                    hint = carried.get((impl.id, cell)) if setting == "carried" else None
                    asked.append((cell, hint, TARGET))
                probe = self.probe()
                for cell, (figure, k) in zip(CELLS, self.launch(impl, asked), strict=True):
                    carried.setdefault((impl.id, cell), k)
                    s = data[(setting, f"{impl.id} {cell.bench} {cell.size}")]
                    s.figures[-1].append(figure)
                    s.probes[-1].append(probe)
                    s.ks[-1].append(k)

    def stop(self) -> None:
        self.daemons.stop_all()


def components(x: np.ndarray) -> tuple[float, float]:
    """Log sds within runs and between runs (the part of the run medians' spread that the
    launches inside a run do not explain) of x[run, launch] (log values)."""
    within = float(np.nanmean(np.nanvar(x, axis=1, ddof=1)))
    means = np.nanmean(x, axis=1)
    between = float(np.nanvar(means, ddof=1)) - within / x.shape[1]
    return math.sqrt(within), math.sqrt(max(0.0, between))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    impl_option(parser, IMPLS)
    parser.add_argument("--runs", type=int, default=4, help="runs of each setting")
    parser.add_argument("--launches", type=int, default=6, help="launches of each library a run")
    parser.add_argument("--settings", default="carried,fresh")
    args = parser.parse_args()
    found = {f.impl.id: f.impl for f in discover({}, paths.impls_dir()) if f.impl is not None}
    wanted = impl_ids(args.impl, IMPLS)
    missing = [i for i in [*wanted, "floor"] if i not in found]
    if missing:
        print(f"error: no usable {', '.join(missing)}; choose from {', '.join(sorted(found))}",
              file=sys.stderr)
        return 2
    settings = args.settings.split(",")
    work = Path(tempfile.mkdtemp(dir=paths.scratch_dir()))
    work.chmod(0o755)
    bench = Bench([found[i] for i in wanted], found["floor"], work)
    data = {(s, f"{i} {c.bench} {c.size}"): Series() for s in settings for i in wanted
            for c in CELLS}
    began, load = time.time(), os.getloadavg()[0]
    try:
        for r in range(args.runs):
            for s in settings:  # the settings' runs interleaved, so that the hours they see match
                bench.run(s, args.launches, data)
                print(f"  run {r + 1} of {args.runs}, {s}", file=sys.stderr, end="\r")
    finally:
        bench.stop()
        shutil.rmtree(work, ignore_errors=True)
    print(file=sys.stderr)
    print(f"{len(wanted)} libraries x {args.runs} runs x {args.launches} launches a setting, "
          f"{time.time() - began:.0f} s; load average {load:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end")
    print(f"{'setting':8s} {'library and cell':32s} {'median':>9s} {'within':>7s} "
          f"{'between':>7s}  {'run medians (us)':40s} {'r(probe)':>8s}  k")
    for (setting, name), s in data.items():
        x = np.log(np.array(s.figures))
        within, between = components(x)
        runs = " ".join(f"{math.exp(float(np.nanmedian(row))) * 1e6:.3g}" for row in x)
        p = np.log(np.array(s.probes)).ravel()
        ok = np.isfinite(p) & np.isfinite(x.ravel())
        r = float(np.corrcoef(p[ok], x.ravel()[ok])[0, 1]) if ok.sum() > 2 else math.nan
        ks = sorted({k for row in s.ks for k in row})
        print(f"{setting:8s} {name:32s} {math.exp(float(np.nanmedian(x))) * 1e6:7.3g}us "
              f"{within:7.3f} {between:7.3f}  {runs:40s} {r:8.2f}  "
              f"{ks[0]}-{ks[-1]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
