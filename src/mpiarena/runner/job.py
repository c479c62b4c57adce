"""One launched job of the measurement core: start it, hand it cells, read raw lines, stop it."""

from __future__ import annotations

import contextlib
import math
import os
import queue
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Literal, overload

from ..base import core_env
from ..base.records import CellRequest, CellRow
from ..base.status import CellStatus
from ..base.tags import RUN_VAR, TOKEN_VAR
from ..base.users import RankUser
from ..cluster.placement import Placement
from ..model.whatran import Cvar
from ..store import Obs
from ..system.procs import as_user
from . import crash
from .cleanup import kill_tagged


class JobError(Exception):
    """The job died, hung or said something we cannot read; the message says which."""


@dataclass(frozen=True)
class RankInfo:
    rank: int
    host: str
    pid: int
    cpus: str
    init_seconds: float
    since_launch: float
    numa: int = -1  # the NUMA node it ran on at start-up; -1: unknown (or an older core)


@dataclass(frozen=True)
class Hello:
    family: str
    np: int
    tick: float
    thread_level: str
    resolution: float
    version: str
    ranks: list[RankInfo]


class ConfigAnswer(StrEnum):
    """The core's answer to `config` (kernels/driver.c): control variables follow, or the
    library has no tool interface to list them."""

    OK = "ok"
    UNAVAILABLE = "unavailable"


@dataclass(frozen=True)
class Reported:
    """What the core answered to `config`: the library's control variables, or None and why."""

    cvars: tuple[Cvar, ...] | None
    why: str


@dataclass(frozen=True)
class CoreSpent:
    """Rank 0's seconds in one cell, as the core counted them."""

    calibrating: float = 0.0  # warm-up and calibration steps
    observing: float = 0.0  # observation steps, their barriers and relays included
    timed: float = 0.0  # the observations' timed calls: iterations x time per iteration


@dataclass(frozen=True)
class CellResult:
    """What a job answered for a cell (or why it gave no answer)."""

    status: CellStatus  # as the core said (ok, na, invalid), or why the harness had none
    reason: str
    iterations: int | None
    observations: list[Obs]
    spent: CoreSpent = CoreSpent()

    def row(self, asked: CellRequest, *, run_id: int, job_id: int | None, variant: str,
            seq: int, launch: int = 0) -> CellRow:
        """The cell's row as the store keeps it (its observations aside)."""
        cell = asked.cell
        return CellRow(run_id=run_id, job_id=job_id, variant=variant, bench=cell.bench,
                       size=cell.size, np=cell.np, iterations=self.iterations,
                       status=self.status, reason=self.reason or None, seq=seq, launch=launch,
                       timing=asked.timing)


@contextlib.contextmanager
def unreadable(line: str) -> Iterator[None]:
    """JobError for a line that should be the core's but does not parse as its lines do (a
    library or launcher printing on the core's stdout, a core of another version)."""
    try:
        yield
    except (ValueError, IndexError) as e:
        raise JobError(f"the job printed a line mpiarena cannot read: {line[:120]!r}") from e


def cell_command(asked: CellRequest, cell_id: int, calibrated: int | None = None) -> str:
    """The control line that asks the core for a cell (commands.c's arena_parse_cmd)."""
    cell = asked.cell
    hint = f" k={calibrated}" if calibrated else ""
    return (f"cell id={cell_id} bench={cell.bench} size={cell.size} obs={asked.observations} "
            f"target={asked.target_time!r} max={asked.max_time!r} window={asked.window} "
            f"offcache={int(asked.offcache)} validate={int(asked.validate)} "
            f"hold={asked.hold_time!r} sync={asked.timing}{hint}\n")


