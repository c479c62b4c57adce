"""The per-call profiler: run any MPI program with the PMPI library preloaded and read each
rank's calls and time per MPI function."""

from __future__ import annotations

import os
import shutil
import uuid
from dataclasses import replace
from pathlib import Path

from ..base import core_env
from ..base.errors import ArenaError
from ..base.users import RankUser
from ..impls import Implementation, family_of
from ..model.profiled import Profile
from ..platform.build import build_pmpi, compile_with
from ..platform.plan import Variant
from ..system.procs import last_words
from .cleanup import owned_scratch
from .job import JobError
from .launch import Daemons, command_for
from .program_launch import OutputFiles, launch, read_profile


def _program(argv: list[str]) -> list[str]:
    if not argv:
        raise ArenaError("no program to profile; use: mpiarena profile --impl ID -- PROGRAM ARGS")
    found = shutil.which(argv[0]) if "/" not in argv[0] else argv[0]
    if found is None or not os.access(found, os.X_OK) or not Path(found).is_file():
        raise ArenaError(f"program '{argv[0]}' not found or not executable; give its path")
    return [str(Path(found).resolve()), *argv[1:]]


def profile(targets: list[Implementation] | list[Variant], np: int, program: list[str],
            user: RankUser | None, build: Path | None = None,
            timeout: float = 120.0) -> dict[str, Profile]:
    """Every implementation's (or variant's: its environment applies) profile of the program
    at np ranks; with build, the program is that C source compiled with each implementation's
    wrapper, and program its arguments."""
    if np < 1:
        raise ArenaError(f"--np must be 1 or more, got {np}")
    if build is not None and not build.is_file():
        raise ArenaError(f"--compile {build}: no such file")
    variants = [t if isinstance(t, Variant) else Variant(t.id, t) for t in targets]
    for v in variants:
        if not family_of(v.impl).pmpi:
            raise ArenaError(f"{v.impl.id} is not an MPI library: the profiler interposes MPI "
                             "calls only; leave it out")
    if build is None:
        program = _program(program)
    scratch = owned_scratch("profile")
    try:
        scratch.chmod(0o777)
        built: dict[str, list[str]] = {}  # compiled once per implementation, not per variant
        for impl in {v.impl.id: v.impl for v in variants}.values():
            if build is not None:
                binary = compile_with(impl, [build.resolve()],
                                      scratch / f"{build.stem}-{impl.slug}")
                built[impl.id] = [str(binary), *program]
        return {v.id: _profile_one(v, np, built.get(v.impl.id, program), user, scratch, timeout)
                for v in variants}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _profile_one(variant: Variant, np: int, program: list[str], user: RankUser | None,
                 scratch: Path, timeout: float) -> Profile:
    impl = variant.impl
    work = scratch / variant.id.replace(":", "-")
    out = work / "profile"
    out.mkdir(parents=True)
    for d in (work, out):
        d.chmod(0o777)
    library = build_pmpi(impl)
    daemons = Daemons(work, user, uuid.uuid4().hex)  # LAM's launch exports LD_PRELOAD and
    log = work / "launcher.log"                      # the profile directory
    try:
        cmd = command_for(variant, np, program, user, daemons)
        env = {**cmd.env, "LD_PRELOAD": str(library), core_env.PROFILE_DIR: str(out)}
        ended = launch(replace(cmd, env=env), work, user, OutputFiles(log, log), timeout)
    except JobError as e:
        raise ArenaError(f"{variant.id}: {e}") from e
    finally:
        daemons.stop_all()
    if ended.timed_out:
        raise ArenaError(f"the program did not end within {timeout:.0f} s; raise --timeout")
    if ended.exit_code != 0:
        raise ArenaError(f"{variant.id}: the program failed (exit status {ended.exit_code}): "
                         f"{last_words(log)}")
    return read_profile(impl.id, out, np)
