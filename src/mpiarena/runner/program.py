"""`mpiarena program`'s measurement: launches of the user's program through each library's launcher,
interleaved across libraries, each one's wall time, exit status, output and figures of merit
kept; then one profiled launch per library, apart from the timed ones."""

from __future__ import annotations

import contextlib
import random
import shlex
import shutil
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from ..base import core_env
from ..base.errors import ArenaError
from ..base.records import RunKind
from ..base.status import LaunchStatus
from ..base.tags import RUN_VAR
from ..base.users import RankUser
from ..cluster.topology import Topology
from ..model.programs import OUTPUT_KEPT, BuiltProgram, LaunchKind, Metric, ProgramLaunch, RankCalls
from ..model.runs import APP_SUITE, ProgramSettings, RunStart
from ..platform.build import Build, build_pmpi, build_start_fixes
from ..platform.plan import Variant
from ..store import Store
from ..system import machine_load
from ..system.procs import last_words
from . import presence
from .cleanup import kill_tagged, owned_scratch
from .job import JobError
from .launch import Daemons, command_for
from .program_launch import Ended, OutputFiles, launch, read_profile
from .session import Outcome, RunContext, progress_bar, register


@dataclass(frozen=True)
class ProgramMeasure:
    """How the program is measured."""

    np: int
    launches: int  # timed launches of each library
    warmup: int = 0  # launches of each library run first and not judged
    timeout: float = 600.0  # seconds one launch may take
    metrics: tuple[Metric, ...] = ()
    profile: bool = True  # one profiled launch per library, first, apart from the timed ones
    seed: int = 0  # the interleaving order


@dataclass(frozen=True)
class ProgramRun:
    """What a program run launches: each library's variant, the program built against each, the
    cores built (their version strings), and how it is measured."""

    variants: list[Variant]
    programs: dict[str, BuiltProgram]  # implementation -> the program built against it
    builds: dict[str, Build]
    settings: ProgramMeasure

    def recorded(self, topology: Topology, user: RankUser | None,
                 given: Mapping[str, Any]) -> ProgramSettings:
        """The run's settings record (`given`: its fields from the command line)."""
        s = self.settings
        return ProgramSettings(np=s.np, launches=s.launches, warmup=s.warmup,
                               timeout=s.timeout, profile=s.profile, metrics=s.metrics,
                               topology=topology.label,
                               ranks_run_as=user.name if user else "self",
                               programs=dict(self.programs), **given)


