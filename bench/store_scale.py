#!/usr/bin/env python3
"""Does the store scale with the cluster? (issue 18: thousands of ranks)

Writes synthetic runs of the default suite's cells (point-to-point at 2 ranks, every collective
at N ranks, start-up at N) for 4 variants in several launches through `Store.add_cell`, the call
the runner makes, with each observation's ranks as the job parser hands them over (a list of
floats); a few ranks are stragglers, as on a cluster. Then times `mpiarena show`, `report`
(HTML) and `export --summary` on each, each command in a fresh process, and prints wall time,
peak resident memory and the store's size. Exit status 1 when the largest rank count takes
longer than --limit seconds to store and report (write + report).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from mpiarena.base.records import (
    Cell,
    CellRow,
    JobRow,
    RunKind,
    RunSettings,
    VariantRecord,
)
from mpiarena.base.status import CellStatus
from mpiarena.model.benchmarks import BENCHMARKS
from mpiarena.model.runs import RunStart
from mpiarena.platform.plan import cells_by_np
from mpiarena.store import Obs, Store
from mpiarena.suites import load as load_suite

VARIANTS = {"mpich-4.0.2": 1.0, "openmpi-4.1.4": 0.8, "mpich-5.0.2": 1.6, "impi-2021.19": 1.1}
COMMANDS = {"show": ["show", "latest"], "report": ["report", "latest", "-o", "{dir}/r.html"],
            "export --summary": ["export", "latest", "--summary", "--format", "json",
                                 "-o", "{dir}/s.json"]}


def seconds(cell: Cell, level: float) -> float:
    """A plausible time per iteration: latency growing with log2 ranks, then bandwidth."""
    hops = np.log2(max(cell.np, 2))
    return level * (2e-6 * hops + cell.size * hops / 5e9)


def add_variants(store: Store, run: int, variants: list[str]) -> None:
    """Each synthetic variant, its implementation's default."""
    for variant in variants:
        store.add_variant(VariantRecord(run_id=run, variant=variant, impl_id=variant,
                                        name="default", env={}, args=[], binding="core"))


@dataclass(frozen=True)
class CellAt:
    """Where a synthetic cell is written: its run, job and variant, and its place in the run."""

    run: int
    job: int
    variant: str
    seq: int
    launch: int


def add_cell(store: Store, at: CellAt, cell: Cell, seconds: np.ndarray) -> None:
    """One measured cell as the runner writes it: a row of every rank's seconds per
    observation, collectives timed between barriers, the rest in a loop."""
    timing = "barrier" if BENCHMARKS[cell.bench].kind == "coll" else "loop"
    store.add_cell(CellRow(run_id=at.run, job_id=at.job, variant=at.variant, bench=cell.bench,
                           size=cell.size, np=cell.np, iterations=100, status=CellStatus.OK,
                           seq=at.seq, launch=at.launch, timing=timing),
                   [Obs(i, row.tolist()) for i, row in enumerate(seconds)])


def write(db: Path, ranks: int, launches: int, observations: int, seed: int) -> int:
    """One synthetic run written as the runner writes it; the number of observations."""
    suite = load_suite("default")
    cells = [c for cs in cells_by_np(replace(suite, nps=(ranks,))).values() for c in cs]
    cells += [Cell("init", 0, ranks), Cell("finalize", 0, ranks)]
    rng = np.random.default_rng(seed)
    slow = rng.choice(ranks, size=max(1, ranks // 512), replace=False)  # stragglers
    store = Store(db)
    start = RunStart(RunKind.BENCHMARK, "default", f"store_scale {ranks}",
                     RunSettings(launches=launches), seed, {"cores": 2, "synthetic": True})
    with store.new_run(start) as started:
        run = started.id
        add_variants(store, run, list(VARIANTS))
        seq = written = 0
        for launch in range(launches):
            for variant, level in VARIANTS.items():
                job = store.add_job(JobRow(run_id=run, variant=variant, np=ranks, topology="local",
                                           binding="core", command=["synthetic"]))
                drift = level * rng.lognormal(0, 0.1)  # set at launch
                for cell in cells:
                    nobs = 1 if BENCHMARKS[cell.bench].kind == "startup" else observations
                    base = seconds(cell, drift)
                    t = base * rng.lognormal(0, 0.05, size=(nobs, cell.np))
                    t[:, slow[slow < cell.np]] *= 1.5
                    add_cell(store, CellAt(run, job, variant, seq, launch), cell, t)
                    seq += 1
                    written += nobs
    store.close()
    return written


def timed(argv: list[str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak resident MiB of one command in a fresh process."""
    began = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"error: {' '.join(argv)} failed")
    return (time.perf_counter() - began, usage.ru_utime + usage.ru_stime,
            usage.ru_maxrss / 1024)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", default="64,512,4096")
    ap.add_argument("--launches", type=int, default=5)
    ap.add_argument("--observations", type=int, default=3, help="per cell and launch (the "
                    "default suite's 3)")
    ap.add_argument("--limit", type=float, default=60.0)
    ap.add_argument("--write", nargs=2, metavar=("DB", "RANKS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.write:
        write(Path(args.write[0]), int(args.write[1]), args.launches, args.observations, 1)
        return 0
    me = [sys.executable, __file__, "--launches", str(args.launches), "--observations",
          str(args.observations)]
    arena = [str(Path(sys.executable).with_name("mpiarena"))]
    print("each step: wall seconds / CPU seconds / peak resident MiB (the machine is shared: "
          "CPU seconds are what the step itself cost)")
    print(f"{'ranks':>6} {'observations':>12} {'rank values':>11} {'store':>8}  "
          + "  ".join(f"{p:>24}" for p in ["write", *COMMANDS]))
    total = cpu = 0.0
    for ranks in (int(x) for x in args.ranks.split(",")):
        with tempfile.TemporaryDirectory(prefix="store-scale-") as tmp:
            db = Path(tmp) / "s.db"
            figures = [timed([*me, "--write", str(db), str(ranks)])]
            store = Store(db)
            nobs, values = store.counts(store.resolve("latest"))
            store.close()
            for argv in COMMANDS.values():
                figures.append(timed([*arena, *(a.format(dir=tmp) for a in argv),
                                      "--db", str(db)]))
            total, cpu = figures[0][0] + figures[2][0], figures[0][1] + figures[2][1]
            print(f"{ranks:>6} {nobs:>12,} {values / 1e6:>10.1f}M "
                  f"{db.stat().st_size / 2**20:>6.0f}MB  "
                  + "  ".join(f"{t:>6.1f} s {c:>5.1f} s {mib:>5.0f} MiB"
                              for t, c, mib in figures), flush=True)
    print(f"largest: stored and reported in {total:.1f} s wall, {cpu:.1f} s CPU "
          f"(limit {args.limit:.0f} s)")
    return 0 if total <= args.limit else 1


if __name__ == "__main__":
    sys.exit(main())
