#!/usr/bin/env python3
"""The verdict rule at the line, in simulation with the budget's own loop
(`mpiarena.analysis.rule_check`): per shape (one comparison alone; 3 boundary cells among 30;
the quick suite's shape) and true ratio (1.05, the line; 1.03; 1.00; 1.10), the share of
comparisons called "faster", the false discovery share of the report's "faster" verdicts, and
the launches spent; and the same shapes at a fixed number of launches for comparison.
Exit 1 if a target is missed: at most 2.5% false "faster" per comparison at the line, at most
1% for identical libraries, at most ALPHA false among a report's "faster" verdicts."""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from mpiarena.analysis import rule_check as R
from mpiarena.analysis.stats import ALPHA, THRESHOLD

TARGET_LINE, TARGET_NULL, TARGET_FOUND = 0.025, 0.01, 0.85


def row(shape: R.Report, trials: int, budgeted: bool) -> dict[str, float]:
    """The shape's rates over `trials` reports."""
    outs = [R.simulate(shape, np.random.default_rng(seed), budgeted=budgeted)
            for seed in range(trials)]
    line = sum(o.line for o in outs)
    beyond = sum(o.beyond for o in outs)
    faster = sum(o.faster for o in outs)
    return {"line": sum(o.line_faster for o in outs) / line if line else float("nan"),
            "found": sum(o.found for o in outs) / beyond if beyond else float("nan"),
            "fdr": float(np.mean([o.false_faster / o.faster if o.faster else 0.0
                                  for o in outs])),
            "faster": faster / trials,
            "launches": sum(o.launches for o in outs) / trials}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=400, help="reports a row (400)")
    args = parser.parse_args()
    ok = True
    print(f"{'shape':<58} {'design':<9} {'faster at the line':>18} {'true 1.10 found':>15} "
          f"{'false share':>11} {'launches':>9}")
    shapes = [R.alone(1 + THRESHOLD), R.alone(1.03), R.alone(1.0), R.alone(1.10),
              R.among(1 + THRESHOLD), R.among(1.0), R.quick(1 + THRESHOLD)]
    for shape in shapes:
        for budgeted in (True, False):
            trials = args.trials if len(shape.cells) == 1 else max(20, args.trials // 10)
            began = time.monotonic()
            r = row(shape, trials, budgeted)
            print(f"{shape.name:<58} {'budget' if budgeted else 'fixed':<9} {r['line']:>18.3f} "
                  f"{r['found']:>15.3f} {r['fdr']:>11.3f} {r['launches']:>9.0f}"
                  f"  ({trials} reports, {time.monotonic() - began:.0f} s)")
            if budgeted:
                null = shape.name.endswith(" 1")
                ok &= not r["line"] > TARGET_LINE and r["fdr"] <= ALPHA
                ok &= not (null and r["faster"] / len(shape.cells) > TARGET_NULL)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
