"""`mpiarena program`: your own MPI program, built against every library, launched, judged."""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

import click

from ..base import paths, users
from ..base.errors import ArenaError
from ..base.status import RunStatus
from ..cluster.topology import Where, opened
from ..impls import Implementation, discover, family_of, parse_user_impls, select
from ..model.programs import Metric
from ..platform.build import build_core
from ..platform.plan import Variant
from . import grouping, placing, stores, sweeping
from .consoles import console, err
from .durations import DURATION, DURATION_HELP
from .exit_status import Exit
from .stores import db_option
from .suite_options import ONE_RANK_COUNT, impl_option


@dataclass(frozen=True)
class Launches:
    """How the program is launched and judged."""

    np: int
    launches: int
    warmup: int
    timeout: float
    metrics: tuple[Metric, ...]
    profile: bool
    seed: int


@dataclass(frozen=True)
class LaunchOptions:
    """--np, --launches, --warmup, --timeout, --metric, --higher, --no-profile and --seed as
    given."""

    np_: tuple[int, ...]
    launches: int
    warmup: int
    timeout: float
    metric: tuple[str, ...]
    higher: tuple[str, ...]
    no_profile: bool
    seed: int | None

    def parse(self) -> Launches:
        """The options checked, as how the program is launched and judged."""
        if self.launches < 1 or self.warmup < 0:
            raise ArenaError("--launches must be 1 or more and --warmup 0 or more")
        metrics = tuple(Metric.parse(m, frozenset(self.higher)) for m in self.metric)
        unknown = set(self.higher) - {m.name for m in metrics}
        if unknown:
            raise ArenaError(f"--higher {', '.join(sorted(unknown))}: no --metric of that name")
        if len({m.name for m in metrics}) != len(metrics):
            raise ArenaError("two --metric options share a name; give each its own")
        return Launches(self.np_[0], self.launches, self.warmup, self.timeout, metrics,
                        not self.no_profile, self.seed if self.seed is not None else 0)


def _bins(specs: tuple[str, ...]) -> dict[str, Path]:
    out = {}
    for spec in specs:
        impl_id, sep, path = spec.partition("=")
        if not sep or not impl_id or not path:
            raise ArenaError(f"--bin {spec!r}: give ID=PATH, e.g. --bin "
                             "mpich-4.0.2=/usr/bin/NPmpich2")
        out[impl_id] = Path(path)
    return out


def _mpi_only(impls: list[Implementation], named: bool) -> list[Implementation]:
    """The MPI libraries among impls; one the user named that is not MPI is an error."""
    others = [i.id for i in impls if not family_of(i).pmpi]
    if others and named:
        raise ArenaError(f"{', '.join(others)}: not an MPI library, 'program' runs MPI programs; "
                         "leave it out of --impl")
    chosen = [i for i in impls if family_of(i).pmpi]
    if not chosen:
        raise ArenaError("no MPI library to run the program with; run 'mpiarena doctor'")
    return chosen


def _tuning(tune: bool, budget: float, search: tuple[str, ...], directory: str | None,
            how: Launches) -> frozenset[str] | None:
    """--tune's options checked: the settings --search names (None: the profile decides)."""
    # here, not at the top: ~6 ms more start-up for every command
    from ..analysis.program_tuning_space import check_search

    if not tune:
        if search:
            raise ArenaError("--search goes with --tune")
        if directory:
            raise ArenaError("--dir goes with --tune: the directory for the winners' files")
        return None
    if not how.profile:
        raise ArenaError("--tune needs the profiled launch (its space comes from the profile): "
                         "leave out --no-profile")
    if budget <= 0:
        raise ArenaError("--tune needs a --budget, e.g. --budget 20m")
    return check_search(tuple(n.strip() for s in search for n in s.split(",") if n.strip()))


@click.command("program", cls=grouping.Sectioned, context_settings={"ignore_unknown_options": True})
@impl_option("libraries to compare (default: every MPI library found, or those of --bin)")
@click.option("--src", type=click.Path(file_okay=False), help="the program's source directory: "
              "copied once per library, --build runs in the copy")
@click.option("--build", help="shell command that builds it, with $MPICC, $MPICXX, $MPIFC and "
              "PATH set for each library, e.g. 'make CC=$MPICC'")
@click.option("--bin", "bins", multiple=True, help="ID=PATH: a binary built for library ID "
              "(repeat per library); PROGRAM then holds only its arguments")
@grouping.grouped(
    "how", lambda **given: LaunchOptions(**given).parse(),
    click.option("--np", "np_", type=ONE_RANK_COUNT, default="2", show_default=True,
                 help="ranks per launch: one rank count (a program run compares libraries at one)"),
    click.option("--launches", default=10, show_default=True,
                 help="timed launches per library (the statistics' unit)"),
    click.option("--warmup", default=0, show_default=True,
                 help="launches per library run first and discarded"),
    click.option("--timeout", default="600s", show_default=True, type=DURATION,
                 help=f"how long one launch may take before it is killed ({DURATION_HELP}); "
                 "600s: a whole program runs far longer than a benchmark's cell"),
    click.option("--metric", multiple=True, help="NAME=REGEX: a figure the program prints, the "
                 "regex's first group the number (last match); lower is better"),
    click.option("--higher", multiple=True, help="NAME: that metric is better higher (a rate)"),
    click.option("--no-profile", is_flag=True, help="skip the profiled launch per library"),
    click.option("--seed", type=int, help="seed of the interleaving order"),
    title="How it is launched and judged")
