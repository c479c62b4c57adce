#!/usr/bin/env python3
"""Same observations: the measurement core built from a base revision against the working tree.

The base core is built by the base revision's own build.py (its src/mpiarena from `git archive`,
in a temporary directory), the new one by this tree's; both go into the usual build cache. For
each implementation the same small plan (every benchmark group, each timing method) runs
against both cores, launches interleaved (base, new, then new, base, ...), through mpiarena's
own launch and job code. Per family it prints the cells each side observed (status ok), whether
both give the same cells, statuses and extra figures, and per group the ratio of medians
new/base: each cell's median of one launch against the other side's launch of the same round,
the median of those ratios over the group's cells and rounds, a bootstrap 95% interval
resampling rounds, and the range of the cells' own median ratios. An observation is reduced
as its benchmark's time (benchmarks.py: the pair's or the slowest rank's time, scaled), not the
cost benchmarks' derived figures. Exit status 1 if any family's cells differ.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from common import impl_option

from mpiarena.base import paths, records, users
from mpiarena.impls import Implementation, discover, family_of, select
from mpiarena.model.benchmarks import BENCHMARKS
from mpiarena.platform.build import build_core
from mpiarena.platform.plan import Variant
from mpiarena.runner.job import CellResult, JobError
from mpiarena.runner.launch import Daemons, job_for
from mpiarena.suites import load as load_suite

REPO = Path(__file__).resolve().parent.parent
NP = 2


@dataclass(frozen=True)
class Cell:
    group: str  # the kernels' file that runs it: p2p, coll, cost, app; or a timing method
    bench: str
    size: int
    sync: str = "loop"
    hold: float = 0.0


PLAN = [
    *(Cell("p2p", b, s) for b, s in [("wtime", 0), ("pingpong", 8), ("pingpong", 65536),
                                     ("ping", 1024), ("sendrecv", 1024), ("bibw", 65536)]),
    *(Cell("coll", b, s) for b, s in [("barrier", 0), ("bcast", 1024), ("reduce", 1024),
                                      ("allreduce", 8), ("allreduce", 65536), ("alltoall", 1024),
                                      ("allreduce=reduce+bcast", 1024), ("bcast-ack", 1024)]),
    Cell("barrier", "allreduce", 1024, "barrier"), Cell("barrier", "bcast", 1024, "barrier"),
    Cell("window", "allreduce", 1024, "window"), Cell("window", "bcast", 1024, "window"),
    Cell("cost", "cpu", 0, hold=0.01), Cell("cost", "msgrate", 8), Cell("cost", "overlap", 65536),
    Cell("cost", "progress", 65536), Cell("cost", "memory", 1024),
    Cell("app", "app-pi", 1_000_000), Cell("app", "app-stencil", 64),
]
GROUPS = ("p2p", "coll", "barrier", "window", "cost", "app")


@dataclass
class Side:
    """What one core gave, launch by launch: each cell's status, extras and reduced figures."""

    status: dict[Cell, set[str]] = field(default_factory=lambda: defaultdict(set))
    extras: dict[Cell, set[str]] = field(default_factory=lambda: defaultdict(set))
    medians: dict[Cell, list[float]] = field(default_factory=lambda: defaultdict(list))

    def add(self, cell: Cell, res: CellResult) -> None:
        self.status[cell].add(res.status.value)
        timed = dataclasses.replace(BENCHMARKS[cell.bench], figure=None)
        figures = [timed.observation(o.per_rank) for o in res.observations]
        for o in res.observations:
            self.extras[cell] |= set(o.extras)
        if res.status.value == "ok" and figures:
            self.medians[cell].append(float(np.median(figures)))

    def observed(self) -> set[Cell]:
        return {c for c, s in self.status.items() if s == {"ok"}}


def git(*args: str) -> bytes:
    return subprocess.run(["git", "-C", str(REPO), *args], check=True, capture_output=True).stdout


def base_source(rev: str, into: Path) -> Path:
    """The base revision's src/ (its package) unpacked into `into`."""
    with tarfile.open(fileobj=io.BytesIO(git("archive", rev, "src/mpiarena"))) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def base_core(impl: Implementation, src: Path) -> Path:
    """The core built by the base revision's own build.py for impl (cached as usual)."""
    code = ("import sys\ntry:\n  from mpiarena.base import paths\n"  # the layout of issue 53
            "  from mpiarena.platform.build import build_core\n"
            "except ImportError:\n  from mpiarena import paths\n"
            "  from mpiarena.build import build_core\n"
            "from mpiarena.impls import discover, select\n"
            "print(build_core(select(discover({}, paths.impls_dir()), [sys.argv[1]])[0]).binary)")
    done = subprocess.run([sys.executable, "-c", code, impl.id], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(src)}, stdin=subprocess.DEVNULL,
                          timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"error: building the base core for {impl.id} failed:\n{done.stderr}")
    return Path(done.stdout.strip().splitlines()[-1])