class Job:
    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path, user: RankUser | None,
                 log: Path, placement: Placement | None = None):
        self.argv = placement.on_head(argv, cwd) if placement else argv
        self.placement = placement
        self.token = uuid.uuid4().hex
        self.env = {**env, TOKEN_VAR: self.token}
        if user is not None:
            self.env.update(HOME=user.home, USER=user.name, LOGNAME=user.name)
        self.cwd, self.user, self.log = cwd, user, log
        self.proc: subprocess.Popen[str] | None = None
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.launched = 0.0
        self.np = 0  # ranks, from the core's hello
        self.lingering = False  # every rank finalized, the launcher still runs (quit's linger)
        self.other: list[str] = []  # what the job printed on stdout before the core's lines
        self.version = ""  # the library's own words, from the core's hello

    # --- life cycle ----------------------------------------------------------------------
    def start(self, timeout: float) -> Hello:
        self.launched = time.time()
        self.env[core_env.T0] = repr(self.launched)
        with open(self.log, "w") as err:
            try:
                self.proc = subprocess.Popen(
                    self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                    text=True, bufsize=1, cwd=self.cwd, env=self.env, start_new_session=True,
                    **as_user(self.user, self.placement))
            except OSError as e:
                raise JobError(f"cannot start {self.argv[0]}: {e}") from e
        threading.Thread(target=self._read, daemon=True).start()
        deadline = time.monotonic() + timeout
        hello = self._expect("hello", deadline)
        with unreadable(hello):
            head = hello.split("\t")
            np = self.np = int(head[2])
            tick, level, resolution = float(head[3]), head[4], float(head[5])
        version = self._expect("version", deadline)
        with unreadable(version):
            said = self.version = core_env.unescape(version.split("\t", 1)[1])
        ranks = [self._rank(self._expect("rank", deadline)) for _ in range(np)]
        return Hello(head[1], np, tick, level, resolution, said, ranks)

    def quit(self, timeout: float, linger: float | None = None) -> tuple[list[float], float]:
        """Ask the ranks to finalize; every rank's MPI_Finalize seconds and launch-to-exit time.
        With `linger`, return once every rank has finalized and the launcher has not exited
        within `linger` seconds after (LAM's mpirun waits half a second in select before it
        exits: measured here, 0.5 s of every LAM launch); `lingering` then says so, the time is
        NaN, and `reap` checks the exit later."""
        self._send("quit\n")
        deadline = time.monotonic() + timeout
        finalize: dict[int, float] = {}
        while linger is None or len(finalize) < self.np:
            line = self._line(deadline, eof_ok=True)
            if line is None:
                break
            parts = line.split("\t")
            if parts[0] == "finalize" and len(parts) == 3:  # ranks' lines may interleave
                with contextlib.suppress(ValueError):
                    finalize[int(parts[1])] = float(parts[2])
        assert self.proc is not None
        wait = deadline - time.monotonic() if linger is None else min(
            linger, deadline - time.monotonic())
        try:
            code = self.proc.wait(max(0.01, wait))
        except subprocess.TimeoutExpired as e:
            if linger is None or len(finalize) < self.np:
                raise JobError(f"the job did not exit within {timeout:.0f} s after quit") from e
            self.lingering = True
            return [finalize[r] for r in sorted(finalize)], math.nan
        ended = time.time() - self.launched
        if code != 0:
            raise JobError(self._death(code))
        return [finalize[r] for r in sorted(finalize)], ended

    def exited(self) -> bool:
        return self.proc is not None and self.proc.poll() is not None

    def reap(self, timeout: float) -> None:
        """A lingering launcher's exit, waited for up to `timeout` seconds: JobError if it did not
        exit in time or exited with a failure."""
        assert self.proc is not None
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired as e:
            raise JobError(f"its launcher did not exit within {timeout:.0f} s after every rank "
                           "finalized") from e
        self.lingering = False
        if code != 0:
            raise JobError(self._death(code))

    def kill(self) -> None:
        """Stop the job and everything it started, whatever state it is in."""
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        kill_tagged(self.token, grace=0.2)
        if self.proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(5)
            if self.proc.stdin:  # stdout stays with the reader thread, which ends at its EOF
                with contextlib.suppress(OSError):
                    self.proc.stdin.close()

    def config(self, timeout: float) -> Reported:
        """The library's control variables as rank 0 reads them, outside any cell."""
        self._send("config\n")
        deadline = time.monotonic() + timeout
        cvars: list[Cvar] = []
        while True:
            parts = self._line(deadline).split("\t")
            if parts[0] == "cvar" and len(parts) == 4:
                cvars.append(Cvar(*(core_env.unescape(p) for p in parts[1:])))
            elif parts[0] == "config" and len(parts) >= 3:
                with unreadable("\t".join(parts)):
                    answer = ConfigAnswer(parts[1])
                if answer == ConfigAnswer.OK:
                    return Reported(tuple(cvars), "")
                return Reported(None, core_env.unescape(parts[2]))
            elif parts[0] == "error":
                raise JobError(f"the core rejected a command: {parts[1:]}")

    # --- cells ---------------------------------------------------------------------------
    def cell(self, asked: CellRequest, cell_id: int, timeout: float,
             calibrated: int | None = None) -> CellResult:
        """One cell, numbered `cell_id` in the core's lines; `calibrated` the iteration count
        an earlier launch calibrated for it, where calibration starts."""
        try:
            return self._cell(asked, cell_id, timeout, calibrated)
        except JobError as e:
            raise JobError(self._explained(str(e), asked)) from e

    def _cell(self, asked: CellRequest, cell_id: int, timeout: float,
              calibrated: int | None) -> CellResult:
        self._send(cell_command(asked, cell_id, calibrated))
        # the timeout bounds a cell; the cpu benchmark also holds hold_time per observation
        held = asked.hold_time * asked.observations if asked.cell.bench == "cpu" else 0.0
        deadline = time.monotonic() + timeout + held
        observations: list[Obs] = []
        iterations = None
        spent = CoreSpent()
        while True:
            line = self._line(deadline)
            with unreadable(line):
                parts = line.split("\t")
                if parts[0] == "spent" and int(parts[1]) == cell_id and len(parts) == 5:
                    spent = CoreSpent(*(float(x) for x in parts[2:]))
                elif parts[0] == "obs" and int(parts[1]) == cell_id:
                    iterations = int(parts[3])
                    observations.append(Obs(int(parts[2]), [float(x) for x in parts[4:]]))
                elif parts[0] == "extra" and int(parts[1]) == cell_id and observations:
                    observations[-1].extras[parts[3]] = [float(x) for x in parts[4:]]
                elif parts[0] == "done" and int(parts[1]) == cell_id:
                    return CellResult(CellStatus(parts[2]), parts[3] if len(parts) > 3 else "",
                                      iterations, observations, spent)
            if parts[0] == "error":
                raise JobError(f"the core rejected a command: {parts[1:]}")

    # --- plumbing ------------------------------------------------------------------------
    def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def _send(self, text: str) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write(text)
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError, OSError) as e:
            raise JobError(self._death(self.proc.poll())) from e

    @overload
    def _line(self, deadline: float, eof_ok: Literal[False] = False) -> str: ...

    @overload
    def _line(self, deadline: float, eof_ok: bool) -> str | None: ...

    def _line(self, deadline: float, eof_ok: bool = False) -> str | None:
        try:
            line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty as e:
            raise JobError("no answer within the timeout: a rank hangs, or the machine is "
                           "oversubscribed; raise --timeout or use fewer ranks") from e
        if line is None:
            if eof_ok:
                return None
            assert self.proc is not None
            try:
                code = self.proc.wait(5)
            except subprocess.TimeoutExpired:
                code = None
            raise JobError(self._death(code))
        return line

    def _expect(self, tag: str, deadline: float) -> str:
        while True:
            line = self._line(deadline)
            if line.split("\t", 1)[0] == tag:
                return line
            self.other.append(line)

    @staticmethod
    def _rank(line: str) -> RankInfo:
        p = line.split("\t")
        numa = int(p[7]) if len(p) > 7 and p[7].lstrip("-").isdigit() else -1
        with unreadable(line):
            return RankInfo(int(p[1]), p[2], int(p[3]), p[4], float(p[5]), float(p[6]), numa)

    def _death(self, code: int | None) -> str:
        """Why the job ended, from its exit status and a dying rank's report (kernels/crash.c),
        else the launcher's last words."""
        text = self.log.read_text(errors="replace")
        status = f"exit status {code}" if code is not None else "still running"
        if (died := crash.read(text, self._binary())) is not None:
            return f"the job ended ({status}): {died.line()}"
        said = [ln.strip(" =") for ln in text.splitlines() if ln.strip(" =-")]
        last = said[-1][:200] if said else "nothing on stderr"
        return f"the job ended ({status}); the launcher said: {last}"

    def _binary(self) -> Path | None:
        """The core's binary in the job's argv."""
        return next((Path(a) for a in self.argv if Path(a).name == "arena"), None)

    def _explained(self, why: str, asked: CellRequest) -> str:
        """why, and where a rank died inside the library, the reproducer written for it."""
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return why
        died = crash.read(text, self._binary())
        if died is None or not died.in_library:
            return why
        binary = self._binary()
        launcher = tuple(self.argv[:self.argv.index(str(binary))]) if binary else ()
        what = crash.Reproduced(self.version, launcher, asked, tuple(self.env.items()))
        path = crash.write_reproducer(died, what, self.env.get(RUN_VAR) or self.token)
        return why if path is None else f"{why}; a reproducer: {path}"