@placing.where_options(
    cluster="an emulated cluster, e.g. emulated:nodes=2,link=1gbit",
    hosts="a real cluster: one host per line (this machine first)",
    slurm="inside a Slurm allocation: ranks start with srun")
@click.option("--tune", is_flag=True, help="instead: race each library's settings for the "
              "collectives and calls the profile shows, verify the winners against the default "
              "(--launches fresh launches each)")
@click.option("--budget", type=DURATION, default="20m", show_default=True,
              help=f"with --tune: time for all its launches ({DURATION_HELP})")
@click.option("--search", "search", multiple=True, help="with --tune: only these settings, "
              "e.g. allreduce,binding (allreduce bcast reduce allgather alltoall eager binding)")
@click.option("--dir", "directory", type=click.Path(file_okay=False),
              help="with --tune: directory for each verified winner's files (an environment "
              "file, Open MPI's rules file)")
@db_option
@click.argument("program", nargs=-1, type=click.UNPROCESSED)
def program_cmd(impl_specs: tuple[str, ...], src: str | None, build: str | None,
            bins: tuple[str, ...], how: Launches, where: Where, tune: bool, budget: float,
            search: tuple[str, ...], directory: str | None, db: str,
            program: tuple[str, ...]) -> None:
    """Build your MPI program against each library, launch it interleaved, judge its wall time
    and figures: mpiarena program [--src DIR --build CMD | --bin ID=PATH ...] -- PROGRAM ARGS
    (PROGRAM may be one .c/.cc/.f90 source, compiled with each library's wrapper); --tune
    finds each library's best settings for it."""
    # here, not at the top: ~90 ms more start-up for every command
    from ..platform.program_build import BuildRequest, build_programs
    from ..report.program import render
    from ..runner.program import ProgramMeasure, ProgramRun, measure_program
    from ..runner.session import RunContext

    if (src is None) != (build is None):
        raise ArenaError("--src and --build go together: --src DIR --build 'make CC=$MPICC'")
    if not program and not bins:
        raise ArenaError("no program; use: mpiarena program [options] -- PROGRAM ARGS")
    only = _tuning(tune, budget, search, directory, how)
    by_bin = _bins(bins)
    ids, user_prefixes = parse_user_impls(impl_specs)
    found = discover(user_prefixes, paths.impls_dir())
    known = {f.name for f in found if f.impl is not None}
    unknown = sorted(set(by_bin) - known)
    if unknown:
        raise ArenaError(f"--bin {unknown[0]}: no such implementation here; known: "
                         f"{', '.join(sorted(known))}")
    impls = _mpi_only(select(found, ids or list(by_bin)), bool(ids or by_bin))
    sweeping.sweep()
    warn = lambda line: err.print(f"[yellow]warning:[/] {line}", soft_wrap=True)  # noqa: E731
    programs = build_programs(impls, BuildRequest(list(program), Path(src) if src else None,
                                                  build, by_bin), warn)
    cores = {i.id: build_core(i) for i in impls if i.id in programs}
    variants = [Variant(i.id, i) for i in impls if i.id in programs]
    settings = ProgramMeasure(how.np, how.launches, how.warmup, how.timeout, how.metrics,
                           how.profile, how.seed)
    recorded: dict[str, object] = {"program": list(program), "build": build or "",
                                   "src": str(Path(src).resolve()) if src else ""}
    measured = ProgramRun(variants, programs, cores, settings)
    if tune:
        # here, not at the top: ~50 ms more start-up for every command
        from ..runner.program_tuning import TuneSettings
        from .program_tuning import tune_program_run

        tune_program_run(measured, TuneSettings(budget, settings.launches, only, output=directory),
                         where, db, recorded)
        return
    with opened(where) as topology:
        store = stores.store(db)
        rank_user = None if where.slurm else users.for_ranks()
        context = RunContext(store, rank_user, shlex.join(["mpiarena", *sys.argv[1:]]), err,
                             err.print)
        outcome = measure_program(measured, context, topology, recorded)
    # here, not at the top: ~9 ms more start-up for every command
    from ..analysis.program import analyze

    result = analyze(store, outcome.run_id)
    render(result, console)
    if outcome.status == RunStatus.INCOMPLETE:
        err.print(f"interrupted: run {outcome.run_id} kept what was measured (marked incomplete)")
        sys.exit(Exit.INTERRUPTED)
    if not any(result.figure("wall").values.values()):  # one line, saying where to look
        err.print(f"mpiarena: failed: the program failed in every timed launch (run "
                  f"{outcome.run_id} keeps them): 'mpiarena show --launch-output' prints what it "
                  "said", soft_wrap=True, markup=False)
        sys.exit(Exit.FAILED)
    stores.say_stored(db, [outcome.run_id])
