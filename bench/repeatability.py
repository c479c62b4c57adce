#!/usr/bin/env python3
"""Do verdicts hold when the same command runs again? (issue 11: the launch is the unit)

Runs one comparison (3 implementations x 4 benchmarks x 5 sizes at 2 ranks) R times back to
back, then, for every pair of runs and every (benchmark, size, pair of implementations),
compares the verdicts the launch statistics give: the share identical (target >= 90%), the
share where both say "faster" in opposite directions (target <= 1%), the share with the same
verdict among the comparisons that either run decided (target >= 80%: a rule that never
decides scores 100% identical, so this one is the measure of quality), and the share of
(variant, cell) whose figure in one run lies inside the other run's rerun range (90% or more
when runs drift no more than launches do; no target, since drift between runs lies outside
every interval of one run; the 95% interval of the figure is printed beside it: it holds
another run's figure only about 83% of the time even when runs vary no more than launches).
Every pair of implementations is judged as a cell of its own, corrected across the run
(stats.CORRECTION).
Prints the figures and exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import itertools
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import impl_option
from harness_overhead import mpiarena_argv

from mpiarena.analysis.groups import comparable
from mpiarena.analysis.stats import center, center_ci, rerun_range, verdicts
from mpiarena.store import Store
from mpiarena.store.results import RunData, load

IMPLS = ("mpich-4.0.2", "openmpi-4.1.4", "mpich-5.0.2")
BENCH = "pingpong,bcast,allreduce,alltoall"
SIZES = "8,512,4K,64K,1M"


def outcomes(data: RunData) -> dict[tuple, str]:
    """(bench, size, np, a, b) -> 'a faster' | 'b faster' | 'indistinguishable' | 'undecided'
    for every pair of variants measured in a cell."""
    pairs, keys = [], []
    for key, cell in sorted(data.cells.items()):
        ok = comparable(cell)
        for a, b in itertools.combinations(sorted(ok), 2):
            pairs.append({a: ok[a], b: ok[b]})
            keys.append((*key, a, b))
    out = {}
    for key, (v,) in zip(keys, verdicts(pairs), strict=True):
        out[key] = f"{v.fast} faster" if v.outcome == "faster" else v.outcome
    return out


def inside(a: RunData, b: RunData) -> tuple[int, int, int]:
    """(variant, cell)s of a whose figure lies inside b's 95% interval, inside b's rerun range,
    and how many both runs have."""
    in_ci = in_range = total = 0
    for key, cell in a.cells.items():
        other = comparable(b.cells.get(key, {}))
        for variant, sample in comparable(cell).items():
            if variant in other:
                figure = center(sample)
                lo, hi = center_ci(other[variant])
                in_ci += lo <= figure <= hi
                lo, hi = rerun_range(other[variant])
                in_range += lo <= figure <= hi
                total += 1
    return in_ci, in_range, total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--launches", type=int, default=10)
    ap.add_argument("--observations", type=int, default=2)
    ap.add_argument("--budget", default="60s",
                    help="each run's time budget, as `mpiarena run --budget` (default 60s)")
    impl_option(ap, IMPLS)
    args = ap.parse_args()
    impls = args.impl or list(IMPLS)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "repeat.db"
        walls = []
        for r in range(args.runs):
            start = time.monotonic()
            done = subprocess.run([*mpiarena_argv(), "run", *(a for i in impls
                                                               for a in ("--impl", i)),
                                   "--bench", BENCH, "--sizes", SIZES, "--np", "2",
                                   "--launches", str(args.launches), "--observations",
                                   str(args.observations), "--budget", args.budget,
                                   "--db", str(db)],
                                  capture_output=True, text=True, stdin=subprocess.DEVNULL)
            walls.append(time.monotonic() - start)
            if done.returncode != 0:
                print(f"run {r + 1} failed: {done.stderr.strip()[-400:]}")
                return 1
        store = Store(db)
        runs = [load(store, i) for i in range(1, args.runs + 1)]
    judged = [outcomes(d) for d in runs]
    same = opposite = both = either = agreed = 0
    for a, b in itertools.combinations(judged, 2):
        for key in set(a) & set(b):
            both += 1
            same += a[key] == b[key]
            if a[key] != "undecided" or b[key] != "undecided":
                either += 1
                agreed += a[key] == b[key]
            opposite += (a[key].endswith("faster") and b[key].endswith("faster")
                         and a[key] != b[key])
    in_ci = in_range = total = 0
    for a, b in itertools.permutations(runs, 2):
        c, r, t = inside(a, b)
        in_ci, in_range, total = in_ci + c, in_range + r, total + t
    decided = sum(v.endswith("faster") or v == "indistinguishable" for j in judged
                  for v in j.values()) / max(1, sum(len(j) for j in judged))
    print(f"{args.runs} runs of {len(impls)} implementations x {BENCH} x {SIZES} at 2 ranks, "
          f"{args.launches} launches of {args.observations} observations each, then launches "
          f"where a comparison is open within a {args.budget} budget; "
          f"{sum(walls) / len(walls):.0f} s per run")
    print(f"identical verdicts:        {same / both:6.1%} of {both} (run pair x cell x pair; "
          "target >= 90%)")
    print(f"opposite 'faster' verdicts: {opposite / both:5.1%} (target <= 1%)")
    print(f"same verdict where either run decided: {agreed / max(either, 1):.1%} of {either} "
          "(target >= 80%)")
    print(f"figure inside the other run's 95% interval of its figure: {in_ci / total:.1%} of "
          f"{total} (about 83% if runs vary as launches do: both figures vary)")
    print(f"figure inside the other run's rerun range: {in_range / total:.1%} (90% or more "
          "when runs drift no more than launches do; drift between runs lies outside it)")
    print(f"decided (faster or indistinguishable): {decided:.1%} of verdicts")
    met = same / both >= 0.90 and opposite / both <= 0.01 and agreed / max(either, 1) >= 0.80
    print("targets met" if met else "targets MISSED")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
