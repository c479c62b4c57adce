#!/usr/bin/env python3
"""Does a run's answer hold on the next run? Quick runs back to back, every ordered pair.

Runs `mpiarena run --suite quick` N times back to back into one store, as a user's
`mpiarena.db` collects them (each run after the first learns the machine's run-to-run spread
from those before it: analysis/run_spread.py), then reads each run's summary export (the
records `mpiarena export --summary` writes) and, for every ordered pair of runs (first,
rerun), counts:

- opposite "faster" verdicts between MPI libraries (target: none);
- the share of comparisons between MPI libraries each run decided (target: 85%), and its wall
  time (target: 120 s);
- a rerun's figure inside the first run's rerun range (target: 95% overall, 90% at 256 KiB
  and above);
- a rerun's ratio (the first run's slower over its fastest, as the rerun measured them) inside
  the interval printed beside the first run's verdict (target: 80% in each band).

Prints the figures by band and exits 1 when a target is missed. `--db FILE` reads the runs
already in a store instead of running (`--first ID` the first of them).

Usage: python bench/reruns.py [--runs 6] [--db FILE [--first ID]] [--keep FILE]
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from harness_overhead import mpiarena_argv, timed_run

from mpiarena.analysis.answer import mpi_variants
from mpiarena.analysis.run import analyse
from mpiarena.analysis.run_spread import Band, band_of
from mpiarena.report.summary_export import records
from mpiarena.store import Store
from mpiarena.store.results import load

TARGETS = {"decided": 0.85, "wall": 120.0, "rerun": 0.95, "rerun large": 0.90, "ratio": 0.80}


@dataclass(frozen=True)
class Exported:
    """One run's summary records by (variant, bench, size, np), its MPI libraries, its wall
    time and the spread its intervals carry."""

    run_id: int
    records: dict[tuple[str, str, int, int], dict[str, object]]
    mpi: set[str]
    wall: float
    spread: str


def exported(store: Store, run_id: int, wall: float) -> Exported:
    data = load(store, run_id)
    a = analyse(data)
    spread = "none" if a.spread is None else \
        (f"learned from {a.spread.runs} earlier runs" if a.spread.learned
         else "stated allowance")
    return Exported(run_id, {(str(r["variant"]), str(r["bench"]), int(str(r["size"])),
                              int(str(r["np"]))): r for r in records(a)},
                    set(mpi_variants(data)), wall, spread)


def _number(x: object) -> float:
    return float(x) if isinstance(x, (int, float)) else math.nan


class Tally:
    """Hits out of trials, by band and overall."""

    def __init__(self) -> None:
        self.hits: dict[Band | None, int] = {}
        self.trials: dict[Band | None, int] = {}

    def add(self, band: Band, hit: bool) -> None:
        for b in (band, None):
            self.hits[b] = self.hits.get(b, 0) + hit
            self.trials[b] = self.trials.get(b, 0) + 1

    def share(self, band: Band | None = None) -> float:
        return self.hits.get(band, 0) / max(self.trials.get(band, 0), 1)

    def text(self) -> str:
        parts = [f"{self.share(b):.1%} at {b}" for b in Band if self.trials.get(b)]
        return f"{self.share():.1%} of {self.trials.get(None, 0)} ({'; '.join(parts)})"


def faster(r: dict[str, object]) -> bool:
    return r.get("verdict") == "faster"


def pairs_of(runs: list[Exported]) -> Iterable[tuple[Exported, Exported]]:
    return itertools.permutations(runs, 2)


def count(runs: list[Exported]) -> dict[str, Tally]:
    """Opposite verdicts, rerun ranges and ratio intervals over every ordered pair of runs."""
    rerun, ratio, opposite = Tally(), Tally(), Tally()
    for first, again in pairs_of(runs):
        for (variant, bench, size, np_), r in first.records.items():
            other = again.records.get((variant, bench, size, np_))
            band = band_of(size)
            low, high = _number(r.get("rerun_low")), _number(r.get("rerun_high"))
            if other is None or not math.isfinite(again_figure := _number(other.get("figure"))):
                continue
            if math.isfinite(low):
                rerun.add(band, low <= again_figure <= high)
            fast = r.get("fastest")
            if not isinstance(fast, str) or fast == variant or variant not in first.mpi or \
                    fast not in first.mpi or r.get("verdict") is None:
                continue
            f_again = again.records.get((fast, bench, size, np_))
            if f_again is None:
                continue
            rerun_ratio = again_figure / _number(f_again.get("figure"))
            lo, hi = _number(r.get("ratio_ci_low")), _number(r.get("ratio_ci_high"))
            if math.isfinite(lo) and math.isfinite(hi) and math.isfinite(rerun_ratio):
                ratio.add(band, lo <= rerun_ratio <= hi)
            # the rerun's verdict on the same pair, whichever it named fastest
            reverse = other.get("fastest") == variant and f_again.get("verdict") == "faster"
            opposite.add(band, faster(r) and reverse)
    return {"rerun": rerun, "ratio": ratio, "opposite": opposite}


def decided(run: Exported) -> tuple[int, int]:
    """(decided, all) printed comparisons between MPI libraries."""
    judged = [r for (variant, *_), r in run.records.items() if variant in run.mpi
              and r.get("fastest") in run.mpi and r.get("fastest") != variant
              and r.get("verdict") is not None]
    return sum(r.get("verdict") in ("faster", "indistinguishable") for r in judged), len(judged)


def run_quick(db: Path, n: int) -> list[float]:
    """N quick runs back to back into `db`: each one's wall time."""
    walls = []
    for i in range(n):
        wall, code, err = timed_run([*mpiarena_argv(), "run", "--suite", "quick", "--db",
                                     str(db)], dict(os.environ), 600)
        print(f"  run {i + 1} of {n}: {wall:.0f} s, exit {code}", file=sys.stderr)
        if code != 0:
            print(err, file=sys.stderr)
        walls.append(wall)
    return walls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--db", type=Path, help="read the runs already in this store")
    parser.add_argument("--first", type=int, default=1, help="with --db: the first run read")
    parser.add_argument("--keep", type=Path, help="copy the store here afterwards")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="mpiarena-reruns-"))
    try:
        if args.db is None:
            db = scratch / "reruns.db"
            began = time.time()
            walls = run_quick(db, args.runs)
            print(f"{args.runs} quick runs in {time.time() - began:.0f} s")
        else:
            db = args.db
        store = Store(db)
        ids = [r.id for r, _ in store.runs() if r.id >= args.first][:args.runs]
        if args.db is not None:
            walls = [math.nan] * len(ids)
        runs = [exported(store, i, w) for i, w in zip(ids, walls, strict=True)]
        store.close()
        if args.keep:
            shutil.copy(db, args.keep)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    missed = []
    for run in runs:
        d, n = decided(run)
        print(f"run {run.run_id}: {run.wall:.0f} s, decided {d} of {n} comparisons between "
              f"MPI libraries ({d / max(n, 1):.0%}); intervals carry the run-to-run spread: "
              f"{run.spread}")
        if d / max(n, 1) < TARGETS["decided"]:
            missed.append(f"run {run.run_id} decided {d / max(n, 1):.0%}")
        if run.wall > TARGETS["wall"]:
            missed.append(f"run {run.run_id} took {run.wall:.0f} s")
    t = count(runs)
    print(f"opposite 'faster' verdicts: {t['opposite'].hits.get(None, 0)} of "
          f"{t['opposite'].trials.get(None, 0)} printed comparisons over "
          f"{len(runs) * (len(runs) - 1)} ordered pairs of runs (target 0)")
    print(f"a rerun's figure inside the first run's rerun range: {t['rerun'].text()} "
          "(target 95%, 90% at 256 KiB and above)")
    print(f"a rerun's ratio inside the interval beside the first run's verdict: "
          f"{t['ratio'].text()} (target 80% in each band)")
    if t["opposite"].hits.get(None, 0):
        missed.append("opposite verdicts")
    if t["rerun"].share() < TARGETS["rerun"] or \
            t["rerun"].share(Band.LARGE) < TARGETS["rerun large"]:
        missed.append("rerun ranges")
    if any(t["ratio"].trials.get(b) and t["ratio"].share(b) < TARGETS["ratio"] for b in Band):
        missed.append("ratio intervals")
    print("targets: " + ("all met" if not missed else "missed: " + "; ".join(missed)))
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
