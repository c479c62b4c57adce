"""The exact command and environment that start np ranks of a built core for one variant,
and the daemons (lamd, pvmd) that a variant's jobs share for one rank count."""

from __future__ import annotations

import os
from pathlib import Path

from ..impls import family_of
from ..impls.base import Runtime
from ..plan import Variant
from ..users import RankUser
from .cleanup import OWNER_VAR, RUN_VAR
from .job import Job, JobError


def base_env(variant: Variant, np: int, as_root: bool, run_token: str) -> dict[str, str]:
    impl = variant.impl
    launch = family_of(impl).launch(impl, np, variant.binding_for(np), as_root)
    env = impl.environ()
    env.update(launch.env)
    env.update(variant.env)
    env[RUN_VAR] = run_token
    env[OWNER_VAR] = str(os.getpid())
    return env


class Daemons:
    """The runtimes of the variants of one round: started on first use, stopped on demand."""

    def __init__(self, workdir: Path, user: RankUser | None, run_token: str):
        self.workdir, self.user, self.run_token = workdir, user, run_token
        self.up: dict[tuple[str, int], tuple[Runtime, dict[str, str]]] = {}

    def env_for(self, variant: Variant, np: int) -> dict[str, str]:
        """What the variant's launcher needs from its daemons, starting them if need be."""
        key = (variant.id, np)
        if key not in self.up:
            env = base_env(variant, np, _as_root(self.user), self.run_token)
            runtime = family_of(variant.impl).runtime(variant.impl, np, self.workdir, self.user,
                                                      env)
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


def job_for(variant: Variant, np: int, binary: Path, workdir: Path, user: RankUser | None,
            log: Path, daemons: Daemons) -> tuple[Job, str]:
    """A job (not started yet, its daemons up) and the binding it really has."""
    impl = variant.impl
    binding = variant.binding_for(np)
    launch = family_of(impl).launch(impl, np, binding, _as_root(user))
    env = base_env(variant, np, _as_root(user), daemons.run_token)
    env.update(daemons.env_for(variant, np))
    argv = [*launch.argv, *variant.args, str(binary)]
    return Job(argv, env, workdir, user, log), launch.binding or binding
