#!/usr/bin/env python3
"""How long does `mpiarena report` take? (issue 25: a quick-suite run's report in <= 5 s)

Times the HTML report of a quick-suite-sized run, each in a fresh process as a user runs it:
a synthetic run shaped like `mpiarena run --suite quick` (its cells at 2 ranks for six variants,
16 launches of the measured cells and 10 of start-up, written as the runner writes them), or
the latest run of --db FILE (a real quick-suite run); then the synthetic stores of
`bench/store_scale.py`. Prints wall time, CPU time (the command and the processes that draw its
figures) and peak resident memory, the median of --repeat reports each; exit status 1 when the
quick-suite-sized report's median wall time is over --target seconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np
from store_scale import CellAt, add_cell, add_variants, seconds, timed
from store_scale import write as write_scale

from mpiarena.base.records import (
    Cell,
    JobRow,
    RunKind,
    RunSettings,
)
from mpiarena.model.benchmarks import BENCHMARKS
from mpiarena.model.runs import RunStart
from mpiarena.platform.plan import cells_by_np
from mpiarena.store import Store
from mpiarena.suites import load as load_suite

VARIANTS = {"mpich-4.0.2": 1.0, "openmpi-4.1.4": 0.8, "mpich-5.0.2": 1.6, "lam-7.1.4": 1.3,
            "pvm-3.4.6": 3.0, "tcp": 0.9}
LAUNCHES = 16  # of the measured cells, per variant: a quick run's 10 and its budget's extra ones


def write_quick(db: Path, seed: int) -> None:
    """A synthetic run shaped like a quick-suite run, written through `Store.add_cell`."""
    suite = load_suite("quick")
    cells = [c for cs in cells_by_np(suite).values() for c in cs]
    startup = [Cell("init", 0, 2), Cell("finalize", 0, 2)]
    rng = np.random.default_rng(seed)
    store = Store(db)
    start = RunStart(RunKind.BENCHMARK, "quick", "report_speed", RunSettings(), seed,
                     {"cores": 2, "synthetic": True})
    with store.new_run(start) as started:
        run = started.id
        add_variants(store, run, list(VARIANTS))
        seq = 0
        for launch in range(LAUNCHES):
            for variant, level in VARIANTS.items():
                for group in ([cells] + ([[c] for c in startup] if launch < suite.init_launches
                                         else [])):
                    job = store.add_job(JobRow(run_id=run, variant=variant, np=2, topology="local",
                                               binding="core", command=["synthetic"]))
                    drift = level * rng.lognormal(0, 0.05)
                    for cell in group:
                        once = BENCHMARKS[cell.bench].kind == "startup"
                        nobs = 1 if once else suite.observations
                        t = seconds(cell, drift) * rng.lognormal(0, 0.05, size=(nobs, cell.np))
                        add_cell(store, CellAt(run, job, variant, seq, launch), cell, t)
                        seq += 1
    store.close()


def report(db: Path, tmp: str, repeat: int) -> tuple[float, float, float]:
    """Median wall seconds, CPU seconds and peak MiB of `mpiarena report` of db's latest run."""
    arena = str(Path(sys.executable).with_name("mpiarena"))
    runs = [timed([arena, "report", "latest", "--db", str(db), "-o", f"{tmp}/r.html"])
            for _ in range(repeat)]
    wall, cpu, mib = (statistics.median(x) for x in zip(*runs, strict=True))
    return wall, cpu, mib


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, help="time the latest run of this store (a quick-suite "
                    "run) instead of a synthetic one")
    ap.add_argument("--ranks", default="64,512", help="store_scale's synthetic stores ('' for "
                    "none)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--target", type=float, default=5.0)
    args = ap.parse_args()
    print(f"`mpiarena report` (HTML), median of {args.repeat}, each in a fresh process; "
          f"{len(os.sched_getaffinity(0))} cores, load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="report-speed-") as tmp:
        db = args.db
        if db is None:
            db = Path(tmp) / "quick.db"
            write_quick(db, 1)
        wall, cpu, mib = report(db, tmp, args.repeat)
        store = Store(db)
        run_id = store.resolve("latest")
        nobs, _ = store.counts(run_id)
        store.close()
        met = wall <= args.target
        print(f"quick-suite-sized ({'synthetic' if args.db is None else db}, "
              f"{nobs:,} observations): {wall:.1f} s wall, {cpu:.1f} s CPU, {mib:.0f} MiB; "
              f"target <= {args.target:g} s: {'met' if met else 'NOT met'}", flush=True)
        for ranks in (int(x) for x in args.ranks.split(",") if x):
            scale = Path(tmp) / f"scale-{ranks}.db"
            write_scale(scale, ranks, 5, 3, 1)
            wall, cpu, mib = report(scale, tmp, args.repeat)
            print(f"store_scale, {ranks} ranks: {wall:.1f} s wall, {cpu:.1f} s CPU, "
                  f"{mib:.0f} MiB", flush=True)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
