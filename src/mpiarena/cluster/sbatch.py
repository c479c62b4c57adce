"""Submit a batch script with sbatch and follow its job: squeue while it is queued or running,
then scontrol (while the controller remembers the job, MinJobAge) or sacct (where accounting
keeps it) for its final state, Slurm's reason and exit code."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..base.errors import ArenaError

ENDED = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED",
         "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "UNKNOWN")
LOST_AFTER = 30  # consecutive squeue failures before the controller counts as gone
ANSWER_IN = 60.0  # seconds one Slurm command may take


@dataclass(frozen=True)
class JobState:
    """A job as Slurm reports it: its state, the reason Slurm gives (None when it gives none),
    its exit code (status:signal, once ended) and where it runs."""

    job: int
    state: str  # PENDING, RUNNING, COMPLETING, COMPLETED, FAILED, CANCELLED, TIMEOUT...
    reason: str = "None"
    exit_code: str = ""
    nodes: str = ""

    @property
    def ended(self) -> bool:
        return self.state in ENDED

    @property
    def completed(self) -> bool:
        return self.state == "COMPLETED"

    @property
    def exit_status(self) -> int | None:
        """The batch script's exit status when it exited itself (no signal), else None."""
        status, _, signal = self.exit_code.partition(":")
        return int(status) if status.isdigit() and signal in ("", "0") else None

    def describe(self) -> str:
        """One line: 'job 12: RUNNING on n1', or once ended e.g.
        'job 12: TIMEOUT (Reason=TimeLimit, ExitCode=130:0)'."""
        where = f" on {self.nodes}" if self.nodes and self.state == "RUNNING" else ""
        if self.ended:
            said = [f"Reason={self.reason}", f"ExitCode={self.exit_code or '?'}"]
        else:
            said = [] if self.reason in ("", "None") else [f"Reason={self.reason}"]
        return f"job {self.job}: {self.state}{where}" + (f" ({', '.join(said)})" if said else "")


def tool(name: str) -> str:
    """The Slurm command `name`; ArenaError when it is not on PATH."""
    found = shutil.which(name)
    if found is None:
        raise ArenaError(f"--sbatch needs {name} on PATH: apt-get install slurm-client, or load "
                         "your site's Slurm module")
    return found


def _said(tool: str, stderr: str) -> str:
    """A Slurm tool's complaint in one line: its first error and its fatal line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line.split("error: ", 1)[1] for line in lines if "error: " in line]
    fatal = [line.split("fatal: ", 1)[1] for line in lines if "fatal: " in line]
    said = list(dict.fromkeys(errors[:1] + fatal[:1])) or lines[-1:] or ["no message"]
    return f"{tool}: {'; '.join(said)}"


def _hint(said: str) -> str:
    low = said.lower()
    if "partition" in low:
        return "; 'sinfo -s' lists the partitions"
    if "node configuration is not available" in low:
        return "; ask fewer ranks (--np) or more nodes (--nodes)"
    if any(w in low for w in ("controller", "configuration", "config", "slurm.conf")):
        return "; is slurmctld running and SLURM_CONF right? ('scontrol ping' says)"
    return ""


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=ANSWER_IN,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        raise ArenaError(f"{Path(argv[0]).name} did not answer in {ANSWER_IN:.0f} s; is "
                         "slurmctld running? ('scontrol ping' says)") from e


def submit(script: Path) -> int:
    """Submit `script`; its job id, or ArenaError with sbatch's own complaint in one line."""
    conf = os.environ.get("SLURM_CONF")
    if conf and not Path(conf).is_file():
        raise ArenaError(f"SLURM_CONF={conf} is not a file; point it at your cluster's "
                         "slurm.conf (or unset it)")
    done = _run([tool("sbatch"), "--parsable", str(script)])
    first = done.stdout.strip().split(";")[0]
    if done.returncode != 0 or not first.isdigit():
        said = _said("sbatch", done.stderr or done.stdout)
        raise ArenaError(f"{said}{_hint(said)}")
    return int(first)


def queued(job: int) -> JobState | str | None:
    """The job as squeue lists it; None once squeue no longer does (it ended); squeue's
    complaint when it could not answer."""
    done = _run([tool("squeue"), "-h", "-j", str(job), "-o", "%T|%r|%N"])
    if done.returncode != 0:
        if "invalid job id" in done.stderr.lower():
            return None
        return _said("squeue", done.stderr)
    lines = done.stdout.strip().splitlines()
    if not lines:
        return None
    state, reason, nodes = [*lines[0].split("|"), "", ""][:3]
    return JobState(job, state, reason or "None", nodes=nodes)


def _fields(text: str) -> dict[str, str]:
    """scontrol's one-line KEY=VALUE record (values hold no spaces but Command's may)."""
    return dict(p.split("=", 1) for p in text.split() if "=" in p)


def final(job: int) -> JobState:
    """How the job ended: from scontrol while the controller remembers it, else from sacct,
    else UNKNOWN with why."""
    shown = _run([tool("scontrol"), "show", "-o", "job", str(job)])
    if shown.returncode == 0 and "JobState=" in shown.stdout:
        f = _fields(shown.stdout)
        return JobState(job, f["JobState"], f.get("Reason", "None"), f.get("ExitCode", ""),
                        f.get("NodeList", ""))
    sacct = shutil.which("sacct")
    if sacct is not None:
        listed = _run([sacct, "-n", "-P", "-X", "-j", str(job),
                       "-o", "State,Reason,ExitCode,NodeList"])
        rows = listed.stdout.strip().splitlines() if listed.returncode == 0 else []
        if rows:
            state, reason, code, nodes = [*rows[0].split("|"), "", "", ""][:4]
            return JobState(job, state.split()[0], reason or "None", code, nodes)
    return JobState(job, "UNKNOWN", "the controller forgot the job (MinJobAge) and sacct has "
                    "no accounting to ask")


def pause(waited: float) -> float:
    """Seconds between two polls after `waited` seconds of following: a quarter second at first,
    so that a short job's end shows at once, spacing out to 1 s after 20 s and 10 s after 4.4
    minutes, sparing the controller of a long queue."""
    return min(10.0, 0.25 + waited / 27)


def follow(job: int, changed: Callable[[JobState], None]) -> JobState:
    """Poll the job until it ends, calling `changed` with each new state; its final state."""
    last: JobState | None = None
    failures = 0
    start = time.monotonic()
    while True:
        now = queued(job)
        if isinstance(now, str):
            failures += 1
            if failures >= LOST_AFTER:
                raise ArenaError(f"lost the Slurm controller while following job {job} ({now});"
                                 f" the job may still run: squeue -j {job}")
        elif now is None or now.ended:
            end = final(job)
            changed(end)
            return end
        else:
            failures = 0
            if last is None or (now.state, now.reason) != (last.state, last.reason):
                changed(now)
            last = now
        time.sleep(pause(time.monotonic() - start))


def cancel(job: int) -> None:
    """scancel the job (Slurm sends its processes SIGTERM, then SIGKILL after KillWait)."""
    done = _run([tool("scancel"), str(job)])
    if done.returncode != 0:
        raise ArenaError(_said("scancel", done.stderr))