def launch(impl: Implementation, binary: Path, cells: list[Cell], side: Side,
           args: argparse.Namespace, daemons: Daemons) -> None:
    """One launch of binary (in the daemons' directory) running every cell once."""
    job, _ = job_for(Variant(impl.id, impl), NP, binary, daemons.workdir / "err", daemons)
    try:
        job.start(timeout=60)
        for n, cell in enumerate(cells):
            asked = records.CellRequest(records.Cell(cell.bench, cell.size, NP), timing=cell.sync,
                                        observations=args.observations, target_time=args.target,
                                        max_time=2.0, window=64, hold_time=cell.hold, validate=True)
            side.add(cell, job.cell(asked, n, timeout=60))
        job.quit(timeout=30)
    finally:
        job.kill()


def ratios(base: Side, new: Side, cells: list[Cell]) -> tuple[np.ndarray, list[float]]:
    """Per round and cell, median(new launch) / median(base launch); and each cell's own median
    of those."""
    by_cell = [np.array(new.medians[c]) / np.array(base.medians[c]) for c in cells
               if len(new.medians[c]) == len(base.medians[c]) > 0]
    if not by_cell:
        return np.empty((0, 0)), []
    return np.array(by_cell).T, [float(np.median(r)) for r in by_cell]


def group_line(name: str, table: np.ndarray, per_cell: list[float],
               rng: np.random.Generator) -> str:
    if table.size == 0:
        return f"    {name:8} no cell observed on both sides"
    rounds = table.shape[0]
    boot = [np.median(table[rng.integers(0, rounds, rounds)]) for _ in range(2000)]
    lo, hi = np.percentile(boot, [2.5, 97.5])
    return (f"    {name:8} new/base {np.median(table):.3f}  [95% CI {lo:.3f}-{hi:.3f}]  cells "
            f"{min(per_cell):.3f}-{max(per_cell):.3f}  ({table.shape[1]} cells x {rounds} rounds)")


def compare(impl: Implementation, src: Path, args: argparse.Namespace,
            rng: np.random.Generator) -> bool:
    """Both cores of impl, launches interleaved; prints the family's lines; True if the same."""
    binaries = {"base": base_core(impl, src), "new": build_core(impl).binary}
    family = family_of(impl)
    cells = [c for c in PLAN if (c.sync != "window" or family.window_timing)
             and c.group in args.group]
    sides = {"base": Side(), "new": Side()}
    work = Path(tempfile.mkdtemp(dir=paths.scratch_dir()))
    work.chmod(0o755)
    daemons = Daemons(work, users.for_ranks(), "bench")
    try:
        for rnd in range(args.rounds):
            for who in ("base", "new") if rnd % 2 == 0 else ("new", "base"):
                launch(impl, binaries[who], cells, sides[who], args, daemons)
    finally:
        daemons.stop_all()
        shutil.rmtree(work, ignore_errors=True)
    base, new = sides["base"], sides["new"]
    same_cells = base.observed() == new.observed()
    same_status = dict(base.status) == dict(new.status)
    same_extras = dict(base.extras) == dict(new.extras)
    print(f"\n{impl.id} ({family.name}, {NP} ranks, {args.rounds} launches per side, "
          f"{len(cells)} cells)")
    print(f"  cells observed: base {len(base.observed())}, new {len(new.observed())}; same "
          f"(benchmark, size, timing) cells: {'yes' if same_cells else 'NO'}; same statuses: "
          f"{'yes' if same_status else 'NO'}; same extra figures: "
          f"{'yes' if same_extras else 'NO'}")
    for c in cells:
        if base.status[c] != new.status[c] or base.extras[c] != new.extras[c]:
            print(f"    differs: {c.bench} {c.size} {c.sync}: base {sorted(base.status[c])} "
                  f"{sorted(base.extras[c])}, new {sorted(new.status[c])} {sorted(new.extras[c])}")
    for group in args.group:
        table, per_cell = ratios(base, new, [c for c in cells if c.group == group])
        print(group_line(group, table, per_cell, rng))
    return same_cells and same_status and same_extras


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", help="base git revision (default: the merge-base with main)")
    impl_option(parser)
    parser.add_argument("--rounds", type=int, default=6, help="launches per side (default 6)")
    parser.add_argument("--observations", type=int, default=10, help="per cell and launch")
    parser.add_argument("--group", action="append", choices=GROUPS,
                        help="benchmark group or timing method (repeatable); default: all")
    parser.add_argument("--seed", type=int, default=1, help="bootstrap seed")
    args = parser.parse_args()
    args.target = load_suite("quick").target_time
    args.group = args.group or list(GROUPS)
    rev = args.base or git("merge-base", "HEAD", "main").decode().strip()
    impls = select(discover({}, paths.impls_dir()), list(args.impl or []))
    rng = np.random.default_rng(args.seed)
    print(f"base {rev[:12]} against the working tree; {args.observations} observations per "
          f"cell and launch, k so a loop lasts >= {args.target * 1e3:g} ms; ratios new/base "
          "of per-launch medians, paired by round")
    same = True
    tmp = Path(tempfile.mkdtemp(prefix="mpiarena-base-"))
    try:
        src = base_source(rev, tmp)
        for impl in impls:
            try:
                same &= compare(impl, src, args, rng)
            except JobError as e:
                print(f"\n{impl.id}: a launch failed: {e}")
                same = False
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"\n{'SAME' if same else 'DIFFERENT'}: cells, statuses and extra figures of every "
          "family")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
