"""`mpiarena simulate`'s runs: the core under smpirun, one launch of each model (selection logic,
forced algorithms) per rank count, its cells taken in turn; a launch that ends before its cell
does (SMPI's deadlock detection exits 0) fails that cell, and the model's other cells go on in
a fresh launch."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..base.errors import ArenaError
from ..base.records import (
    Cell,
    CellRequest,
    ImplementationRecord,
    JobRow,
    RunKind,
    Timing,
    VariantRecord,
)
from ..base.status import CellStatus, JobStatus, RunStatus
from ..base.tags import OWNER_VAR
from ..cluster.smpi import SELECTORS, Factors, Link, SimGrid, command, platform_for
from ..model.benchmarks import BENCHMARKS, Kind
from ..model.runs import SIMULATED_SUITE, RunStart, SimulatedSettings
from ..platform.build import SimulatedBuild
from ..store import Store
from ..system.owners import Owner
from .cleanup import owned_scratch
from .job import CellResult, Job, JobError

MAX_RESTARTS = 3  # fresh launches a model gets after a launch ends early
# why a benchmark means nothing under SMPI (engines-feasibility.md, A); kinds, then names
REFUSED_KINDS = {
    "startup": "SMPI's start-up mixes the simulated and the real clock",
    "timer": "the simulated clock costs nothing to read",
    "app": "an application kernel's computation is not simulated (smpi/simulate-computation:no)",
}
REFUSED = {
    "threads": "SMPI grants only MPI_THREAD_SINGLE: no threads",
    "cpu": "SMPI runs every rank in one process: CPU figures would be the simulator's",
    "memory": "SMPI runs every rank in one process: memory figures would be the simulator's",
    "overlap": "overlap needs computation, which is not simulated",
    "progress": "progress needs computation, which is not simulated",
    "msgrate": "msgrate is not checked under SMPI",
    "loggp": "LogGP's overheads need computation, which is not simulated",
}


def refusal(bench: str) -> str | None:
    """Why `mpiarena simulate` cannot run a benchmark, or None."""
    b = BENCHMARKS.get(bench)
    if b is None:
        return "no such benchmark ('mpiarena run --help' lists them)"
    if b.group:
        return f"MPI beyond MPI-1 ({b.group}) is not simulated"
    return REFUSED.get(bench) or REFUSED_KINDS.get(b.kind)


@dataclass(frozen=True)
class Model:
    """What SMPI is asked to copy: a library's selection logic (smpi/coll-selector), with some
    collectives' algorithms forced (smpi/<collective>)."""

    selector: str
    forced: tuple[tuple[str, str], ...] = ()

    @property
    def name(self) -> str:
        return self.selector + "".join(f"+{c}={a}" for c, a in self.forced)

    def cfg(self) -> list[str]:
        return [f"--cfg=smpi/coll-selector:{self.selector}",
                *(f"--cfg=smpi/{c}:{a}" for c, a in self.forced)]

    def title(self) -> str:
        forced = "".join(f", {c} forced to {a}" for c, a in self.forced)
        return f"{SELECTORS[self.selector]}'s selection logic{forced}"


@dataclass(frozen=True)
class Request:
    """What to simulate and on what."""

    benchmarks: tuple[str, ...]
    sizes: tuple[int, ...]
    nps: tuple[int, ...]
    models: tuple[Model, ...]
    link: Link
    factors: Factors = field(default_factory=Factors)
    ranks_per_node: int = 1
    observations: int = 3
    sync: str = "barrier"
    timeout: float = 300.0
    computation: bool = False  # smpi/simulate-computation (off: communication only)
    calibrated_from: str = ""  # a run's id and variant, where the factors came from
    # (bench, np) -> how a measured run timed it, which a validation copies (else `sync`)
    timed_as: Mapping[tuple[str, int], str] = field(default_factory=dict)

    def cfg(self, model: Model) -> list[str]:
        return [f"--cfg=smpi/simulate-computation:{'yes' if self.computation else 'no'}",
                *self.factors.cfg(), *model.cfg()]

    def topology(self, sim: SimGrid, model: Model | None = None) -> str:
        """What the run (or one model's jobs) simulated on, as the store's topology says."""
        factors = f"calibrated from run {self.calibrated_from}" if self.calibrated_from else \
            f"link factors {self.factors.label()}"
        hosts = "one host a rank" if self.ranks_per_node == 1 else \
            f"{self.ranks_per_node} ranks a host"
        logic = f", {model.title()}" if model else ""
        return (f"simulated: {sim.title} SMPI{logic}, a cluster of {hosts}, link "
                f"{self.link.label()}, {factors}")


