"""The verdict rule's power and false verdicts at the spread a real run measured.

Every cell of an MPI library in a stored quick run (or one measured now) gives its own launches.
In each trial every such cell becomes one comparison of the report's family: its launches drawn
twice with replacement (as many as it had), one side scaled by the true ratio, the whole family
judged by `stats.judge` as a report is. A true ratio of 1.10 says how often a 10% difference
(5% beyond the threshold) is called at this machine's launch-to-launch spread; 1.00 how often
identical libraries are called "faster". The spread itself is printed per benchmark: the
log-sd of the launch medians between launches, the pooled log-sd inside one, and the share of
launches 1.25x or more above their cell's median (the slow level of bimodal launches).

Whether a probe of the machine's state could explain the spread: per variant, how much of the
between-launch variance a level shared by all cells of one launch explains (the launch's median
over its cells of the cell's log launch median minus its median over launches), and how the
cells measured one after the other in a launch correlate beyond it (the state a probe measured
before each cell could share at best).

Usage: python bench/power_at_measured_spread.py [--db STORE --run ID] [--trials 40]
       [--launches N]
(without --db: a quick run over this machine's implementations first, about 3 minutes)
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mpiarena.analysis.stats import MIN_LAUNCHES, Pair, Sample, judge, launch_medians
from mpiarena.store import Store
from mpiarena.store.results import RunData, load

NOT_MPI = ("pvm", "tcp")  # the families that are no MPI library
SLOW = 1.25  # a launch this far above its cell's median runs at the slow level


@dataclass(frozen=True)
class Spread:
    """One cell of one variant: its launches, and how they vary."""

    bench: str
    launches: Sample
    between: float  # sd of the log launch medians
    within: float  # pooled sd of log observations inside a launch
    slow: float  # share of launches SLOW x or more above the median


def spread_of(bench: str, sample: Sample) -> Spread:
    logs = np.log(launch_medians(sample))
    inside = [np.log(a) - np.log(a).mean() for a in sample if len(a) > 1 and min(a) > 0]
    dof = sum(len(d) - 1 for d in inside)
    within = float(np.sqrt(sum((d**2).sum() for d in inside) / dof)) if dof else 0.0
    slow = float(np.mean(logs > np.median(logs) + np.log(SLOW)))
    return Spread(bench, sample, float(np.std(logs, ddof=1)), within, slow)


def spreads(data: RunData) -> list[Spread]:
    found = []
    for key, cell in sorted(data.cells.items()):
        for variant, group in cell.items():
            nested = [a for a in group.nested if len(a)]
            if variant.split("-")[0] not in NOT_MPI and len(nested) >= MIN_LAUNCHES:
                found.append(spread_of(key.bench, nested))
    return found


@dataclass(frozen=True)
class LaunchState:
    """One variant: the between-launch spread of its cells, what a launch-wide level explains
    of it, and the correlation of neighbouring cells' residuals within a launch."""

    variant: str
    between: float
    explained: float
    neighbours: float


def launch_states(store: Store, data: RunData) -> list[LaunchState]:
    seq = {(c.variant, c.bench, c.size, c.np, c.launch): c.seq
           for c in store.cells(data.run_id)}
    out = []
    for variant in data.variants:
        # log launch median minus the cell's median over launches, per launch: (seq, residual)
        per_launch: dict[int, list[tuple[int, float]]] = defaultdict(list)
        for key, cell in data.cells.items():
            group = cell.get(variant)
            if group is None or len(group.launches) != len(group.values):
                continue
            by: dict[int, list[float]] = defaultdict(list)
            for value, launch in zip(group.values, group.launches, strict=True):
                by[launch].append(value)
            logs = {n: float(np.log(np.median(v))) for n, v in by.items() if min(v) > 0}
            if len(logs) < 6:
                continue
            mid = float(np.median(list(logs.values())))
            for n, x in logs.items():
                at = seq.get((variant, key.bench, key.size, key.np, n))
                if at is not None:
                    per_launch[n].append((at, x - mid))
        total = left = 0.0
        now, after = [], []
        for rows in per_launch.values():
            if len(rows) < 10:
                continue
            x = np.array([r for _, r in sorted(rows)])
            level = float(np.median(x))
            total += float((x**2).sum())
            left += float(((x - level) ** 2).sum())
            now += (x[:-1] - level).tolist()
            after += (x[1:] - level).tolist()
        if total > 0 and len(now) > 2:
            count = sum(len(r) for r in per_launch.values() if len(r) >= 10)
            out.append(LaunchState(variant, float(np.sqrt(total / count)), 1 - left / total,
                                   float(np.corrcoef(now, after)[0, 1])))
    return out


