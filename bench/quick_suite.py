#!/usr/bin/env python3
"""Quick suite wall time and answers: `mpiarena run --suite quick` over every usable
implementation found, end to end.

Times the real command with the core builds cached (warm; the verdict) and, unless --no-cold,
again with MPIARENA_HOME pointing at an empty directory that only links the installed
implementations, so the cores are compiled inside the timed run (cold). Prints wall time,
cells and their statuses, how many of the warm run's comparisons between MPI libraries
(pairs with raw TCP or PVM are easy and do not count) it decided: faster, or
indistinguishable within the threshold, and where its time went (bench/launch_cost.py's
table); with --runs 2 or more, how often the warm runs' verdicts agree. Exit status 1 if the
warm run takes longer than --limit seconds, does not complete with every cell measured, or
decides under --decided.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import sqlite3
import sys
import tempfile
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from common import impl_option
from harness_overhead import TAG, clean_up, mpiarena_argv, timed_run

from mpiarena.analysis.answer import mpi_variants
from mpiarena.analysis.run import analyse
from mpiarena.analysis.verdicts import Speed
from mpiarena.base import paths
from mpiarena.impls import discover, select
from mpiarena.platform.build import build_core
from mpiarena.store import Store
from mpiarena.store.results import load


def between_libraries(store: Store, run_id: int) -> dict[tuple[object, ...], str]:
    """The run's report's verdicts whose two variants are MPI libraries: (cell, the pair in
    name order) -> 'X faster' | 'indistinguishable' | 'undecided'."""
    data = load(store, run_id)
    mpi = set(mpi_variants(data))  # the first screen's count is the same
    return {(key, *sorted((v.fast, v.slow))): f"{v.fast} faster" if v.outcome == Speed.FASTER
            else v.outcome
            for key, vs in analyse(data).judged.items() for v in vs
            if v.fast in mpi and v.slow in mpi}


def decided_between_libraries(store: Store, run_id: int) -> tuple[int, int]:
    """(decided, all) comparisons of the run's report whose two variants are MPI libraries."""
    judged = between_libraries(store, run_id)
    return sum(v != "undecided" for v in judged.values()), len(judged)


def agreement(runs: list[dict[tuple[object, ...], str]]) -> None:
    """Print how often two runs' verdicts on the same comparison agree: identical, the same
    where either run decided, opposite 'faster' verdicts (every pair of runs)."""
    both = same = either = agreed = opposite = 0
    for a, b in itertools.combinations(runs, 2):
        for key in set(a) & set(b):
            both += 1
            same += a[key] == b[key]
            if (a[key], b[key]) != ("undecided", "undecided"):
                either += 1
                agreed += a[key] == b[key]
            opposite += a[key].endswith("faster") and b[key].endswith("faster") and \
                a[key] != b[key]
    print(f"  reruns: identical verdicts {same / max(both, 1):.1%} of {both} comparisons both "
          f"runs made (target 90%), the same verdict where either run decided "
          f"{agreed / max(either, 1):.1%} of {either} (target 90%), opposite 'faster' "
          f"{opposite / max(both, 1):.1%} (target at most 1%)")


@dataclass(frozen=True)
class Asked:
    """What a timed run must do: the suite with these implementations, every cell within
    `limit` seconds, deciding at least `wanted` of the comparisons between libraries."""

    ids: list[str]
    suite: str
    limit: float
    wanted: float = 0.0


