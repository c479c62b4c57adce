#!/usr/bin/env python3
"""Does reading a library's configuration (the core's `config`: every MPI_T control variable)
change what the quick cells measure, and what does it cost a job?

For each implementation, launches of 2 ranks started as the runner starts them alternate
between reading the configuration right after start-up (as runner/execute.py does on a
variant's first launch) and not; each launch then measures pingpong and bcast at 8 B. The
launch medians with and without are judged by analysis.stats.judge (same / open / differ),
and the seconds `config` took are reported per job, with those of the family's selection
probe (a launch of its own that measures nothing: Open MPI's) where it has one.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
from common import impl_ids, impl_option

from mpiarena.analysis.stats import Pair, judge
from mpiarena.base import paths, users
from mpiarena.base.records import Cell, CellRequest
from mpiarena.base.tags import RUN_VAR
from mpiarena.impls import Implementation, discover, family_of, select
from mpiarena.model.benchmarks import BENCHMARKS
from mpiarena.platform.build import build_core
from mpiarena.platform.plan import Variant
from mpiarena.runner.cleanup import kill_tagged
from mpiarena.runner.launch import Daemons, job_for

LIBRARIES = ("mpich-4.0.2", "openmpi-4.1.4", "lam-7.1.4")

NP = 2
CELLS = (("pingpong", 8), ("bcast", 8))


def launch(impl: Implementation, read: bool, workdir: Path, index: int
           ) -> tuple[float | None, int, dict[str, np.ndarray]]:
    """One launch: seconds `config` took (None: not read), how many cvars, each cell's
    observations."""
    token = uuid.uuid4().hex
    daemons = Daemons(workdir, users.for_ranks(), token)
    job, _ = job_for(Variant(impl.id, impl), NP, build_core(impl).binary,
                     workdir / f"{index}.err", daemons)
    try:
        job.start(60)
        took, count = None, 0
        if read:
            began = time.perf_counter()
            reported = job.config(60)
            took, count = time.perf_counter() - began, len(reported.cvars or ())
        figures = {}
        for i, (bench, size) in enumerate(CELLS):
            res = job.cell(CellRequest(Cell(bench, size, NP), timing="loop", observations=10,
                                       target_time=1e-3, max_time=10.0, window=64), i,
                           60)
            figures[bench] = np.array([BENCHMARKS[bench].observation(o.per_rank, o.extras)
                                       for o in res.observations])
        job.quit(60)
    finally:
        job.kill()
        daemons.stop_all()
        kill_tagged(token, var=RUN_VAR)
    return took, count, figures


def probe_seconds(impl: Implementation, workdir: Path, launches: int) -> float | None:
    """The median seconds of the family's selection probe launch, or None: it has none."""
    env = family_of(impl).selection_probe(impl)
    if not env:
        return None
    took = []
    for n in range(launches):
        token = uuid.uuid4().hex
        daemons = Daemons(workdir, users.for_ranks(), token)
        variant = Variant(impl.id, impl, env=tuple(env.items()))
        job, _ = job_for(variant, NP, build_core(impl).binary, workdir / f"probe-{n}.err",
                         daemons)
        began = time.perf_counter()
        try:
            job.start(60)
            job.quit(60)
            took.append(time.perf_counter() - began)
        finally:
            job.kill()
            daemons.stop_all()
            kill_tagged(token, var=RUN_VAR)
    return statistics.median(took)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    impl_option(ap, LIBRARIES)
    ap.add_argument("--launches", type=int, default=12, help="per side, alternated")
    args = ap.parse_args()
    impls = select(discover({}, paths.impls_dir()), impl_ids(args.impl, LIBRARIES))
    print(f"{'impl':15} {'cvars':>5} {'config ms/job':>13} {'probe ms':>8}  " +
          "  ".join(f"{b} {s} B with/without" for b, s in CELLS))
    with tempfile.TemporaryDirectory(prefix="config-cost-", dir=paths.scratch_dir()) as tmp:
        Path(tmp).chmod(0o755)
        for impl in impls:
            side: dict[bool, dict[str, list[np.ndarray]]] = {True: {}, False: {}}
            costs, count = [], 0
            for n in range(2 * args.launches):
                read = n % 2 == 0
                took, cvars, figures = launch(impl, read, Path(tmp), n)
                if took is not None:
                    costs.append(took)
                    count = cvars
                for bench, values in figures.items():
                    side[read].setdefault(bench, []).append(values)
            verdicts = judge([Pair(side[False][b], side[True][b]) for b, _ in CELLS])
            probe = probe_seconds(impl, Path(tmp), 5)
            print(f"{impl.id:15} {count:5d} {1e3 * statistics.median(costs):13.1f} "
                  f"{'-' if probe is None else f'{1e3 * probe:.0f}':>8}  " +
                  "  ".join(f"{v.ratio:.3f} [{v.ci_low:.3f}, {v.ci_high:.3f}] {v.outcome:>5}"
                            for v in verdicts))


if __name__ == "__main__":
    main()
