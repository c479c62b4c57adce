"""Execute a plan round by round; one failing implementation never stops the others."""

from __future__ import annotations

import itertools
import math
import random
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from ..analysis.sampling import Looks, Spending, bought_together, budgeted, precise
from ..analysis.stats import Sample
from ..base.errors import ArenaError
from ..base.records import LOCAL, Cell, CellRequest, Datatype, HarnessTime, JobRow
from ..base.status import CellStatus, JobStatus, LaunchShape
from ..base.tags import RUN_VAR
from ..base.users import RankUser
from ..cluster.topology import Local, Topology
from ..impls import family_of
from ..model.benchmarks import BENCHMARKS
from ..model.whatran import WhatRan
from ..platform.build import Build, run_baseline
from ..platform.plan import Plan, Round, Turn, Variant
from ..store import Obs, Store
from ..store.results import Stratified
from ..system import machine_load
from . import presence
from .cleanup import kill_tagged, owned_scratch
from .job import CellResult, Hello, Job, JobError
from .launch import Daemons, job_for


@dataclass(frozen=True)
class Settings:
    """How a run goes about its plan (what each cell asks of the core is in the plan)."""

    timeout: float = 60.0  # seconds a job may take to answer one cell or to start
    topology: str = LOCAL
    precision: float | None = None  # adaptive: sample until the median's 95% CI is this tight
    max_time: float = 30.0  # adaptive: seconds one cell may take in all
    wait_quiet: float = 0.0  # seconds a launch may wait for others to leave the machine quiet
    datatype: Datatype | None = None  # the sums' element type (None: the core's, MPI_INT)


@dataclass
class Running:
    """A variant's live job in a session: its store id and which launch of the variant it is."""

    job: Job
    job_id: int
    launch: int
    shape: LaunchShape
    restarts: int = 0


@dataclass
class Sampled:
    """A cell of a variant as measured so far: reduced observations per launch, the launches
    that were partial, and the seconds spent measuring it."""

    by_launch: dict[int, list[float]] = field(default_factory=dict)
    partial: set[int] = field(default_factory=set)
    spent: float = 0.0

    def launches(self) -> Sample:
        """The launches with observations, in launch order, each with its shape."""
        order = sorted(i for i, x in self.by_launch.items() if x)
        return Stratified([np.asarray(self.by_launch[i]) for i in order],
                        [LaunchShape.PARTIAL if i in self.partial else LaunchShape.WHOLE
                         for i in order])


@dataclass
class CellState:
    """One cell of one variant in a run: what it sampled so far (None until a cell of it
    measured), why it failed (it is never asked again), and the iteration count its first
    launch calibrated (later launches start there and run the same loop)."""

    sampled: Sampled | None = None
    broken: str | None = None
    calibrated: int | None = None


@dataclass
class LaunchState:
    """One variant at one rank count in a run: the launches started, whether its library said
    what it runs with (read once a run, on the first launch that starts), and the seconds of
    each of its whole launches (what the budget costs)."""

    started: int = 0
    configured: bool = False
    walls: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class Execution:
    """What an Executor measures and where it puts it: the plan, the builds by implementation
    id, the store's run, how the run goes, who the ranks run as, the progress callbacks and
    where the ranks run (None: this machine)."""

    plan: Plan
    builds: dict[str, Build]
    store: Store
    run_id: int
    settings: Settings
    user: RankUser | None
    advance: Callable[[str], None] = lambda _: None
    grow: Callable[[int], None] = lambda _: None
    topology: Topology | None = None


MAX_RESTARTS = 3  # fresh launches a session gives a variant whose cells keep failing
MAX_EXTRA_LAUNCHES = 32  # adaptive sampling: launches added at most, whatever the time left
# seconds a launcher may take to exit once every rank has finalized before the next launch goes
# on beside it (Open MPI's mpirun exits 7 ms after its ranks, LAM's 0.5 s: measured here)
LINGER = 0.02