def measure(label: str, asked: Asked, db: Path, env: dict[str, str],
            verdicts: list[dict[tuple[object, ...], str]] | None = None) -> bool:
    """Run the suite once, print its figures; True if it did what was asked (the comparisons'
    verdicts added to `verdicts`)."""
    limit, wanted = asked.limit, asked.wanted
    argv = [*mpiarena_argv(), "run", "--suite", asked.suite,
            *(a for i in asked.ids for a in ("--impl", i)), "--db", str(db)]
    wall, code, err = timed_run(argv, env, 3 * limit)
    status, nobs, decided, compared = "missing", 0, 0, 0
    harness = None
    cells: Counter[str] = Counter()
    if db.exists():
        store = Store(db)
        try:
            run_id = store.resolve("latest")
            status = store.status(store.run(run_id))
            cells = Counter(str(c.status) for c in store.cells(run_id))
            nobs = sum(len(o) for o in store.observations(run_id).values())
            decided, compared = decided_between_libraries(store, run_id)
            if verdicts is not None:
                verdicts.append(between_libraries(store, run_id))
            harness = store.run(run_id).harness
        finally:
            store.close()
    share = decided / max(compared, 1)
    ok = (code == 0 and status == "complete" and wall <= limit and not cells["failed"]
          and share >= wanted)
    detail = ", ".join(f"{n} {s}" for s, n in sorted(cells.items()))
    print(f"{label}: {wall:.1f} s wall, exit {code}, run {status}, {sum(cells.values())} cells "
          f"({detail or 'none'}), {nobs} observations -> {'PASS' if ok else 'FAIL'} "
          f"(limit {limit:.0f} s)")
    print(f"  decided {decided} of {compared} comparisons between MPI libraries ({share:.0%}; "
          f"target {wanted:.0%})")
    if code != 0:
        print(f"  mpiarena said: {err.strip().splitlines()[-1] if err.strip() else '-'}")
    if harness is not None:
        from launch_cost import report  # it runs its own suite with this module's runner

        report(harness, 0.5, 0.008)
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    impl_option(parser)
    parser.add_argument("--suite", default="quick", help="suite to time (default quick)")
    parser.add_argument("--limit", type=float, default=180.0, help="seconds (default 180)")
    parser.add_argument("--decided", type=float, default=0.85,
                        help="share of comparisons between MPI libraries to decide (0.85)")
    parser.add_argument("--no-cold", action="store_true", help="skip the cold-cache run")
    parser.add_argument("--keep", type=Path, help="copy the warm runs' stores into this "
                        "directory (for bench/power_at_measured_spread.py --db)")
    parser.add_argument("--runs", type=int, default=1, help="warm runs (default 1); from 2, how "
                        "often their verdicts agree")
    args = parser.parse_args()

    impls_dir = paths.impls_dir()
    chosen = select(discover({}, impls_dir), list(args.impl or []))
    ids = [impl.id for impl in chosen]
    for impl in chosen:
        build_core(impl)  # untimed: the warm run finds every core built
    token = uuid.uuid4().hex
    env = {**os.environ, TAG: token}
    env.pop("MPIARENA_HOME", None)
    tmp = Path(tempfile.mkdtemp(prefix="mpiarena-bench-", dir="/var/tmp"))
    tmp.chmod(0o755)  # the cold run's scratch directory lives here; ranks must reach it
    try:
        print(f"mpiarena run --suite {args.suite} --impl {' --impl '.join(ids)} "
              f"({os.cpu_count()} cores)")
        verdicts: list[dict[tuple[object, ...], str]] = []
        warm = Asked(ids, args.suite, args.limit, args.decided)
        ok = all([measure(f"warm (cores cached) {r + 1}", warm, tmp / f"warm{r}.db", env,
                          verdicts) for r in range(args.runs)])
        if len(verdicts) > 1:
            agreement(verdicts)
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            for r in range(args.runs):
                with contextlib.closing(sqlite3.connect(tmp / f"warm{r}.db")) as src, \
                        contextlib.closing(sqlite3.connect(args.keep / f"warm{r}.db")) as dst:
                    src.backup(dst)
        if not args.no_cold:
            home = tmp / "home"
            home.mkdir(mode=0o755)
            (home / "impls").symlink_to(impls_dir)
            measure("cold (cores compiled in the run; not the verdict)",
                    Asked(ids, args.suite, args.limit), tmp / "cold.db",
                    {**env, "MPIARENA_HOME": str(home)})
            built = [p for p in (home / "builds").glob("*") if (p / "arena").is_file()]
            print(f"  the cold run compiled {len(built)} cores into an empty build cache")
    finally:
        clean_up(token, tmp)
    print(f"{'PASS' if ok else 'FAIL'}: warm {args.suite} suite, every cell measured within "
          f"{args.limit:.0f} s and {args.decided:.0%} of the comparisons between MPI libraries "
          "decided" + ("" if ok else ": not all of these held"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