def _tail(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    return data[-OUTPUT_KEPT:].decode(errors="replace")


class ProgramRunner:
    """The launches of one program run; nothing it started outlives run()."""

    def __init__(self, measured: ProgramRun, store: Store, run_id: int, topology: Topology,
                 user: RankUser | None, advance: Callable[[str], None]):
        self.variants, self.programs = measured.variants, measured.programs
        self.settings = measured.settings
        # implementation id -> the version string it was built with
        self.versions = {k: b.version_string for k, b in measured.builds.items()}
        self.store, self.run_id, self.topology, self.user = store, run_id, topology, user
        self.advance = advance
        self.count: dict[str, int] = {}
        self.run_token = uuid.uuid4().hex

    def run(self) -> None:
        with self.session():
            if self.settings.profile:  # first: it also checks which library really runs
                for v in self.variants:
                    self.launch(v, "profiled")
            rng = random.Random(self.settings.seed)
            for kind, rounds in (("warmup", self.settings.warmup),
                                 ("timed", self.settings.launches)):
                for _ in range(rounds):
                    order = list(self.variants)
                    rng.shuffle(order)
                    for v in order:
                        self.launch(v, kind)

    @contextlib.contextmanager
    def session(self) -> Iterator[None]:
        """The launches' scratch, preloads and daemons; nothing started outlives it."""
        work = owned_scratch("app")
        work.chmod(0o755)
        self.work = work
        self.daemons = Daemons(work, self.user, self.run_token, self.topology.placement)
        impls = {v.impl.id: v.impl for v in self.variants}
        # what each launch preloads, built (or found cached: a hash of their sources) once
        self.fixes = {i: build_start_fixes(impl) for i, impl in impls.items()}
        self.profiler = {i: build_pmpi(impl) for i, impl in impls.items()} \
            if self.settings.profile else {}
        try:
            for p in self.programs.values():
                self.topology.prepare(Path(p.argv[0]))
            yield
        finally:
            self.daemons.stop_all()
            self.topology.reap()
            kill_tagged(self.run_token, var=RUN_VAR)
            shutil.rmtree(work, ignore_errors=True)

    def launch(self, variant: Variant, kind: str) -> ProgramLaunch:
        """One launch of the variant (kind: timed, warmup, profiled, or a tuning race's), as
        stored."""
        s = self.settings
        index = self.count.get(variant.id, 0)
        self.count[variant.id] = index + 1
        self.advance(f"{variant.id} {kind} launch {index}")
        here = self.work / f"{variant.id.replace(':', '-')}-{index}"
        here.mkdir()
        here.chmod(0o777)
        out, err, profile_dir = here / "stdout", here / "stderr", here / "profile"
        program = self.programs[variant.impl.id].argv
        base = ProgramLaunch(variant.id, s.np, index, LaunchKind(kind), LaunchStatus.FAILED, "",
                             None, float("nan"))
        before = machine_load.snapshot(runs=len(presence.others_measuring()))
        try:
            cmd = command_for(variant, s.np, program, self.user, self.daemons)
        except JobError as e:
            self.daemons.stop(variant.id)
            return self._store(replace(base, reason=f"its launcher or daemons did not start: {e}"))
        env = {**cmd.env, core_env.PROFILE_DIR: ""}
        if kind == "profiled":
            profile_dir.mkdir()
            profile_dir.chmod(0o777)
            env.update(LD_PRELOAD=str(self.profiler[variant.impl.id]),
                       **{core_env.PROFILE_DIR: str(profile_dir)})
        elif (fixes := self.fixes[variant.impl.id]) is not None:
            env["LD_PRELOAD"] = str(fixes)  # what the core and the profiler carry too
        try:
            ended = launch(replace(cmd, env=env), here, self.user, OutputFiles(out, err), s.timeout)
        except ArenaError as e:
            return self._store(replace(base, reason=str(e), command=shlex.join(cmd.argv)))
        beside = asdict(machine_load.since(before))
        stdout, stderr = _tail(out), _tail(err)
        metrics = {m.name: v for m in s.metrics if (v := m.read(stdout + "\n" + stderr))
                   is not None}
        status, reason = _status(ended, s.timeout, err)
        calls: list[RankCalls] = []
        if kind == "profiled" and status == LaunchStatus.OK:
            try:
                prof = read_profile(variant.impl.id, profile_dir, s.np)
                calls = [RankCalls(rank, name, c.calls, c.seconds)
                         for rank, per in prof.items() for name, c in per.items()]
            except ArenaError as e:
                status, reason = LaunchStatus.FAILED, str(e)
            version = profile_dir / "version.txt"
            if version.exists():
                self._check_version(variant, version.read_text(errors="replace"))
        if status != LaunchStatus.OK:
            self.daemons.stop(variant.id)  # a failed launch may leave its daemons unusable
        stored = self._store(replace(base, status=status, reason=reason,
                                        exit_code=ended.exit_code, wall=ended.wall,
                                        metrics=metrics, stdout=stdout, stderr=stderr,
                                        command=shlex.join(cmd.argv), interference=beside))
        if calls:
            self.store.add_program_calls(stored.id, calls)
        return stored

    def _check_version(self, variant: Variant, seen: str) -> None:
        """The library that ran must be the one the program was built for."""
        expected = self.versions.get(variant.impl.id, "")
        if expected and seen.replace("\0", " ").split() != expected.split():
            raise ArenaError(f"{variant.id}: the program ran with another library than "
                             f"{variant.impl.id}: it reported {seen.strip()[:80]!r}, expected "
                             f"{expected.strip()[:80]!r}; check its rpath and LD_LIBRARY_PATH")

    def _store(self, launch_: ProgramLaunch) -> ProgramLaunch:
        return replace(launch_, id=self.store.add_program_launch(self.run_id, launch_))


def _status(ended: Ended, timeout: float, err: Path) -> tuple[LaunchStatus, str]:
    if ended.timed_out:
        return (LaunchStatus.TIMEOUT,
                f"did not end within {timeout:.0f} s (killed); raise --timeout")
    if ended.exit_code != 0:
        return LaunchStatus.FAILED, f"exit status {ended.exit_code}: {last_words(err)}"
    return LaunchStatus.OK, ""


def measure_program(measured: ProgramRun, context: RunContext, topology: Topology,
                recorded: Mapping[str, object]) -> Outcome:
    """Every launch into a new run of the store; Ctrl-C ends it as incomplete, never lost
    (`recorded`: fields of its settings record from the command line)."""
    settings, store = measured.settings, context.store
    record = measured.recorded(topology, context.rank_user, recorded)
    start = RunStart(RunKind.PROGRAM, APP_SUITE, context.command, record, settings.seed)
    total = len(measured.variants) * (settings.warmup + settings.launches + int(settings.profile))
    with store.new_run(start) as run:
        register(store, run.id, measured.builds, measured.variants)
        with progress_bar(context.progress_to) as progress:
            task = progress.add_task("starting", total=total)
            runner = ProgramRunner(measured, store, run.id, topology, context.rank_user,
                               lambda what: progress.update(task, advance=1, description=what))
            with presence.measuring(context.command, topology.label):
                runner.run()
    return Outcome(run.id, run.status)
