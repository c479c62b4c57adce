#!/usr/bin/env python3
"""The budget's choice of launches in simulation: comparisons chosen by what they cost to
decide (each variant's launch at its own cost, as the runner measures it) against chosen as if
every launch cost the same, on reports where one variant's launch costs 10 times the others'
(PVM's in the quick suite: its 30 ms cells). Each report: 24 cells of 4 variants, 10 launches
each, then whole launches of the variants that `open_comparisons` names until the budget is
spent. Prints the comparisons decided per budget, both ways; exit 1 if choosing by cost decides
fewer in all.
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np

from mpiarena.analysis.sampling import open_comparisons
from mpiarena.analysis.stats import verdicts

COST = {"a": 1.0, "b": 1.0, "c": 1.0, "dear": 10.0}  # seconds a launch
RATIOS = (1.0, 1.04, 1.08, 1.12, 1.2, 1.5)


def launch(rng: np.random.Generator, level: float) -> np.ndarray:
    """One launch of 2 observations: its level log-normal around `level` (sd 10%)."""
    return level * math.exp(rng.normal(0, 0.10)) * np.exp(rng.normal(0, 0.05, 2))


def report(rng: np.random.Generator, assumed: dict[str, float], seconds: float) -> int:
    """One report's comparisons decided once the budget is spent, launches chosen on the
    `assumed` costs and paid at the true ones."""
    levels = [{"a": 1.0, "b": float(rng.choice(RATIOS)), "c": float(rng.choice(RATIOS)),
               "dear": float(rng.choice((0.9, 1.06, 1.1, 1.15, 3.0)))} for _ in range(24)]
    cells = {i: {v: [launch(rng, lv) for _ in range(10)] for v, lv in cell.items()}
             for i, cell in enumerate(levels)}
    left = seconds
    while left > 0:
        wanted = {v for _, v in open_comparisons(cells, left, assumed)}
        if not wanted or sum(COST[v] for v in wanted) > left:
            break
        for v in wanted:
            for i, cell in cells.items():
                cell[v].append(launch(rng, levels[i][v]))
        left -= sum(COST[v] for v in wanted)
    return sum(j.outcome != "undecided" for js in verdicts(list(cells.values())) for j in js)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reports", type=int, default=16, help="reports per budget (16)")
    args = parser.parse_args()
    same = {v: float(np.mean(list(COST.values()))) for v in COST}
    totals = [0, 0]
    print(f"{'budget':>8} {'by cost':>8} {'same cost':>10}  ({args.reports} reports each)")
    for seconds in (100, 200, 400, 800):
        got = [sum(report(np.random.default_rng(seed), costs, seconds)
                   for seed in range(args.reports)) for costs in (COST, same)]
        totals = [t + g for t, g in zip(totals, got, strict=True)]
        print(f"{seconds:>7}s {got[0]:>8} {got[1]:>10}  x{got[0] / got[1]:.2f}")
    ok = totals[0] >= totals[1]
    print(f"{'PASS' if ok else 'FAIL'}: by cost {totals[0]}, as if the same {totals[1]}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
