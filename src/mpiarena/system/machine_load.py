"""What ran beside mpiarena: the CPU that processes not its own and the VM's hypervisor (steal)
took from this machine over a span of time, read from /proc.

mpiarena's own processes are its process and every descendant of it or of a process whose
environment names it as owner (the daemons a run starts daemonise, and start ranks of their
own). A process reaped during the span brings all its CPU into its parent's cutime/cstime, so
the short-lived children of a long-lived process (a build's compilers) count too. What a process
gone during the span had used before it began is taken off the reaped-children CPU that its
nearest ancestor still there gained, never off anything else: a parent that ignores SIGCHLD, or
an orphan's reaper that keeps no count, gains none, and then hides nothing of what others took.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from ..base import machine
from ..base.tags import OWNER_VAR
from .owners import Owner

HZ = os.sysconf("SC_CLK_TCK")
BUSY = 0.10  # share of the machine taken by others above which a launch was interfered with
PROBE = 0.5  # seconds --wait-quiet watches the machine before it calls it quiet


@dataclass(frozen=True)
class Interference:
    """What a launch shared its machine with: CPU seconds of other processes and of steal over
    wall seconds on `cores` processors; the 1-minute load average before it began; how long
    --wait-quiet waited for a quiet machine first and whether it gave up."""

    other_cpu_s: float
    steal_s: float
    wall_s: float
    cores: int
    load_before: float
    waited_s: float = 0.0
    gave_up: bool = False
    runs_beside: int = 0  # other mpiarena runs measuring on this machine when it began

    @property
    def share(self) -> float:
        """Share of the machine's CPU time that went to others while the launch ran."""
        capacity = self.wall_s * self.cores
        return (self.other_cpu_s + self.steal_s) / capacity if capacity > 0 else 0.0


@dataclass(frozen=True)
class Quiet:
    """What --wait-quiet did before a launch: seconds waited, and whether it gave up."""

    waited_s: float = 0.0
    gave_up: bool = False


@dataclass(frozen=True)
class Proc:
    """A process as /proc/PID/stat tells it: its CPU seconds (utime + stime) and those of its
    children it reaped (cutime + cstime)."""

    pid: int
    ppid: int
    start: int  # clock ticks after boot: with the pid, one process for good
    own: float
    reaped: float

    @property
    def key(self) -> tuple[int, int]:
        return self.pid, self.start


@dataclass(frozen=True)
class Snapshot:
    """The machine at one moment: each other process by (pid, start time), steal seconds, the
    1-minute load average, and how the wait for a quiet machine before it went."""

    at: float
    others: dict[tuple[int, int], Proc]
    steal: float
    load: float
    quiet: Quiet = Quiet()
    runs: int = 0  # other mpiarena runs measuring


def _proc(entry: Path) -> Proc | None:
    try:
        fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None  # gone meanwhile
    own, reaped = (int(fields[i]) + int(fields[i + 1]) for i in (11, 13))
    return Proc(int(entry.name), int(fields[1]), int(fields[19]), own / HZ, reaped / HZ)


def _tagged(pid: int, needle: bytes) -> bool:
    try:
        return needle in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False


def _others(me: Owner) -> list[Proc]:
    """Every process that is neither mpiarena's process nor one it (or its daemons) started."""
    procs = {p.pid: p for e in Path("/proc").iterdir() if e.name.isdigit()
             if (p := _proc(e)) is not None}
    needle = f"{OWNER_VAR}={me}".encode()
    own: dict[int, bool] = {}

    def is_own(pid: int) -> bool:
        if pid not in own:
            p = procs.get(pid)
            own[pid] = p is not None and (pid == me.pid or _tagged(pid, needle) or (
                p.ppid > 1 and is_own(p.ppid)))
        return own[pid]

    return [p for p in procs.values() if not is_own(p.pid)]


def _stat() -> tuple[float, float]:
    """Steal seconds since boot, and the 1-minute load average."""
    cpu = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    steal = int(cpu[8]) / HZ if len(cpu) > 8 else 0.0
    return steal, float(Path("/proc/loadavg").read_text().split()[0])


def snapshot(quiet: Quiet = Quiet(), runs: int = 0) -> Snapshot:
    """The machine now, as this process sees it, after `quiet`, with `runs` other mpiarena
    runs measuring."""
    others = {p.key: p for p in _others(Owner.me())}
    steal, load = _stat()
    return Snapshot(time.monotonic(), others, steal, load, quiet, runs)


def _heir(gone: Proc, by_pid: dict[int, Proc], now: Snapshot) -> tuple[int, int] | None:
    """The nearest ancestor (by_pid: the processes before) of a process gone since then that
    is still there now: the one whose reaped children's CPU holds the gone process's, if any."""
    parent = by_pid.get(gone.ppid)
    while parent is not None and parent.key not in now.others and parent.ppid != parent.pid:
        parent = by_pid.get(parent.ppid)
    return parent.key if parent is not None and parent.key in now.others else None


def _taken(before: Snapshot, now: Snapshot) -> float:
    """CPU seconds others took from `before` to `now`: what each process used itself, and what
    the children it reaped had used since `before`."""
    counted: dict[tuple[int, int], float] = {}  # gone processes' CPU that `before` already held
    by_pid = {p.pid: p for p in before.others.values()}
    for gone in before.others.values():
        if gone.key not in now.others and (heir := _heir(gone, by_pid, now)) is not None:
            counted[heir] = counted.get(heir, 0.0) + gone.own + gone.reaped
    taken = 0.0
    for key, proc in now.others.items():
        own, reaped = (was.own, was.reaped) if (was := before.others.get(key)) else (0.0, 0.0)
        taken += max(0.0, proc.own - own) + max(0.0, proc.reaped - reaped - counted.get(key, 0.0))
    return taken


def since(before: Snapshot) -> Interference:
    """What others took from the machine between `before` and now."""
    now = snapshot()
    return Interference(_taken(before, now), max(0.0, now.steal - before.steal),
                        now.at - before.at, machine.cores(), before.load,
                        before.quiet.waited_s, before.quiet.gave_up, before.runs)


def wait_quiet(within: float, busy: float = BUSY, probe: float = PROBE) -> Quiet:
    """Watch the machine `probe` seconds at a time until others take less than `busy` of it,
    for at most `within` seconds in all (none: no wait)."""
    began = time.monotonic()
    while within > 0:
        before = snapshot()
        time.sleep(probe)
        if since(before).share < busy:
            return Quiet(time.monotonic() - began, False)
        if time.monotonic() - began + probe > within:
            return Quiet(time.monotonic() - began, True)
    return Quiet()
