"""The exact command and environment that start np ranks of a built core for one variant,
and the daemons (lamd, pvmd) that a variant's jobs share for one rank count."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..base import core_env
from ..base.errors import ArenaError
from ..base.records import Datatype
from ..base.tags import OWNER_VAR, RUN_VAR
from ..base.users import RankUser
from ..cluster.placement import Placement
from ..impls import family_of
from ..impls.base import Launch, Runtime
from ..launchers import launcher_for
from ..platform.plan import Variant
from ..system.owners import Owner
from .job import Job, JobError

Placer = Callable[[int], Placement | None]  # np -> where the ranks go; None: this machine


def _place(placer: Placer, np: int) -> Placement | None:
    try:
        return placer(np)
    except ArenaError as e:  # e.g. more ranks than the hosts have slots: this rank count fails
        raise JobError(str(e)) from e


def _launch(variant: Variant, np: int, placement: Placement | None, as_root: bool) -> Launch:
    try:
        return launcher_for(placement).command(family_of(variant.impl), variant.impl, np,
                                               variant.binding_for(np), as_root)
    except ArenaError as e:  # this family cannot run on this cluster: it fails, others go on
        raise JobError(str(e)) from e


def base_env(variant: Variant, np: int, as_root: bool, run_token: str,
             placement: Placement | None = None) -> dict[str, str]:
    env = variant.impl.environ()
    # set for every family, empty unless a variant or mpiarena's own environment plants a
    # fault: families whose launcher or rank 0 passes on only named variables name it
    env.setdefault(core_env.FAULT, "")
    env.update(_launch(variant, np, placement, as_root).env)
    env.update(variant.env)
    env[RUN_VAR] = run_token
    env[OWNER_VAR] = str(Owner.me())
    return env


class Daemons:
    """The runtimes of the variants of one round: started on first use, stopped on demand."""

    def __init__(self, workdir: Path, user: RankUser | None, run_token: str,
                 placer: Placer = lambda _: None):
        self.workdir, self.user, self.run_token, self.placer = workdir, user, run_token, placer
        self.up: dict[tuple[str, int], tuple[Runtime, dict[str, str]]] = {}

    def env_for(self, variant: Variant, np: int) -> dict[str, str]:
        """What the variant's launcher needs from its daemons, starting them if need be."""
        key = (variant.id, np)
        if key not in self.up:
            placement = _place(self.placer, np)
            env = base_env(variant, np, _as_root(self.user), self.run_token, placement)
            runtime = family_of(variant.impl).runtime(variant.impl, np, self.workdir, self.user,
                                                      env, launcher_for(placement).over_ssh())
            if runtime is None:
                return {}
            try:
                self.up[key] = (runtime, runtime.up(env))
            except RuntimeError as e:
                raise JobError(str(e)) from e
        return self.up[key][1]

    def stop(self, variant_id: str) -> None:
        for key in [k for k in self.up if k[0] == variant_id]:
            self.up.pop(key)[0].down()

    def stop_all(self) -> None:
        for key in list(self.up):
            self.up.pop(key)[0].down()


def _as_root(user: RankUser | None) -> bool:
    return os.geteuid() == 0 and user is None


@dataclass(frozen=True)
class Command:
    """What starts np ranks of a program: the launcher's argv, its environment, and where the
    ranks go (None: this machine)."""

    argv: list[str]
    env: dict[str, str]
    placement: Placement | None
    binding: str


def command_for(variant: Variant, np: int, program: list[str], user: RankUser | None,
                daemons: Daemons) -> Command:
    """The launcher argv and env that start np ranks of any program where the daemons' placer
    puts them, its daemons up."""
    placement = _place(daemons.placer, np)
    launch = _launch(variant, np, placement, _as_root(user))
    env = base_env(variant, np, _as_root(user), daemons.run_token, placement)
    env.update(daemons.env_for(variant, np))
    return Command([*launch.argv, *variant.args, *program], env, placement,
                   launch.binding or variant.binding_for(np))


def job_for(variant: Variant, np: int, binary: Path, log: Path, daemons: Daemons,
            datatype: Datatype | None = None) -> tuple[Job, str]:
    """A job of the core (not started yet, its daemons up) in the daemons' directory as their
    user, and the binding it really has; `datatype` the element type of its sums (None: the
    core's own, int)."""
    workdir, user = daemons.workdir, daemons.user
    cmd = command_for(variant, np, [str(binary)], user, daemons)
    # a variant may name another directory (another file system) for the MPI-IO benchmarks
    io = dict(variant.env).get(core_env.IO_DIR) or str(io_dir(workdir, user))
    env = {**cmd.env, core_env.IO_DIR: io}
    if cmd.placement is None:  # on this machine, whose devices start_up_env looked at
        for key, value in family_of(variant.impl).start_up_env(variant.impl).items():
            env.setdefault(key, value)
    if datatype is not None:
        env[core_env.DATATYPE] = datatype.value
    return Job(cmd.argv, env, workdir, user, log, cmd.placement), cmd.binding


def io_dir(workdir: Path, user: RankUser | None) -> Path:
    """Where the core's MPI-IO benchmarks make their files: in the run's scratch directory, so
    they go with it (the watchdog's sweep too, when mpiarena is killed), the ranks' own."""
    io = workdir / "io"
    if not io.exists():
        io.mkdir(mode=0o700)
        if user is not None:
            os.chown(io, user.uid, user.gid)
    return io
