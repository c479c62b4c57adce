#!/usr/bin/env python3
"""Where a figure's spread lies, and what each level costs: launches, cell-runs, observations.

The quick suite measures each cell once per launch (one cell-run: its warm-up, then a few
observations) and takes the launch's median. Whether more observations per cell-run, more
cell-runs per launch or more launches buy the narrowest interval per second depends on where
the variance lies and on what each level costs (Kalibera and Jones, "Rigorous benchmarking in
reasonable time", ISMM 2013). This bench measures both for one implementation: N launches of
2 ranks, each running a few quick-suite cells R times in turn (R cell-runs of O observations),
through mpiarena's own job code.

Per cell it prints the log-scale variance components (nested one-way analysis: between
launches, between cell-runs of one launch, between observations of one cell-run) and their
shares; the costs, in ms a cell: a launch's start and quit spread over its cells, a cell-run's
warm-up, calibration and exchange with the harness, an observation's step; the counts that
Kalibera and Jones's allocation gives (cell-runs per launch, observations per cell-run); and
how much longer the quick suite's design (1 cell-run of 2 observations per launch) takes than
that allocation for the same interval.

Usage: python bench/variance_levels.py [--impl mpich-4.0.2] [--launches 24] [--repeats 4]
       [--observations 2]
"""

from __future__ import annotations

import argparse
import math
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from common import one_impl_option

from mpiarena.base import paths, users
from mpiarena.base.records import Cell, CellRequest
from mpiarena.impls import Implementation, discover
from mpiarena.model.benchmarks import BENCHMARKS
from mpiarena.platform.build import build_core
from mpiarena.platform.plan import Variant
from mpiarena.runner.launch import Daemons, job_for

NP = 2
CELLS = [Cell("pingpong", 8, NP), Cell("pingpong", 65536, NP), Cell("pingpong", 1 << 20, NP),
         Cell("allreduce", 65536, NP), Cell("bcast", 1 << 20, NP), Cell("alltoall", 32768, NP)]
QUICK = (1, 2)  # the quick suite: 1 cell-run of 2 observations per launch


@dataclass
class Measured:
    """One cell's observations (launch x cell-run x observation) and its costs in seconds."""

    values: list[list[list[float]]] = field(default_factory=list)
    run_overhead: list[float] = field(default_factory=list)  # a cell-run's wall minus observing
    observation: list[float] = field(default_factory=list)  # observing / observations


@dataclass(frozen=True)
class Components:
    """Log-scale variances between launches, cell-runs of a launch, observations of a run."""

    launch: float
    run: float
    obs: float

    @property
    def total(self) -> float:
        return self.launch + self.run + self.obs


def components(x: np.ndarray) -> Components:
    """The nested one-way analysis of x[launch, run, obs] (log values), moment estimates."""
    _, runs, obs = x.shape
    within = float(x.var(axis=2, ddof=1).mean())
    run_means = x.mean(axis=2)
    between_runs = float(run_means.var(axis=1, ddof=1).mean())
    return Components(max(0.0, float(run_means.mean(axis=1).var(ddof=1)) - between_runs / runs),
                      max(0.0, between_runs - within / obs), within)


def cost_of_interval(v: Components, c_launch: float, c_run: float, c_obs: float,
                     runs: int, obs: int) -> float:
    """Variance of one launch's mean times a launch's cost: the time a given interval takes."""
    return (v.launch + v.run / runs + v.obs / (runs * obs)) * (c_launch
                                                                + runs * (c_run + obs * c_obs))


def best_counts(v: Components, c_launch: float, c_run: float, c_obs: float) -> tuple[int, int]:
    """Kalibera and Jones's allocation, rounded to the better integer neighbour."""
    def near(x: float) -> list[int]:
        return sorted({max(1, math.floor(x)), max(1, math.ceil(x))})
    runs = math.sqrt(c_launch * v.run / (c_run * v.launch)) if v.launch > 0 else 8.0
    obs = math.sqrt(c_run * v.obs / (c_obs * v.run)) if v.run > 0 else 8.0
    return min(((r, o) for r in near(min(runs, 8.0)) for o in near(min(obs, 8.0))),
               key=lambda ro: cost_of_interval(v, c_launch, c_run, c_obs, *ro))


