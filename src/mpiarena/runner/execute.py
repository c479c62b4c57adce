"""Execute a plan round by round; one failing implementation never stops the others."""

from __future__ import annotations

import itertools
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .. import paths
from ..build import Build
from ..plan import Cell, Plan, Round, Variant
from ..store import Obs, Store
from ..users import RankUser
from .job import Job, JobError
from .launch import job_for


@dataclass(frozen=True)
class Settings:
    timeout: float = 60.0  # seconds a job may take to answer one cell or to start
    offcache: bool = False
    validate: bool = False
    topology: str = "local"


class Executor:
    def __init__(self, plan: Plan, builds: dict[str, Build], store: Store, run_id: int,
                 settings: Settings, user: RankUser | None,
                 advance: Callable[[str], None] = lambda _: None):
        self.plan, self.builds, self.store, self.run_id = plan, builds, store, run_id
        self.settings, self.user, self.advance = settings, user, advance
        self.seq = 0
        self.jobs_started = itertools.count()
        self.failed: dict[str, str] = {}  # variant id -> why, for the current round
        self.workdir: Path | None = None
        self.live: list[Job] = []

    def run(self) -> None:
        """Measure everything; no job or scratch directory outlives this, whatever happens."""
        self.workdir = Path(tempfile.mkdtemp(prefix="run-", dir=paths.scratch_dir()))
        self.workdir.chmod(0o755)
        try:
            for rnd in self.plan.rounds:
                self._round(rnd)
        finally:
            for job in self.live:
                job.kill()
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
        for variant_id, (job, job_id) in jobs.items():
            if variant_id not in self.failed:
                try:
                    job.quit(self.settings.timeout)
                    self.store.update_job(job_id, status="ok")
                except JobError as e:
                    self.store.update_job(job_id, status="failed", reason=str(e))
            job.kill()
            self.live.remove(job)

    def _job(self, variant: Variant, np: int) -> tuple[Job, int]:
        assert self.workdir is not None
        log = self.workdir / f"job-{next(self.jobs_started)}.err"
        job, binding = job_for(variant, np, self.builds[variant.impl.id].binary, self.workdir,
                               self.user, log)
        job_id = self.store.add_job(self.run_id, variant.id, np, self.settings.topology, binding,
                                    job.argv)
        self.live.append(job)
        return job, job_id

    def _start(self, variant: Variant, np: int) -> tuple[Job, int] | None:
        job, job_id = self._job(variant, np)
        try:
            hello = job.start(self.settings.timeout)
        except JobError as e:
            self._fail(variant, job, job_id, f"start-up failed: {e}")
            return None
        self.store.update_job(job_id, status="running", tick=hello.tick,
                              resolution=hello.resolution, thread_level=hello.thread_level,
                              ranks=[r.__dict__ for r in hello.ranks])
        return job, job_id

    def _fail(self, variant: Variant, job: Job, job_id: int, reason: str) -> None:
        self.failed[variant.id] = reason
        self.store.update_job(job_id, status="failed", reason=reason)
        job.kill()

    def _startup(self, variant: Variant, np: int) -> None:
        """One launch that only starts and stops: launch-to-init and finalize times."""
        self.advance(f"{variant.id} start-up, {np} ranks")
        if variant.id in self.failed:
            self._record(variant, Cell("init", 0, np), None, "failed", self.failed[variant.id])
            return
        job, job_id = self._job(variant, np)
        try:
            hello = job.start(self.settings.timeout)
            finalize, _ = job.quit(self.settings.timeout)
        except JobError as e:
            self._fail(variant, job, job_id, f"start-up failed: {e}")
            self._record(variant, Cell("init", 0, np), job_id, "failed", str(e))
            return
        finally:
            job.kill()
            self.live.remove(job)
        self.store.update_job(job_id, status="ok", tick=hello.tick, resolution=hello.resolution,
                              thread_level=hello.thread_level,
                              ranks=[r.__dict__ for r in hello.ranks])
        n = self._count("init", variant, np)
        self._record(variant, Cell("init", 0, np), job_id, "ok", "", 1,
                     [Obs(n, [r.since_launch for r in hello.ranks])])
        self._record(variant, Cell("finalize", 0, np), job_id, "ok", "", 1, [Obs(n, finalize)])

    def _count(self, bench: str, variant: Variant, np: int) -> int:
        row = self.store.db.execute("SELECT COUNT(*) FROM cells WHERE run_id=? AND bench=? AND "
                                    "variant=? AND np=?", (self.run_id, bench, variant.id, np))
        return int(row.fetchone()[0])

    def _turn(self, cell: Cell, variant: Variant, started: tuple[Job, int] | None) -> None:
        self.advance(f"{variant.id} {cell.bench}")
        if started is None or variant.id in self.failed:
            self._record(variant, cell, None, "failed", self.failed.get(variant.id, "not started"))
            return
        job, job_id = started
        s = self.plan.suite
        try:
            res = job.cell(self.seq, cell.bench, cell.size, s.observations, s.target_time,
                           s.max_cell_time, s.window, self.settings.offcache,
                           self.settings.validate, self.settings.timeout)
        except JobError as e:
            self._fail(variant, job, job_id, f"{cell.bench} {cell.size} B: {e}")
            self._record(variant, cell, job_id, "failed", str(e))
            return
        self._record(variant, cell, job_id, res.status, res.reason, res.iterations,
                     res.observations)

    def _record(self, variant: Variant, cell: Cell, job_id: int | None, status: str,
                reason: str, iterations: int | None = None,
                observations: list[Obs] | None = None) -> None:
        self.store.add_cell(self.run_id, job_id, variant.id, cell.bench, cell.size, cell.np,
                            status, reason or None, iterations, observations or [], self.seq)
        self.seq += 1
