#!/usr/bin/env python3
"""Do verdicts survive a CPU hog, and does the run say so? (issue 24: the run knows its machine)

Runs one comparison (3 implementations x 4 benchmarks x 5 sizes at 2 ranks, quick's launches
and a budget) on a quiet machine, then again with a busy loop pinned to one core for the whole
run. Prints the first lines the hog run printed (they must name the interference), and compares
the two runs' verdicts for every (benchmark, size, pair of implementations): the share where
both say "faster" in opposite directions (target <= 1%), identical, and the same verdict where
either decided. Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from common import impl_option
from harness_overhead import mpiarena_argv
from repeatability import BENCH, IMPLS, SIZES, outcomes

from mpiarena.store import Store
from mpiarena.store.results import load


def run(impls: list[str], budget: str, db: Path) -> str:
    """One mpiarena run into db; its terminal output."""
    done = subprocess.run([*mpiarena_argv(), "run", *(a for i in impls for a in ("--impl", i)),
                           "--bench", BENCH, "--sizes", SIZES, "--np", "2", "--budget", budget,
                           "--db", str(db)], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        sys.exit(f"mpiarena run failed: {done.stderr.strip()[-400:]}")
    return done.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", default="60s", help="each run's budget (default 60s)")
    impl_option(ap, IMPLS)
    args = ap.parse_args()
    impls = args.impl or list(IMPLS)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "hog.db"
        run(impls, args.budget, db)
        hog = subprocess.Popen(["taskset", "-c", str(os.cpu_count() - 1), sys.executable, "-c",
                                "while True: pass"])
        try:
            shown = run(impls, args.budget, db)
        finally:
            hog.kill()
            hog.wait()
        store = Store(db)
        quiet, loaded = (outcomes(load(store, i)) for i in (1, 2))
    first = shown.strip().splitlines()[:4]
    print("The hog run's first lines:")
    print("\n".join(f"  {line}" for line in first))
    said = any("interference" in line for line in first)
    keys = set(quiet) & set(loaded)
    opposite = sum(a.endswith("faster") and b.endswith("faster") and a != b
                   for a, b in ((quiet[k], loaded[k]) for k in keys))
    same = sum(quiet[k] == loaded[k] for k in keys)
    either = [k for k in keys if quiet[k] != "undecided" or loaded[k] != "undecided"]
    agreed = sum(quiet[k] == loaded[k] for k in either)
    decided = [sum(v != "undecided" for v in o.values()) / len(o) for o in (quiet, loaded)]
    print(f"{len(keys)} comparisons; decided {decided[0]:.0%} quiet, {decided[1]:.0%} with the hog")
    print(f"opposite 'faster' verdicts: {opposite / len(keys):.1%} (target <= 1%)")
    print(f"identical verdicts: {same / len(keys):.1%}; the same where either decided: "
          f"{agreed / max(len(either), 1):.1%} of {len(either)}")
    print(f"the first lines name the interference: {'yes' if said else 'NO'}")
    met = said and opposite / len(keys) <= 0.01
    print("targets met" if met else "targets MISSED")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
