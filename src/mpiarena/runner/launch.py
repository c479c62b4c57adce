"""The exact command and environment that start np ranks of a built core for one variant."""

from __future__ import annotations

import os
from pathlib import Path

from ..impls import family_of
from ..plan import Variant
from ..users import RankUser
from .job import Job


def job_for(variant: Variant, np: int, binary: Path, workdir: Path, user: RankUser | None,
            log: Path) -> tuple[Job, str]:
    """A job (not started yet) and the binding it asks for."""
    impl = variant.impl
    binding = variant.binding_for(np)
    as_root = os.geteuid() == 0 and user is None
    launch = family_of(impl).launch(impl, np, binding, as_root)
    env = impl.environ()
    env.update(launch.env)
    env.update(variant.env)
    argv = [*launch.argv, *variant.args, str(binary)]
    return Job(argv, env, workdir, user, log), binding