OnCell = Callable[[CellRequest, CellResult, int | None], None]  # cell, result, job
OnEnd = Callable[[int | None, str | None], None]  # job, why it failed (None: it did not)


class Simulator:
    """Runs models of a request in a scratch directory that goes when it ends."""

    def __init__(self, sim: SimGrid, build: SimulatedBuild, request: Request):
        self.sim, self.build, self.request = sim, build, request
        self.workdir = owned_scratch("sim")
        self.live: Job | None = None
        self.jobs = 0

    def close(self) -> None:
        if self.live is not None:
            self.live.kill()
            self.live = None
        shutil.rmtree(self.workdir, ignore_errors=True)

    def timing(self, bench: str, np: int) -> str:
        if (bench, np) in self.request.timed_as:
            return self.request.timed_as[bench, np]
        return self.request.sync if BENCHMARKS[bench].kind == Kind.COLL and bench != "bcast-ack" \
            else Timing.LOOP

    def asked(self, bench: str, size: int, np: int) -> CellRequest:
        """A cell as the simulated core is asked for it: no target time and no limit but the
        timeout (`run` starts its calibration at one iteration: the simulated clock needs no
        more)."""
        return CellRequest(cell=Cell(bench, size, np), timing=self.timing(bench, np),
                           observations=self.request.observations, target_time=0.0,
                           max_time=1e9, window=64, hold_time=0.0)

    def _job(self, np: int, model: Model) -> Job:
        self.jobs += 1
        where = self.workdir / f"job-{self.jobs}"
        (where / "tmp").mkdir(parents=True)
        platform = platform_for(np, self.request.link, self.request.ranks_per_node)
        (where / "platform.xml").write_text(platform.xml())
        (where / "hosts").write_text(platform.hostfile(np))
        argv = command(self.sim, self.build.binary, np, where / "platform.xml", where / "hosts",
                       self.request.cfg(model))
        env = {**os.environ, "TMPDIR": str(where / "tmp"), OWNER_VAR: str(Owner.me())}
        return Job(argv, env, where, None, where / "smpirun.err")

    def run(self, np: int, model: Model, cells: list[tuple[str, int]],
            on_start: Callable[[Job], int | None], on_cell: OnCell,
            on_end: OnEnd = lambda _job, _why: None) -> None:
        """The model's cells at np ranks, in order, in as few launches as they allow; on_end
        hears how each launch ended (None: well)."""
        pending, restarts = [self.asked(bench, size, np) for bench, size in cells], 0
        while pending:
            job = self.live = self._job(np, model)
            job_id = on_start(job)
            try:
                job.start(self.request.timeout)
            except JobError as e:
                why = f"smpirun did not start: {_incomplete(e, job.log)}"
                self._ended(job, job_id, on_end, why)
                _bad_algorithm(job.log)
                for asked in pending:
                    on_cell(asked, _lost(CellStatus.FAILED, why), job_id)
                return
            while pending:
                asked = pending.pop(0)
                try:
                    res = job.cell(asked, 0, self.request.timeout, calibrated=1)
                except JobError as e:
                    on_cell(asked, _lost(CellStatus.FAILED, _incomplete(e, job.log)), job_id)
                    break
                on_cell(asked, res, job_id)
            else:
                with contextlib.suppress(JobError):  # every cell was answered: a failed
                    job.quit(self.request.timeout)     # shutdown loses nothing
                self._ended(job, job_id, on_end, None)
                return
            self._ended(job, job_id, on_end, "ended before its cell did")
            restarts += 1
            if restarts > MAX_RESTARTS:
                for asked in pending:
                    on_cell(asked, _lost(CellStatus.SKIPPED, f"skipped: {MAX_RESTARTS} fresh "
                                         "launches ended early"), None)
                return

    def _ended(self, job: Job, job_id: int | None, on_end: OnEnd, why: str | None) -> None:
        job.kill()
        self.live = None
        on_end(job_id, why)


def _lost(status: CellStatus, why: str) -> CellResult:
    """A cell the simulation could not take."""
    return CellResult(status, why, None, [])


def _bad_algorithm(log: Path) -> None:
    """SMPI aborts at start on an algorithm name it does not know, listing those it does."""
    said = log.read_text(errors="replace") if log.exists() else ""
    for line in said.splitlines():
        if "has no algorithm" in line:
            raise ArenaError(f"--algorithm: {line.split('] ', 1)[-1].strip()}")


def _incomplete(e: JobError, log: Path) -> str:
    """A launch that ended before its answer: SMPI says why on stderr (a CRITICAL line, such
    as its deadlock detection) and may still exit 0."""
    said = log.read_text(errors="replace") if log.exists() else ""
    critical = [ln.split("] ", 1)[-1].split("/CRITICAL] ", 1)[-1].strip()
                for ln in said.splitlines() if "CRITICAL]" in ln]
    why = critical[0] if critical else str(e)
    if "exit status 0" in str(e):
        return f"incomplete smpirun output (it exited 0 without finishing the cell): {why}"
    return f"{why} ({e})" if critical else why