def drawn(rng: np.random.Generator, sample: Sample, scale: float, n: int | None
          ) -> list[np.ndarray]:
    """n launches (default: as many as the cell had) drawn from the cell's, times scale."""
    picks = rng.integers(0, len(sample), n or len(sample))
    return [np.asarray(sample[i]) * scale for i in picks]


def trial(rng: np.random.Generator, cells: list[Spread], ratio: float, n: int | None
          ) -> list[str]:
    pairs = [Pair(drawn(rng, c.launches, 1.0, n), drawn(rng, c.launches, ratio, n))
             for c in cells]
    return [str(j.outcome) for j in judge(pairs)]


def quick_run(where: Path) -> Path:
    db = where / "quick.db"
    subprocess.run([sys.executable, "-c", "from mpiarena.commands import main; main()", "run",
                    "--suite", "quick", "--db", str(db)], check=True, stdout=subprocess.DEVNULL)
    return db


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path)
    parser.add_argument("--run", type=int, default=1)
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--launches", type=int, help="launches a side to draw (default: as "
                        "many as each cell had): what more launches would find")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or quick_run(Path(tmp))
        store = Store(db)
        data = load(store, args.run)
        cells = spreads(data)
        states = launch_states(store, data)
    print("What a launch-wide state explains of the between-launch spread:")
    for st in states:
        print(f"  {st.variant:<16} spread {st.between:.1%}, a level shared by the launch's "
              f"cells explains {st.explained:.0%}; neighbouring cells beyond it: r = "
              f"{st.neighbours:.2f}")
    drawing = f"{args.launches} launches a side drawn" if args.launches else "their launches"
    print(f"{len(cells)} cells of MPI libraries ({drawing}), {args.trials} trials a ratio, each "
          f"one family of {len(cells)} comparisons")
    by_bench: dict[str, list[Spread]] = defaultdict(list)
    for c in cells:
        by_bench[c.bench].append(c)
    rng = np.random.default_rng(2026)
    called: dict[float, dict[str, list[float]]] = {}
    for ratio in (1.0, 1.10, 1.20):
        per: dict[str, list[float]] = defaultdict(list)
        for _ in range(args.trials):
            for c, outcome in zip(cells, trial(rng, cells, ratio, args.launches), strict=True):
                if ratio == 1.0:
                    per[c.bench].append(outcome in ("above", "below"))
                else:
                    per[c.bench].append(outcome == "above")
        called[ratio] = per
    print(f"{'benchmark':<12} {'cells':>5} {'launches':>8} {'between':>8} {'within':>7} "
          f"{'slow':>5} {'false 1.00':>10} {'found 1.10':>10} {'found 1.20':>10}")
    rows = [*sorted(by_bench), "all"]
    for bench in rows:
        group = cells if bench == "all" else by_bench[bench]

        def share(ratio: float, name: str = bench) -> float:
            per = called[ratio]
            values = [v for b in per for v in per[b]] if name == "all" else per[name]
            return float(np.mean(values))

        print(f"{bench:<12} {len(group):>5} "
              f"{np.median([len(c.launches) for c in group]):>8.0f} "
              f"{np.median([c.between for c in group]):>7.1%} "
              f"{np.median([c.within for c in group]):>6.1%} "
              f"{np.mean([c.slow for c in group]):>5.0%} "
              f"{share(1.0):>10.3f} {share(1.10):>10.2f} {share(1.20):>10.2f}")
    print("between / within: medians over the cells; slow: launches 1.25x above their cell's "
          "median, all cells; false: share of identical pairs called faster; found: share of "
          "true differences called")


if __name__ == "__main__":
    main()
