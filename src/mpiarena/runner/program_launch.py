"""One launch of any MPI program through its library's launcher: wall time from start to exit,
exit status, output to files; everything it started is gone when it returns."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from ..base.errors import ArenaError
from ..base.tags import TOKEN_VAR
from ..base.users import RankUser
from ..model.profiled import Calls, Profile
from ..system.procs import as_user
from .cleanup import kill_tagged
from .launch import Command


@dataclass(frozen=True)
class Ended:
    """How a launch ended: its exit status (None: killed at the timeout) and wall seconds from
    the launcher's start to its exit."""

    exit_code: int | None
    wall: float

    @property
    def timed_out(self) -> bool:
        return self.exit_code is None


@dataclass(frozen=True)
class OutputFiles:
    """The files a launch's stdout and stderr go to (the same file: both into one)."""

    stdout: Path
    stderr: Path


def launch(cmd: Command, cwd: Path, user: RankUser | None, output: OutputFiles,
           timeout: float) -> Ended:
    """Run the launcher's command in cwd as the rank user, output to the files, at most
    `timeout` seconds; the process group and every tagged process are killed on return."""
    token = uuid.uuid4().hex
    env = {**cmd.env, TOKEN_VAR: token}
    if user is not None:
        env.update(HOME=user.home, USER=user.name, LOGNAME=user.name)
    placement = cmd.placement
    argv = cmd.argv if placement is None else placement.on_head(cmd.argv, cwd)
    with contextlib.ExitStack() as files:
        out = files.enter_context(open(output.stdout, "w"))
        err = out if output.stderr == output.stdout else \
            files.enter_context(open(output.stderr, "w"))
        began = time.monotonic()
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    cwd=cwd, env=env, start_new_session=True,
                                    **as_user(user, placement))
        except OSError as e:
            raise ArenaError(f"cannot start {argv[0]}: {e}") from e
    try:
        code: int | None = proc.wait(timeout)
        wall = time.monotonic() - began
    except subprocess.TimeoutExpired:
        code, wall = None, time.monotonic() - began
    finally:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)
        kill_tagged(token, grace=0.2)
    return Ended(code, wall)


def read_profile(impl_id: str, out: Path, np: int) -> Profile:
    """Every rank's calls and seconds per MPI function, as the PMPI library wrote them."""
    result: Profile = {}
    for rank in range(np):
        path = out / f"rank-{rank}.tsv"
        if not path.exists():
            raise ArenaError(f"{impl_id}: rank {rank} wrote no profile: the interposition did not "
                             "happen (is the program dynamically linked with this implementation "
                             "and does it call MPI_Finalize?)")
        rows = (line.split("\t") for line in path.read_text().splitlines() if line)
        result[rank] = {name: Calls(int(calls), float(secs)) for name, calls, secs in rows}
    return result