class Executor:
    def __init__(self, execution: Execution):
        self.topology = execution.topology or Local()
        self.plan, self.builds = execution.plan, execution.builds
        self.store, self.run_id = execution.store, execution.run_id
        self.settings, self.user = execution.settings, execution.user
        self.advance, self.grow = execution.advance, execution.grow
        self.cells: dict[tuple[Cell, str], CellState] = {}  # by (cell, variant id)
        self.launches: dict[tuple[str, int], LaunchState] = {}  # by (variant id, np)
        self.seq = 0
        self.spent: dict[str, HarnessTime] = {}  # variant id -> where its time goes
        self.began = time.monotonic()  # the budget counts from here
        self.jobs_started = itertools.count()
        self.run_token = uuid.uuid4().hex
        self.workdir: Path | None = None
        self.live: list[Job] = []
        self.lingering: dict[Job, int] = {}  # quit jobs whose launcher still runs -> job id
        self.beside: dict[int, machine_load.Snapshot] = {}  # job id -> the machine at its start

    def run(self) -> None:
        """Measure everything; no job or scratch directory outlives this, whatever happens."""
        self.workdir = owned_scratch("measure")
        self.workdir.chmod(0o755)
        self.daemons = Daemons(self.workdir, self.user, self.run_token, self.topology.placement)
        try:
            for build in self.builds.values():
                self.topology.prepare(build.binary)
            for i, rnd in enumerate(self.plan.rounds):
                self._round(rnd, len(self.plan.rounds) - i - 1)
        finally:
            self.store.set_harness(self.run_id, time.monotonic() - self.began, self.spent)
            for job in self.live:
                job.kill()
            self.daemons.stop_all()
            self.topology.reap()
            kill_tagged(self.run_token, var=RUN_VAR)
            shutil.rmtree(self.workdir, ignore_errors=True)

    # --- one round: start-ups, then the launches ---------------------------------------------
    def _round(self, rnd: Round, rounds_after: int) -> None:
        began = time.monotonic()
        for variant in rnd.startups:
            self._startup(variant, rnd.np)
        for session in rnd.sessions:
            self._session(session.turns, rnd.np)
        base = time.monotonic() - began
        if self.settings.precision:
            self._refine(rnd)
        elif self.plan.suite.budget:  # keep what the later rounds' own launches will take
            self._spend(rnd, self.began + self.plan.suite.budget - rounds_after * base)
        self._reap(self.settings.timeout)
        self.daemons.stop_all()
        self.topology.reap()

    def _session(self, turns: list[Turn], np_: int,
                 shape: LaunchShape = LaunchShape.WHOLE) -> None:
        """One launch of each variant in `turns`, one job at a time in the order the variants
        first appear, each job's cells back to back in the session's order. No idle job shares
        the cores with a measuring one, and no cell waits for another job's turn (interleaved
        cell by cell, an idle job's ranks took up to 20 ms to wake for their next cell: 20 ms
        of a 28 ms cell-launch, measured here)."""
        cells: dict[str, list[CellRequest]] = {}
        variants: dict[str, Variant] = {}
        for asked, variant in turns:
            cells.setdefault(variant.id, []).append(asked)
            variants[variant.id] = variant
        for vid, its_cells in cells.items():
            self._launch(variants[vid], its_cells, np_, shape)

    def _launch(self, variant: Variant, cells: list[CellRequest], np_: int,
                shape: LaunchShape) -> None:
        """The variant's next launch measuring `cells` in order; a failed cell ends the job, and
        the cells after it go on in a fresh one."""
        began = time.monotonic()
        self._reap(0.0)
        running = self._start(variant, np_, shape)
        for asked in cells:
            running = self._turn(asked, variant, running)
        if isinstance(running, Running):  # on Ctrl-C, run() kills what is live instead
            self._finish(variant, running)
        self._launch_state(variant.id, np_).walls.append(time.monotonic() - began)

    def _launched(self, variant: Variant, np: int,
                  shape: LaunchShape = LaunchShape.WHOLE) -> tuple[Job, int, Hello]:
        """A started job, or JobError (its daemons are then halted: they start again when next
        needed)."""
        assert self.workdir is not None
        log = self.workdir / f"job-{next(self.jobs_started)}.err"
        before = machine_load.snapshot(machine_load.wait_quiet(self.settings.wait_quiet),
                                       len(presence.others_measuring()))
        try:
            job, binding = job_for(variant, np, self.builds[variant.impl.id].binary, log,
                                   self.daemons, self.settings.datatype)
        except JobError as e:
            self.daemons.stop(variant.id)
            raise JobError(f"its daemons did not start: {e}") from e
        job_id = self.store.add_job(JobRow(
            run_id=self.run_id, variant=variant.id, np=np, topology=self.settings.topology,
            binding=binding, command=job.argv, shape=shape))
        self.beside[job_id] = before
        self.live.append(job)
        began = time.monotonic()
        try:
            hello = job.start(self.settings.timeout)
        except JobError as e:
            self._drop(variant, job, job_id, f"start-up failed: {e}")
            raise JobError(f"start-up failed: {e}") from e
        finally:
            self._spent(variant).launches += 1
            self._spent(variant).launching += time.monotonic() - began
        self.store.update_job(job_id, status=JobStatus.RUNNING, tick=hello.tick,
                              resolution=hello.resolution, thread_level=hello.thread_level,
                              ranks=[r.__dict__ for r in hello.ranks])
        return job, job_id, hello

    def _start(self, variant: Variant, np: int, shape: LaunchShape,
               restarts: int = 0) -> Running | str:
        """The variant's next launch, or why it did not start."""
        state = self._launch_state(variant.id, np)
        launch = state.started
        state.started += 1
        try:
            job, job_id, hello = self._launched(variant, np, shape)
            if not state.configured:
                began = time.monotonic()
                self._what_ran(variant, job, job_id, hello)
                state.configured = True
                self._spent(variant).configuring += time.monotonic() - began
        except JobError as e:
            return f"launch {launch} did not start: {e}"
        return Running(job, job_id, launch, shape, restarts)

    def _what_ran(self, variant: Variant, job: Job, job_id: int, hello: Hello) -> None:
        """Ask the started job what its library runs with, before any cell; JobError (the job
        then dropped) if it cannot answer."""
        try:
            reported = job.config(self.settings.timeout)
        except JobError as e:
            self._drop(variant, job, job_id, f"reading its configuration failed: {e}")
            raise JobError(f"reading its configuration failed: {e}") from e
        family = family_of(variant.impl)
        probe = family.selection_probe(variant.impl)
        said = self._probe(variant, hello.np, probe) if probe else ""
        what, how = family.transport(variant.impl, reported.cvars, hello.version, job.env, said)
        self.store.add_what_ran(job_id, WhatRan(reported.cvars, reported.why, what, how))

    def _probe(self, variant: Variant, np: int, env: dict[str, str]) -> str:
        """One launch of the variant with env added that measures nothing and is not stored
        (the family's selection probe): what it printed besides the core's lines (stdout
        before them, then stderr), "" if it failed."""
        assert self.workdir is not None
        log = self.workdir / f"probe-{next(self.jobs_started)}.err"
        probe = replace(variant, env=(*variant.env, *env.items()))
        try:
            job, _ = job_for(probe, np, self.builds[variant.impl.id].binary, log,
                             self.daemons)
        except JobError:
            return ""
        self.live.append(job)
        try:
            job.start(self.settings.timeout)
            job.quit(self.settings.timeout)
        except JobError:
            return ""
        finally:
            self._retire(job)
        return "\n".join([*job.other, log.read_text(errors="replace")])

    def _finish(self, variant: Variant, running: Running) -> None:
        began = time.monotonic()
        try:
            running.job.quit(self.settings.timeout, LINGER)
            self._ended(running.job_id, status=JobStatus.OK)
        except JobError as e:
            self._ended(running.job_id, status=JobStatus.FAILED, reason=str(e))
        self._release(running.job, running.job_id)
        self._spent(variant).quitting += time.monotonic() - began

    def _release(self, job: Job, job_id: int) -> None:
        """A job that quit: retired, or, while its launcher lingers, kept until `_reap`."""
        if job.lingering:
            self.lingering[job] = job_id
        else:
            self._retire(job)

    def _reap(self, wait: float) -> None:
        """Retire the lingering launchers that have exited; with `wait`, every one, each
        waited for up to `wait` seconds (a failed exit is recorded against its job)."""
        for job, job_id in list(self.lingering.items()):
            if wait or job.exited():
                try:
                    job.reap(wait)
                except JobError as e:
                    self.store.update_job(job_id, status=JobStatus.FAILED, reason=str(e))
                del self.lingering[job]
                self._retire(job)

    def _drop(self, variant: Variant, job: Job, job_id: int, reason: str,
              cell: Cell | None = None) -> None:
        """The job failed (in `cell`, if given): record why, kill it, halt the variant's
        daemons."""
        self._ended(job_id, status=JobStatus.FAILED, reason=reason,
                    failed_bench=None if cell is None else cell.bench,
                    failed_size=None if cell is None else cell.size)
        self._retire(job)
        self.daemons.stop(variant.id)

    def _ended(self, job_id: int, **fields: object) -> None:
        """Record how the job ended and what ran beside it."""
        beside = machine_load.since(self.beside.pop(job_id))
        self.store.update_job(job_id, interference=asdict(beside), **fields)

    def _retire(self, job: Job) -> None:
        job.kill()
        if job in self.live:
            self.live.remove(job)

    def _startup(self, variant: Variant, np: int) -> None:
        """One launch that only starts and stops: launch-to-init and finalize times. A launch
        that fails is a failed start-up, not a failed variant: the measurements run in jobs of
        their own (MPICH 4.0.2 over an emulated TCP link hung in MPI_Finalize in 1 of 40)."""
        self.advance(f"{variant.id} start-up, {np} ranks")
        n = self.store.count_cells(self.run_id, "init", variant.id, np)
        init = self.plan.request(Cell("init", 0, np), variant)
        try:
            job, job_id, hello = self._launched(variant, np)
        except JobError as e:
            self._record(variant, init, unmeasured(CellStatus.FAILED, str(e)), None, n)
            return
        began = time.monotonic()
        try:
            finalize, _ = job.quit(self.settings.timeout, LINGER)
            self._spent(variant).quitting += time.monotonic() - began
        except JobError as e:
            self._drop(variant, job, job_id, f"shut-down failed: {e}")
            self._record(variant, init,
                         unmeasured(CellStatus.FAILED, f"shut-down failed: {e}"), job_id, n)
            return
        self._release(job, job_id)
        self._ended(job_id, status=JobStatus.OK)
        self._record(variant, init, CellResult(CellStatus.OK, "", 1, [
            Obs(0, [r.since_launch for r in hello.ranks])]), job_id, n)
        self._record(variant, self.plan.request(Cell("finalize", 0, np), variant),
                     CellResult(CellStatus.OK, "", 1, [Obs(0, finalize)]), job_id, n)

    def _turn(self, asked: CellRequest, variant: Variant,
              running: Running | str) -> Running | str:
        """One cell in the variant's running job; the job the next cell goes to (a fresh one
        where this cell failed), or why there is none."""
        cell = asked.cell
        self.advance(f"{variant.id} {cell.bench}")
        state = self._cell_state(cell, variant.id)
        if state.broken is not None:
            return running
        if isinstance(running, str):
            launch = max(self._launch_state(variant.id, cell.np).started - 1, 0)
            self._record(variant, asked, unmeasured(CellStatus.SKIPPED, running), None, launch)
            return running
        began = time.monotonic()
        try:
            res = running.job.cell(asked, self.seq, self.settings.timeout,
                                   state.calibrated)
        except JobError as e:
            self._drop(variant, running.job, running.job_id, str(e), cell)
            self._record(variant, asked, unmeasured(CellStatus.FAILED, str(e)), running.job_id,
                         running.launch)
            state.broken = str(e)
            return (self._start(variant, cell.np, running.shape, running.restarts + 1)
                    if running.restarts < MAX_RESTARTS else
                    f"launch {running.launch} gave up after {MAX_RESTARTS} "
                    "fresh launches failed")
        self._count(self._spent(variant), res, time.monotonic() - began)
        if cell.bench == "memory" and res.status == CellStatus.OK:
            res = with_baseline(res, cell)
        self._record(variant, asked, res, running.job_id, running.launch)
        if res.status == CellStatus.OK and res.iterations:
            state.calibrated = state.calibrated or res.iterations
        if res.status == CellStatus.OK and not family_of(variant.impl).floor:
            # the machine floor is a reference: no budget or precision buys it launches
            sampled = state.sampled = state.sampled or Sampled()
            bench = BENCHMARKS[cell.bench]
            sampled.by_launch.setdefault(running.launch, []).extend(
                v for o in res.observations
                if math.isfinite(v := bench.observation(o.per_rank, o.extras)))
            if running.shape == LaunchShape.PARTIAL:
                sampled.partial.add(running.launch)
            sampled.spent += time.monotonic() - began
        return running

    def _refine(self, rnd: Round) -> None:
        """Adaptive sampling: more launches, still interleaved, of every cell whose figure is
        not yet known to the requested precision across launches, until it is or the cell's
        time is spent."""
        rng = random.Random(self.plan.seed + rnd.np)
        planned = list(dict.fromkeys(t for s in rnd.sessions for t in s.turns))
        for _ in range(MAX_EXTRA_LAUNCHES):
            pending = [(a, v) for a, v in planned if self._needs_more(a.cell, v)]
            if not pending:
                return
            self.grow(len(pending))
            rng.shuffle(pending)
            shared = [t for t in pending if not t[1].exclusive]
            alone = [[t for t in pending if t[1] == v]
                     for v in dict.fromkeys(v for _, v in pending if v.exclusive)]
            for turns in [shared, *alone]:
                if turns:
                    self._session(turns, rnd.np)

    def _spend(self, rnd: Round, deadline: float) -> None:
        """The budget: rounds of partial launches, still interleaved, that `sampling.Spending`
        names (both sides of every pair of variants not closed at a look, the cells judged
        launch by launch with them, in a base session's order), each variant's launch costing
        what its launches so far took (PVM's 30 ms cells made its launch 10x raw TCP's in a
        quick run), until none is or the next round does not fit in the time left. Each is a
        partial launch: only the named cells, its job stored as LaunchShape.PARTIAL so that
        the statistics compare it with partial launches only (launches of only their open
        cells read 8% slower in the median than the base ones in one quick run)."""
        planned = list(dict.fromkeys(t for s in rnd.sessions for t in s.turns))
        turns = {(asked.cell, v.id): (asked, v) for asked, v in planned}
        by_index: dict[int, list[list[tuple[Cell, str]]]] = {}
        for s in rnd.sessions:  # each index: its shared session and its lone ones
            by_index.setdefault(s.index, []).append([(a.cell, v.id) for a, v in s.turns])
        spending = Spending(Looks(self.plan.suite.launches), list(by_index.values()),
                            random.Random(self.plan.seed + rnd.np),
                            bought_together(c for c, _ in turns))
        while (left := deadline - time.monotonic()) > 0:
            cost = {v.id: float(np.mean(self._launch_state(v.id, rnd.np).walls or [0.0]))
                    for _, v in planned}
            launches = spending.next_round(self._compared(planned), left, cost)
            if not launches:
                return
            self.grow(sum(map(len, launches)))
            for launch in launches:
                self._session([turns[t] for t in launch], rnd.np, LaunchShape.PARTIAL)

    def _compared(self, planned: list[Turn]) -> dict[Cell, dict[str, Sample]]:
        """Each planned cell's launches so far by variant id, of the benchmarks the budget
        buys launches for (analysis.sampling.budgeted), broken cells left out."""
        cells: dict[Cell, dict[str, Sample]] = {}
        for asked, variant in planned:
            cell = asked.cell
            state = self.cells.get((cell, variant.id), CellState())
            sampled = state.sampled
            if budgeted(cell.bench) and state.broken is None and sampled and \
                    any(sampled.by_launch.values()):
                cells.setdefault(cell, {})[variant.id] = sampled.launches()
        return cells

    def _needs_more(self, cell: Cell, variant: Variant) -> bool:
        state = self.cells.get((cell, variant.id), CellState())
        sampled = state.sampled
        if state.broken is not None or sampled is None:
            return False
        assert self.settings.precision is not None
        return sampled.spent < self.settings.max_time and \
            not precise(sampled.by_launch.values(), self.settings.precision)

    def _record(self, variant: Variant, asked: CellRequest, res: CellResult,
                job_id: int | None, launch: int) -> None:
        """Store the cell as it ended (in job `job_id`, the variant's launch `launch`), between
        cells: no write runs beside a measurement, and what was measured is kept whenever the
        run ends."""
        began = time.monotonic()
        self.store.add_cell(res.row(asked, run_id=self.run_id, job_id=job_id,
                                    variant=variant.id, seq=self.seq, launch=launch),
                            res.observations)
        self.seq += 1
        self._spent(variant).storing += time.monotonic() - began

    def _cell_state(self, cell: Cell, variant_id: str) -> CellState:
        return self.cells.setdefault((cell, variant_id), CellState())

    def _launch_state(self, variant_id: str, np: int) -> LaunchState:
        return self.launches.setdefault((variant_id, np), LaunchState())

    def _spent(self, variant: Variant) -> HarnessTime:
        return self.spent.setdefault(variant.id, HarnessTime())

    @staticmethod
    def _count(spent: HarnessTime, res: CellResult, wall: float) -> None:
        """Add a measured cell to where the variant's time went."""
        spent.cells += 1
        spent.cell_wall += wall
        spent.calibrating += res.spent.calibrating
        spent.observing += res.spent.observing
        spent.timed += res.spent.timed


def unmeasured(status: CellStatus, reason: str) -> CellResult:
    """A cell that ended without figures (failed or skipped), and why."""
    return CellResult(status, reason, None, [])


def with_baseline(res: CellResult, cell: Cell) -> CellResult:
    """A memory cell's observations with the baseline process's resident bytes added to each
    rank's extras (base_rss_init, base_rss, base_peak); failed if the baseline cannot run."""
    try:
        base = run_baseline(cell.bench, cell.size, cell.np)
    except ArenaError as e:
        return replace(res, status=CellStatus.FAILED, reason=str(e))
    for o in res.observations:
        o.extras.update({name: [v] * len(o.per_rank) for name, v in base.items()})
    return res