def measure(impl: Implementation, args: argparse.Namespace) -> tuple[dict[Cell, Measured], float]:
    """Every launch's cell-runs; and the mean seconds a launch took to start and quit."""
    binary = build_core(impl).binary
    data = {c: Measured() for c in CELLS}
    start_quit: list[float] = []
    work = Path(tempfile.mkdtemp(dir=paths.scratch_dir()))
    work.chmod(0o755)
    daemons = Daemons(work, users.for_ranks(), "bench")
    try:
        for n in range(args.launches):
            job, _ = job_for(Variant(impl.id, impl), NP, binary, work / "err", daemons)
            try:
                began = time.perf_counter()
                job.start(timeout=60)
                started = time.perf_counter() - began
                # the first cell of a launch pays the job's first touches: a throwaway one
                job.cell(CellRequest(Cell("pingpong", 8, NP), timing="loop", observations=2,
                                     target_time=args.target, max_time=2.0),
                         0, timeout=60)
                runs: dict[Cell, list[list[float]]] = {c: [] for c in CELLS}
                hints: dict[Cell, int | None] = {}
                for r in range(args.repeats):
                    for i, cell in enumerate(CELLS):
                        sync = "loop" if cell.bench.startswith("ping") else "window"
                        asked = CellRequest(cell, timing=sync, observations=args.observations,
                                            target_time=args.target, max_time=2.0)
                        began = time.perf_counter()
                        res = job.cell(asked, 1 + r * len(CELLS) + i, timeout=60,
                                       calibrated=hints.get(cell))
                        wall = time.perf_counter() - began
                        hints.setdefault(cell, res.iterations)
                        runs[cell].append([BENCHMARKS[cell.bench].observation(o.per_rank)
                                           for o in res.observations])
                        data[cell].run_overhead.append(wall - res.spent.observing)
                        data[cell].observation.append(res.spent.observing / args.observations)
                began = time.perf_counter()
                job.quit(timeout=30)
                start_quit.append(started + time.perf_counter() - began)
            finally:
                job.kill()
            for cell in CELLS:
                data[cell].values.append(runs[cell])
            print(f"  launch {n + 1} of {args.launches}", file=sys.stderr, end="\r")
    finally:
        daemons.stop_all()
        shutil.rmtree(work, ignore_errors=True)
    print(file=sys.stderr)
    return data, float(np.mean(start_quit))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    one_impl_option(parser, "mpich-4.0.2")
    parser.add_argument("--launches", type=int, default=24)
    parser.add_argument("--repeats", type=int, default=4, help="cell-runs of each cell a launch")
    parser.add_argument("--observations", type=int, default=2, help="observations a cell-run")
    parser.add_argument("--target", type=float, default=1e-3,
                        help="seconds an observation lasts at least (the quick suite's 1 ms)")
    parser.add_argument("--cells-a-launch", type=int, default=60,
                        help="cells a quick-suite launch holds, over which its start and quit "
                        "are spread (about 60 for an MPI library)")
    args = parser.parse_args()
    found = {f.impl.id: f.impl for f in discover({}, paths.impls_dir()) if f.impl is not None}
    if args.impl not in found:
        print(f"error: no usable {args.impl}; choose one of {', '.join(sorted(found))}",
              file=sys.stderr)
        return 2
    data, start_quit = measure(found[args.impl], args)
    c_launch = start_quit / args.cells_a_launch
    print(f"{args.impl}, {NP} ranks: {args.launches} launches x {args.repeats} cell-runs x "
          f"{args.observations} observations; a launch starts and quits in "
          f"{start_quit * 1e3:.0f} ms ({c_launch * 1e3:.2f} ms a cell over "
          f"{args.cells_a_launch} cells)")
    print(f"{'cell':18s} {'median':>10s}  log-sd: {'launch':>6s} {'run':>6s} {'obs':>6s}  "
          f"shares (launch/run/obs)  ms: {'run':>5s} {'obs':>5s}  best (runs, obs)  "
          f"quick design's extra time")
    extra = []
    for cell, m in data.items():
        x = np.log(np.array(m.values))
        v = components(x)
        c_run, c_obs = float(np.median(m.run_overhead)), float(np.median(m.observation))
        best = best_counts(v, c_launch, c_run, c_obs)
        ratio = (cost_of_interval(v, c_launch, c_run, c_obs, *QUICK)
                 / cost_of_interval(v, c_launch, c_run, c_obs, *best))
        extra.append(ratio)
        print(f"{cell.bench + ' ' + str(cell.size):18s} {float(np.exp(np.median(x))) * 1e6:8.2f}"
              f"us  {math.sqrt(v.launch):13.3f} {math.sqrt(v.run):6.3f} {math.sqrt(v.obs):6.3f}"
              f"  {v.launch / v.total:7.0%} {v.run / v.total:5.0%} {v.obs / v.total:5.0%}    "
              f"    {c_run * 1e3:5.2f} {c_obs * 1e3:5.2f}  {best!s:>16s}  "
              f"{ratio - 1:+.0%}")
    print(f"the quick suite's design takes {float(np.median(extra)) - 1:+.0%} (median over the "
          f"cells; {min(extra) - 1:+.0%} to {max(extra) - 1:+.0%}) of the time the best "
          "allocation takes for the same interval")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