def simulate(sim: SimGrid, build: SimulatedBuild, request: Request, store: Store,
             command_line: str, advance: Callable[[str], None]) -> tuple[int, RunStatus]:
    """Every model's cells at every rank count into a new run of the store; Ctrl-C ends it
    incomplete, with what was simulated kept."""
    impl_id = f"smpi-{sim.version}"
    record = SimulatedSettings(
        benchmarks=request.benchmarks, sizes=request.sizes, nps=request.nps,
        observations=request.observations, launches=1, sync=request.sync,
        timeout=request.timeout, topology=request.topology(sim), simgrid=sim.version,
        link=request.link.label(), factors=tuple(request.factors.cfg()),
        ranks_per_node=request.ranks_per_node, computation=request.computation,
        models={f"{impl_id}:{m.name}": m.title() for m in request.models})
    with store.new_run(RunStart(RunKind.SIMULATED, SIMULATED_SUITE, command_line, record)) as run:
        store.add_implementation(ImplementationRecord(
            run_id=run.id, impl_id=impl_id, family="smpi", version=sim.version,
            version_string=f"{sim.title} SMPI (simulated)", origin="simgrid", prefix="",
            wrapper=str(sim.smpicc), launcher=str(sim.smpirun), wrapper_flags="",
            cflags=build.cflags))
        for m in request.models:
            store.add_variant(VariantRecord(run_id=run.id, variant=f"{impl_id}:{m.name}",
                                            impl_id=impl_id, name=m.name, env={},
                                            args=request.cfg(m), binding="simulated"))
        cells = [(b, s if BENCHMARKS[b].sized else 0) for b in request.benchmarks
                 for s in (request.sizes if BENCHMARKS[b].sized else (0,))]
        simulator = Simulator(sim, build, request)
        recorder = _Recorder(store, run.id, advance)
        try:
            for np in request.nps:
                for m in request.models:
                    recorder.now(f"{impl_id}:{m.name}", np, request.topology(sim, m))
                    simulator.run(np, m, cells, recorder.started, recorder.done,
                                  recorder.ended)
        finally:
            simulator.close()
    return run.id, run.status


class _Recorder:
    """Writes one model's launches and cells at one rank count into the run, in turn."""

    def __init__(self, store: Store, run_id: int, advance: Callable[[str], None]):
        self.store, self.run_id, self.advance = store, run_id, advance
        self.seq = 0
        self.variant, self.np, self.topology = "", 0, ""

    def now(self, variant: str, np: int, topology: str) -> None:
        self.variant, self.np, self.topology = variant, np, topology

    def started(self, job: Job) -> int:
        return self.store.add_job(JobRow(run_id=self.run_id, variant=self.variant, np=self.np,
                                         topology=self.topology, binding="simulated",
                                         command=job.argv))

    def done(self, asked: CellRequest, res: CellResult, job_id: int | None) -> None:
        cell = asked.cell
        self.advance(f"{self.variant} {cell.bench} {cell.size} B, {cell.np} ranks")
        self.store.add_cell(res.row(asked, run_id=self.run_id, job_id=job_id,
                                    variant=self.variant, seq=self.seq), res.observations)
        self.seq += 1

    def ended(self, job_id: int | None, why: str | None) -> None:
        if job_id is not None:
            self.store.update_job(job_id, status=JobStatus.OK if why is None else
                                  JobStatus.FAILED, reason=why)


def bare_pingpong(sim: SimGrid, build: SimulatedBuild, link: Link, sizes: list[int],
                  timeout: float) -> dict[int, float]:
    """size -> the simulated one-way pingpong on the bare link (factors 1) at 2 ranks, not
    stored: the harness's offset that calibration subtracts."""
    request = Request(("pingpong",), tuple(sizes), (2,), (Model("default"),), link,
                      observations=1, timeout=timeout)
    out: dict[int, float] = {}
    simulator = Simulator(sim, build, request)

    def done(asked: CellRequest, res: CellResult, _job: int | None) -> None:
        if res.status != CellStatus.OK:
            raise ArenaError(f"the bare-link pingpong of {asked.cell.size} B failed under "
                             f"smpirun: {res.reason}")
        out[asked.cell.size] = BENCHMARKS["pingpong"].observation(res.observations[0].per_rank)

    try:
        simulator.run(2, request.models[0], [("pingpong", s) for s in sizes],
                      lambda _job: None, done)
    finally:
        simulator.close()
    return out
