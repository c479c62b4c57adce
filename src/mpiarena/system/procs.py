"""Run a short command synchronously, possibly as the rank user, output to a log file."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypedDict

from ..base.users import RankUser


class UserArgs(TypedDict, total=False):
    """Popen's arguments for the user and groups a process runs as."""

    user: int
    group: int
    extra_groups: list[int]


class Head(Protocol):
    """Where a command can be put on a cluster's head node (a cluster's Placement)."""

    @property
    def enter(self) -> tuple[str, ...]: ...

    def on_head(self, argv: list[str], cwd: Path) -> list[str]: ...


@dataclass(frozen=True)
class RunWith:
    """What a command runs with: its environment, its directory, the user it runs as (None:
    as ourselves) and the log its output is appended to."""

    env: dict[str, str]
    cwd: Path
    user: RankUser | None
    log: Path


def as_user(user: RankUser | None, placement: Head | None) -> UserArgs:
    """Popen arguments that start a process as the rank user (on a cluster's head node, the
    entering command switches user itself, so the process starts as root)."""
    if user is None or (placement is not None and placement.enter):
        return {}
    return {"user": user.uid, "group": user.gid, "extra_groups": []}


def run_as(argv: list[str], using: RunWith, timeout: float = 30.0,
           placement: Head | None = None) -> int:
    """Exit status of argv, output appended to the log (daemons it starts then keep no pipe of
    ours)."""
    if placement is not None:
        argv = placement.on_head(argv, using.cwd)
    with open(using.log, "a") as out:
        try:
            return subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                  env=_user_env(using.env, using.user), cwd=using.cwd,
                                  timeout=timeout,
                                  **as_user(using.user, placement)).returncode
        except subprocess.TimeoutExpired:
            return -1
        except OSError as e:
            out.write(f"cannot run {argv[0]}: {e}\n")
            return -1


def start_as(argv: list[str], using: RunWith) -> subprocess.Popen[bytes] | None:
    """argv started on this machine as run_as would run it; None (said in the log) if it
    cannot start."""
    with open(using.log, "a") as out:
        try:
            return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                    env=_user_env(using.env, using.user), cwd=using.cwd,
                                    **as_user(using.user, None))
        except OSError as e:
            out.write(f"cannot run {argv[0]}: {e}\n")
            return None


def _user_env(env: dict[str, str], user: RankUser | None) -> dict[str, str]:
    if user is None:
        return env
    return {**env, "HOME": user.home, "USER": user.name, "LOGNAME": user.name}


def last_words(log: Path) -> str:
    """The last meaningful line a log holds."""
    try:
        lines = [ln.strip(" =-") for ln in log.read_text(errors="replace").splitlines()]
    except OSError:
        return "no log"
    lines = [ln for ln in lines if ln]
    return lines[-1][:200] if lines else "nothing"


def wait_until(done: Callable[[], bool], within: float, step: float = 0.01) -> bool:
    """Poll done() until it holds or `within` seconds pass; whether it held."""
    deadline = time.monotonic() + within
    while not done():
        if time.monotonic() >= deadline:
            return False
        time.sleep(step)
    return True


def alive(pid: int) -> bool:
    """True while pid exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")
