#!/usr/bin/env python3
"""Many writers at once into one store (issue 64): PostgreSQL against SQLite on local disk.

--writers processes (8) start together, each writing --runs runs (3) through the store's own
lifecycle and calls (`Store.new_run`, `add_variant`, `add_job`, `add_cell`, as the runner
writes a run), each run --cells cells (120) of --observations observations (20) over 2 ranks.
The writers are the tasks of one srun over an emulated 3-node cluster with a real Slurm
(`mpiarena cluster up emulated:nodes=3 --slurm`, root; the nodes are network namespaces of this
machine, each with a /tmp of its own: the server's socket and the file are in /var/tmp), or
with --local (and without root) processes of this machine.
Then the store is read back: complete runs, lost cells (written by a writer but not stored),
and the writers' throughput in cells per second of wall time from the first start to the last
end. PostgreSQL is a server of its own (Debian's `postgresql`, tests/postgres_fixture.py) on a
Unix socket, committing with fsync; SQLite is a file in a local scratch directory, in WAL mode.
Exit status 1 when a run is not complete or a cell is lost.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from harness_overhead import mpiarena_argv
from postgres_fixture import pg_server  # tests/ is no package: from its folder

from mpiarena.base.records import (
    CellRow,
    JobRow,
    RunKind,
    RunSettings,
    VariantRecord,
)
from mpiarena.base.status import CellStatus, RunStatus
from mpiarena.cluster import emulated, emulated_slurm
from mpiarena.model.runs import RunStart
from mpiarena.store import Obs, Store

MPIARENA = mpiarena_argv()
NAME = emulated.run_name(os.getpid())  # a run's own cluster while this process lives
SHARED = "/var/tmp"  # the server's socket and the file: an emulated node has a /tmp of its own


@dataclass(frozen=True)
class Load:
    """What each writer writes."""

    runs: int
    cells: int
    observations: int


def write(db: str, load: Load, seed: int) -> None:
    """One writer: its runs, each cell in its own transaction as the runner stores it; prints
    when it began and ended writing (seconds since the epoch)."""
    store = Store(db)
    began = time.time()
    for n in range(load.runs):
        start = RunStart(RunKind.BENCHMARK, "writers", f"store_writers {seed}.{n}",
                         RunSettings(launches=1), seed, {"cores": 2, "synthetic": True})
        with store.new_run(start) as run:
            store.add_variant(VariantRecord(run_id=run.id, variant="floor", impl_id="floor",
                                            name="floor", env={}, args=[], binding="core"))
            job = store.add_job(JobRow(run_id=run.id, variant="floor", np=2, topology="local",
                                       binding="core", command=["store_writers"]))
            for i in range(load.cells):
                obs = [Obs(k, [1e-6 * (1 + k), 1.1e-6 * (1 + k)])
                       for k in range(load.observations)]
                store.add_cell(CellRow(run_id=run.id, job_id=job, variant="floor",
                                       bench="pingpong", size=8 * i, np=2, iterations=100,
                                       status=CellStatus.OK, seq=i), obs)
    store.close()
    print(began, time.time())


@dataclass(frozen=True)
class Outcome:
    complete: int
    lost: int
    seconds: float


@dataclass(frozen=True)
class Writers:
    """How many writers, and where: the srun that starts them on a cluster (empty: here)."""

    count: int
    srun: tuple[str, ...] = ()
    env: dict[str, str] | None = None


def measure(db: str, writers: Writers, load: Load) -> Outcome:
    """The writers at once into `db`, then what it holds; the seconds from the first writer's
    first write to the last one's end (their interpreters' start left out)."""
    Store(db).close()  # made once before the writers race
    argv = [sys.executable, __file__, "--write", db, "--runs", str(load.runs), "--cells",
            str(load.cells), "--observations", str(load.observations)]
    if writers.srun:
        procs = [subprocess.Popen([*writers.srun, "-n", str(writers.count), *argv],
                                  stdout=subprocess.PIPE, text=True, env=writers.env)]
    else:
        procs = [subprocess.Popen([*argv, "--seed", str(w)], stdout=subprocess.PIPE, text=True)
                 for w in range(writers.count)]
    said = [p.communicate()[0] for p in procs]
    spans = [[float(t) for t in line.split()] for out in said for line in out.splitlines()]
    if failed := [p.args for p in procs if p.returncode != 0]:
        print(f"  writers failed: {failed}", file=sys.stderr)
    took = max(s[1] for s in spans) - min(s[0] for s in spans)
    store = Store(db)
    runs = store.runs()
    complete = sum(1 for run, _ in runs if run.status == RunStatus.COMPLETE)
    stored = sum(cells for _, cells in runs)
    store.close()
    return Outcome(complete, writers.count * load.runs * load.cells - stored, took)


@contextmanager
def cluster(local: bool) -> Iterator[Writers]:
    """srun over an emulated 3-node cluster with Slurm, taken down at the end (or, local:
    nothing)."""
    if local:
        yield Writers(0)
        return
    up = subprocess.run([*MPIARENA, "cluster", "up", "emulated:nodes=3", "--slurm", "--name",
                         NAME], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    try:
        if up.returncode != 0:
            sys.exit(f"cluster up failed: {up.stderr.strip()[-500:]}")
        made = emulated.load(NAME)
        assert made is not None
        env = {**os.environ, "SLURM_CONF": str(emulated_slurm.conf_path(made))}
        # 8 tasks on 3 nodes of 2 CPUs each: more than one a CPU (the writers mostly wait)
        yield Writers(0, ("srun", "-N", "3", "--overcommit", "--kill-on-bad-exit=0"), env)
    finally:
        subprocess.run([*MPIARENA, "cluster", "down", NAME], capture_output=True,
                       stdin=subprocess.DEVNULL)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--writers", type=int, default=8)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cells", type=int, default=120)
    ap.add_argument("--observations", type=int, default=20)
    ap.add_argument("--local", action="store_true",
                    help="writers as processes of this machine, not srun tasks on a cluster")
    ap.add_argument("--write", metavar="DB", help=argparse.SUPPRESS)  # one writer's process
    ap.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    load = Load(args.runs, args.cells, args.observations)
    if args.write:
        write(args.write, load, int(os.environ.get("SLURM_PROCID", args.seed)))
        return 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # the cluster and server go too
    total = args.writers * args.runs
    local = args.local or os.geteuid() != 0
    print(f"{args.writers} writers at once "
          f"({'local processes' if local else 'srun tasks on 3 emulated nodes'}), "
          f"{args.runs} runs each, {args.cells} cells of {args.observations} observations a run")
    print(f"{'store':<22}{'complete runs':>15}{'lost cells':>12}{'wall s':>9}{'cells/s':>10}")
    ok = True
    with tempfile.TemporaryDirectory(prefix="store-writers-", dir=SHARED) as tmp, \
            pg_server(durable=True, under=SHARED) as pg, cluster(local) as where:
        os.chmod(tmp, 0o755)
        for name, db in (("PostgreSQL (socket)", pg.database("writers")),
                         ("SQLite (local, WAL)", str(Path(tmp) / "writers.db"))):
            got = measure(db, replace(where, count=args.writers), load)
            cells = args.writers * args.runs * args.cells - got.lost
            print(f"{name:<22}{f'{got.complete}/{total}':>15}{got.lost:>12}{got.seconds:>9.2f}"
                  f"{cells / got.seconds:>10.0f}")
            ok = ok and got.complete == total and got.lost == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
