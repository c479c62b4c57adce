"""Execute a plan round by round; one failing implementation never stops the others."""

from __future__ import annotations

import itertools
import math
import os
import random
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from .. import paths
from ..benchmarks import BENCHMARKS
from ..build import Build, run_baseline
from ..cluster.topology import Local, Topology
from ..errors import ArenaError
from ..plan import Cell, Plan, Round, Variant, timing
from ..stats import ci_halfwidth
from ..store import Obs, Store
from ..suites import Suite
from ..users import RankUser
from .cleanup import RUN_VAR, kill_tagged
from .job import CellResult, Hello, Job, JobError
from .launch import Daemons, job_for


@dataclass(frozen=True)
class Settings:
    timeout: float = 60.0  # seconds a job may take to answer one cell or to start
    offcache: bool = False
    validate: bool = False
    topology: str = "local"
    precision: float | None = None  # adaptive: sample until the median's 95% CI is this tight
    max_time: float = 30.0  # adaptive: seconds one cell may take in all


class Executor:
    def __init__(self, plan: Plan, builds: dict[str, Build], store: Store, run_id: int,
                 settings: Settings, user: RankUser | None,
                 advance: Callable[[str], None] = lambda _: None,
                 grow: Callable[[int], None] = lambda _: None,
                 topology: Topology | None = None):
        self.topology = topology or Local()
        self.plan, self.builds, self.store, self.run_id = plan, builds, store, run_id
        self.settings, self.user, self.advance, self.grow = settings, user, advance, grow
        self.sampled: dict[tuple[Cell, str], tuple[list[float], float]] = {}  # values, seconds
        self.seq = 0
        self.jobs_started = itertools.count()
        self.run_token = uuid.uuid4().hex
        self.failed: dict[str, str] = {}  # variant id -> why, for the current round
        self.workdir: Path | None = None
        self.live: list[Job] = []

    def run(self) -> None:
        """Measure everything; no job or scratch directory outlives this, whatever happens."""
        self.workdir = Path(tempfile.mkdtemp(prefix=f"run-{os.getpid()}-",
                                             dir=paths.scratch_dir()))
        self.workdir.chmod(0o755)
        self.daemons = Daemons(self.workdir, self.user, self.run_token, self.topology.placement)
        try:
            for build in self.builds.values():
                self.topology.prepare(build.binary)
            for rnd in self.plan.rounds:
                self._round(rnd)
        finally:
            for job in self.live:
                job.kill()
            self.daemons.stop_all()
            self.topology.reap()
            kill_tagged(self.run_token, var=RUN_VAR)
            shutil.rmtree(self.workdir, ignore_errors=True)

    # --- one round -----------------------------------------------------------------------
    def _round(self, rnd: Round) -> None:
        self.failed = {}
        for variant in rnd.launches:
            self._startup(variant, rnd.np)
        jobs: dict[str, tuple[Job, int]] = {}
        for variant in rnd.variants:
            if variant.id not in self.failed:
                started = self._start(variant, rnd.np)
                if started:
                    jobs[variant.id] = started
        for cell, variant in rnd.turns:
            self._turn(cell, variant, jobs.get(variant.id))
        if self.settings.precision:
            self._refine(rnd, jobs)
        for variant_id, (job, job_id) in jobs.items():
            if variant_id not in self.failed:
                try:
                    job.quit(self.settings.timeout)
                    self.store.update_job(job_id, status="ok")
                except JobError as e:
                    self.store.update_job(job_id, status="failed", reason=str(e))
            self._retire(job)
        self.daemons.stop_all()
        self.topology.reap()

    def _launched(self, variant: Variant, np: int, fatal: bool = True) -> tuple[Job, int, Hello]:
        """A started job, or JobError. A failure halts the variant's daemons (they start again
        when next needed) and, if fatal, puts the variant out of the round."""
        assert self.workdir is not None
        log = self.workdir / f"job-{next(self.jobs_started)}.err"
        try:
            job, binding = job_for(variant, np, self.builds[variant.impl.id].binary,
                                   self.workdir, self.user, log, self.daemons)
        except JobError as e:
            self.daemons.stop(variant.id)
            if fatal:
                self.failed[variant.id] = f"its daemons did not start: {e}"
            raise
        job_id = self.store.add_job(self.run_id, variant.id, np, self.settings.topology, binding,
                                    job.argv)
        self.live.append(job)
        try:
            hello = job.start(self.settings.timeout)
        except JobError as e:
            (self._fail if fatal else self._drop)(variant, job, job_id, f"start-up failed: {e}")
            raise
        self.store.update_job(job_id, status="running", tick=hello.tick,
                              resolution=hello.resolution, thread_level=hello.thread_level,
                              ranks=[r.__dict__ for r in hello.ranks])
        return job, job_id, hello

    def _start(self, variant: Variant, np: int) -> tuple[Job, int] | None:
        try:
            job, job_id, _ = self._launched(variant, np)
        except JobError:
            return None
        return job, job_id

    def _drop(self, variant: Variant, job: Job, job_id: int, reason: str) -> None:
        """The job failed: record why, kill it, halt the variant's daemons."""
        self.store.update_job(job_id, status="failed", reason=reason)
        job.kill()
        self.daemons.stop(variant.id)

    def _fail(self, variant: Variant, job: Job, job_id: int, reason: str) -> None:
        """The job failed and the variant measures nothing more in this round."""
        self._drop(variant, job, job_id, reason)
        self.failed[variant.id] = reason

    def _retire(self, job: Job) -> None:
        job.kill()
        if job in self.live:
            self.live.remove(job)

    def _startup(self, variant: Variant, np: int) -> None:
        """One launch that only starts and stops: launch-to-init and finalize times. A launch
        that fails is a failed start-up, not a failed variant: the measurements run in jobs of
        their own (MPICH 4.0.2 over an emulated TCP link hung in MPI_Finalize in 1 of 40)."""
        self.advance(f"{variant.id} start-up, {np} ranks")
        cell = Cell("init", 0, np)
        if variant.id in self.failed:
            self._record(variant, cell, None, "skipped", self.failed[variant.id])
            return
        try:
            job, job_id, hello = self._launched(variant, np, fatal=False)
        except JobError as e:
            self._record(variant, cell, None, "failed", str(e))
            return
        try:
            finalize, _ = job.quit(self.settings.timeout)
        except JobError as e:
            self._drop(variant, job, job_id, f"shut-down failed: {e}")
            self._record(variant, cell, job_id, "failed", f"shut-down failed: {e}")
            return
        finally:
            self._retire(job)
        self.store.update_job(job_id, status="ok")
        n = self._count("init", variant, np)
        self._record(variant, cell, job_id, "ok", "", 1,
                     [Obs(n, [r.since_launch for r in hello.ranks])])
        self._record(variant, Cell("finalize", 0, np), job_id, "ok", "", 1, [Obs(n, finalize)])

    def _count(self, bench: str, variant: Variant, np: int) -> int:
        row = self.store.db.execute("SELECT COUNT(*) FROM cells WHERE run_id=? AND bench=? AND "
                                    "variant=? AND np=?", (self.run_id, bench, variant.id, np))
        return int(row.fetchone()[0])

    def _turn(self, cell: Cell, variant: Variant, started: tuple[Job, int] | None) -> None:
        self.advance(f"{variant.id} {cell.bench}")
        if started is None or variant.id in self.failed:
            self._record(variant, cell, None, "skipped", self.failed.get(variant.id, "not started"))
            return
        job, job_id = started
        s = self.plan.suite
        began = time.monotonic()
        so_far = len(self.sampled.get((cell, variant.id), ([], 0.0))[0])
        batch = max(s.observations, so_far)  # adaptive batches double, so calibrations stay few
        try:
            res = job.cell(self.seq, cell.bench, cell.size, batch, s.target_time,
                           _max_time(cell, batch, s), s.window, self.settings.offcache,
                           self.settings.validate, self.settings.timeout, s.hold_time,
                           timing(cell, s, variant.impl))
        except JobError as e:
            self._fail(variant, job, job_id, f"{cell.bench} {cell.size} B: {e}")
            self._record(variant, cell, job_id, "failed", str(e))
            return
        if cell.bench == "memory" and res.status == "ok":
            res = with_baseline(res, cell)
        self._record(variant, cell, job_id, res.status, res.reason, res.iterations,
                     res.observations)
        if res.status == "ok":
            values, spent = self.sampled.get((cell, variant.id), ([], 0.0))
            bench = BENCHMARKS[cell.bench]
            values += [v for o in res.observations
                       if math.isfinite(v := bench.observation(o.per_rank, o.extras))]
            self.sampled[cell, variant.id] = values, spent + time.monotonic() - began

    def _refine(self, rnd: Round, jobs: dict[str, tuple[Job, int]]) -> None:
        """Adaptive sampling: more batches, still interleaved, for every cell whose median is not
        yet known to the requested precision, until it is or the cell's time is spent."""
        rng = random.Random(self.plan.seed + rnd.np)
        pending = [(c, v) for c, v in rnd.turns if self._needs_more(c, v)]
        while pending:
            self.grow(len(pending))
            rng.shuffle(pending)
            for cell, variant in pending:
                self._turn(cell, variant, jobs.get(variant.id))
            pending = [(c, v) for c, v in pending if self._needs_more(c, v)]

    def _needs_more(self, cell: Cell, variant: Variant) -> bool:
        if variant.id in self.failed or (cell, variant.id) not in self.sampled:
            return False
        values, spent = self.sampled[cell, variant.id]
        assert self.settings.precision is not None
        return spent < self.settings.max_time and \
            ci_halfwidth(np.asarray(values)) > self.settings.precision

    def _record(self, variant: Variant, cell: Cell, job_id: int | None, status: str,
                reason: str, iterations: int | None = None,
                observations: list[Obs] | None = None) -> None:
        self.store.add_cell(self.run_id, job_id, variant.id, cell.bench, cell.size, cell.np,
                            status, reason or None, iterations, observations or [], self.seq,
                            timing=timing(cell, self.plan.suite, variant.impl))
        self.seq += 1


def _max_time(cell: Cell, batch: int, suite: Suite) -> float:
    """Seconds a cell may take observations: the cpu benchmark holds for hold_time each."""
    if cell.bench == "cpu":
        return max(suite.max_cell_time, suite.hold_time * (batch + 1))
    return suite.max_cell_time


def with_baseline(res: CellResult, cell: Cell) -> CellResult:
    """A memory cell's observations with the baseline process's resident bytes added to each
    rank's extras (base_rss_init, base_rss, base_peak); failed if the baseline cannot run."""
    try:
        base = run_baseline(cell.bench, cell.size, cell.np)
    except ArenaError as e:
        return replace(res, status="failed", reason=str(e))
    for o in res.observations:
        o.extras.update({name: [v] * len(o.per_rank) for name, v in base.items()})
    return res
