#!/usr/bin/env python3
"""Where a cell-launch's wall time goes: `mpiarena run --suite quick` over the implementations
found (or --impl), then the run's own record of its time (the store's runs.harness: the runner
times launches, configuration reads, quits, cells and stores; the core counts rank 0's warm-up
and calibration steps, observation steps and timed calls in each cell).

Per variant and in all: launches, cell-launches (a cell measured in one launch), and the wall
seconds of each part per cell-launch; the timed share of the run's wall time and its wall time
per cell-launch are judged against --share (0.5) and --per-cell (8 ms). The start-up launches
that only measure init and finalize count as launching and quitting. "other" is the rest of
the wall: the machine's load read before each launch, daemons started and stopped, kills.
Exit status 1 if a target is missed.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import uuid
from pathlib import Path

from common import impl_ids, impl_option
from harness_overhead import TAG, clean_up, mpiarena_argv, timed_run

from mpiarena.store import Store

PARTS = ("launching", "configuring", "quitting", "calibrating", "observing", "exchanging",
         "storing")


def parts(h: dict[str, float]) -> dict[str, float]:
    """A variant's seconds by part: observing holds the timed calls; exchanging is a cell's
    harness wall beyond what rank 0 spent in it (the command, the core's lines, parsing)."""
    core = h["calibrating"] + h["observing"]
    return {"launching": h["launching"], "configuring": h["configuring"],
            "quitting": h["quitting"], "calibrating": h["calibrating"],
            "observing": h["observing"], "exchanging": max(0.0, h["cell_wall"] - core),
            "storing": h["storing"]}


def report(harness: dict[str, object], share_wanted: float, per_cell_wanted: float) -> bool:
    wall = float(harness["wall"])  # type: ignore[arg-type]
    variants: dict[str, dict[str, float]] = harness["variants"]  # type: ignore[assignment]
    head = f"{'variant':16s} {'launches':>8s} {'cells':>6s} " + " ".join(
        f"{p[:9]:>9s}" for p in PARTS) + f" {'timed':>7s}   (ms per cell-launch)"
    print(head)
    total = dict.fromkeys(PARTS, 0.0)
    cells = launches = 0
    timed = 0.0
    for name, h in sorted(variants.items()):
        n = max(1, int(h["cells"]))
        p = parts(h)
        print(f"{name:16s} {int(h['launches']):8d} {int(h['cells']):6d} " + " ".join(
            f"{p[k] / n * 1e3:9.2f}" for k in PARTS) + f" {h['timed'] / n * 1e3:7.2f}")
        for k in PARTS:
            total[k] += p[k]
        cells += int(h["cells"])
        launches += int(h["launches"])
        timed += h["timed"]
    n = max(1, cells)
    other = wall - sum(total.values())
    print(f"{'all':16s} {launches:8d} {cells:6d} " + " ".join(
        f"{total[k] / n * 1e3:9.2f}" for k in PARTS) + f" {timed / n * 1e3:7.2f}")
    print(f"other (load reads, daemons, kills): {other / n * 1e3:.2f} ms per cell-launch")
    share, per_cell = timed / wall, wall / n
    print(f"wall {wall:.1f} s for {cells} cell-launches: {per_cell * 1e3:.2f} ms per "
          f"cell-launch (target at most {per_cell_wanted * 1e3:.0f} ms), timed calls "
          f"{timed:.1f} s = {share:.0%} of the wall (target at least {share_wanted:.0%})")
    return share >= share_wanted and per_cell <= per_cell_wanted


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    impl_option(parser)
    parser.add_argument("--suite", default="quick")
    parser.add_argument("--launches", type=int, help="launches a variant (default: the suite's)")
    parser.add_argument("--share", type=float, default=0.5, help="timed share wanted (0.5)")
    parser.add_argument("--per-cell", type=float, default=0.008,
                        help="wall seconds per cell-launch wanted (0.008)")
    args = parser.parse_args()
    token = uuid.uuid4().hex
    tmp = Path(tempfile.mkdtemp(prefix="mpiarena-bench-", dir="/var/tmp"))
    tmp.chmod(0o755)
    try:
        db = tmp / "cost.db"
        argv = [*mpiarena_argv(), "run", "--suite", args.suite, "--db", str(db),
                *(a for i in impl_ids(args.impl) for a in ("--impl", i)),
                *(["--launches", str(args.launches)] if args.launches else [])]
        wall, code, err = timed_run(argv, {**os.environ, TAG: token}, 900)
        print(f"mpiarena run --suite {args.suite}: {wall:.1f} s, exit {code}")
        if code != 0:
            print(err.strip().splitlines()[-1] if err.strip() else "-")
            return 1
        store = Store(db)
        try:
            harness = store.run(store.resolve("latest")).harness
        finally:
            store.close()
        if harness is None:
            print("the run recorded no harness time")
            return 1
        ok = report(harness, args.share, args.per_cell)
    finally:
        clean_up(token, tmp)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
