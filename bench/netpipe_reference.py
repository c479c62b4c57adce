#!/usr/bin/env python3
"""NetPIPE reference: mpiarena's pingpong against NetPIPE's own binaries, same session.

For LAM/MPI (usysv and tcp RPIs), PVM (direct routing) and raw TCP, the script alternates, round
by round, one real `mpiarena run --bench pingpong --sizes 1,1M` (a temporary suite declares the
variants lam-7.1.4:tcp and pvm-3.4.6:direct) with Debian's NetPIPE 3.7.2 binaries for the same
transports (NPlam under a lamboot'ed universe, NPpvm against a pvmd of its own, NPtcp), each run
once at 1 B and once at 1 MiB. LAM and PVM are booted exactly as mpiarena boots them (its own
LamUniverse and PvmDaemon classes), as the rank user when run as root.

What each side reports (both: half the round trip, one message buffer each way):
- mpiarena: per launch the median of its observations (each a loop of k ping-pongs / k / 2,
  max over ranks 0 and 1), k chosen so a loop lasts >= --target-time (1 ms by default).
- NetPIPE: per launch the minimum over its trials (3 in Debian's build, which lacks -DFINAL) of
  a loop lasting about 0.1 s, timed on the transmitter with gettimeofday; send and receive share
  one buffer. np.out columns are bytes, "Mbps" = bits / t / 2^20 (binary megabits) and t in
  seconds with 8 decimals; t is recomputed from the Mbps column, which has more digits.
- NPpvm packs with PvmDataInPlace (pvm_initsend(2) in the binary; NetPIPE's netpipe.h default)
  and sets PvmRouteDirect: the variant `direct` uses ARENA_PVM_ENCODING=inplace to match.

Per transport and size, the verdict holds the median over rounds of mpiarena's figure against
the median over rounds of NetPIPE's: ratio within 1 +- tolerance (0.10). Bandwidth is decimal
Mbit/s = 8 * size / t on both sides. Checks printed beside it: mpiarena's best observation
(closest to NetPIPE's minimum statistic) and the ratio paired by round. Exit status 1 if any
verdict fails or a transport has fewer than --min-rounds rounds measured on either side.

Traps handled here:
- LAM 7.1.4's MPI_Init fails at random ("The selected RPI failed to initialize"; strace shows a
  writev to lamd getting EFAULT from an uninitialised zero-length iovec; with ASLR off it did
  not happen in 10 launches, with it 7 in 10 did), and mpirun then waits forever. A NetPIPE
  launch that does this is seen in mpirun's output, killed with its universe (and the SysV IPC
  its lam-registry lists) and relaunched; mpiarena notices only by its silence timeout and
  reports the job skipped, so that round's mpiarena run is repeated for the missing variants.
- Blocking transports (TCP, LAM tcp, PVM) on 2 vCPUs are bimodal at 1 B: about 8 us when the
  two ranks share a vCPU, 25-40 us when each wake-up crosses to the other one. mpiarena binds
  its ranks one per core (ARENA_BIND), so it always measures the second mode; NetPIPE's binaries
  are not bound and land where the scheduler puts them: per-round figures are printed so that
  the two modes can be told apart from a real difference.
- Other sessions' jobs on this shared machine: before each launch the script waits (up to
  --quiet-wait) for no other MPI/LAM/PVM/NetPIPE process and idle CPUs, and counts the
  launches where that did not happen.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from common import fmt_t
from harness_overhead import TAG, clean_up, foreign_mpi, mpiarena_argv, run, tagged_pids

from mpiarena.base import users
from mpiarena.base.users import RankUser
from mpiarena.impls.lam import LamUniverse
from mpiarena.impls.pvm import PvmDaemon
from mpiarena.store import Store
from mpiarena.store.results import load
from mpiarena.system.procs import RunWith, last_words, run_as

SIZES = (1, 1 << 20)
LAM_ID, PVM_ID = "lam-7.1.4", "pvm-3.4.6"
LAM_BIN = NP_BIN = Path("/usr/bin")
NP_TIMEOUT = 60.0  # one NetPIPE launch at one size takes 1-3 s here
TRIES = 8  # launches of one NetPIPE measurement before giving up on it (LAM: see above)
ARENA_TRIES = 4  # mpiarena runs per round while a transport's cells come back empty
QUIET_BUSY = 0.10  # CPU busy fraction (of both cores) below which the machine counts as quiet


@dataclass(frozen=True)
class Transport:
    name: str  # as printed
    variant: str  # mpiarena's variant id
    netpipe: str  # how NetPIPE is run: "lam", "pvm" or "tcp"
    rpi: str = ""  # LAM RPI


TRANSPORTS = (
    Transport("LAM usysv", LAM_ID, "lam", "usysv"),
    Transport("LAM tcp", f"{LAM_ID}:tcp", "lam", "tcp"),
    Transport("PVM direct", f"{PVM_ID}:direct", "pvm"),
    Transport("TCP", "tcp", "tcp"),
)

SUITE = """\
description = "NetPIPE reference: pingpong at 1 B and 1 MiB"
benchmarks = ["pingpong"]
sizes = "1,1M"
np = [2]
observations = {obs}
target_time = {target!r}
max_cell_time = 2.0

[[variant]]   # LAM's default in mpiarena is usysv
impl = "lam"
name = "tcp"
env = {{ LAM_MPI_SSI_rpi = "tcp" }}

[[variant]]   # as NPpvm: PvmRouteDirect, PvmDataInPlace
impl = "pvm"
name = "direct"
env = {{ ARENA_PVM_ROUTE = "direct", ARENA_PVM_ENCODING = "inplace" }}
"""

# /proc/PID/comm of processes that load this machine like ours do
FOREIGN = {"mpiexec", "mpirun", "mpiexec.hydra", "mpiexec.mpich", "mpiexec.openmpi", "orterun",
           "prterun", "prted", "orted", "hydra_pmi_proxy", "arena", "mpirun.lam", "lamd",
           "pvmd", "pvmd3", "pvmgs", "NPtcp", "NPlam", "NPlam2", "NPpvm", "NPmpich2",
           "NPopenmpi", "NPopenmpi2"}
NETPIPE_COMMS = {"lamd", "mpirun.lam", "lamhalt", "lamwipe", "NPlam", "NPpvm", "NPtcp"}


class Hung(Exception):
    """A NetPIPE launch ran past its time or failed in a way a new launch may not."""


@dataclass
class Side:
    """One side's figures per round, half round trips in seconds (None: not measured)."""

    typical: dict[int, list[float | None]] = field(
        default_factory=lambda: {s: [] for s in SIZES})
    best: dict[int, list[float | None]] = field(default_factory=lambda: {s: [] for s in SIZES})
    ks: dict[int, set[int]] = field(default_factory=lambda: {s: set() for s in SIZES})
    notes: list[tuple[str, str]] = field(default_factory=list)  # (what, why) per failure


@dataclass
class Session:
    workdir: Path
    env: dict[str, str]
    user: RankUser | None
    token: str
    quiet_wait: float = 0.0  # seconds to wait for a quiet machine before a launch
    disturbed: int = 0
    launches: int = 0
    waited: float = 0.0

    def as_user(self) -> dict[str, object]:
        if self.user is None:
            return {}
        return {"user": self.user.uid, "group": self.user.gid, "extra_groups": []}

    def user_env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {**self.env, **(extra or {})}
        if self.user is not None:
            env.update(HOME=self.user.home, USER=self.user.name, LOGNAME=self.user.name)
        return env

    def check_foreign(self) -> None:
        """Wait (up to quiet_wait) until no other MPI-like job runs and the CPUs are mostly
        idle; count the launch as disturbed if that did not happen."""
        self.launches += 1
        began = time.monotonic()
        while True:
            quiet = foreign_mpi(self.token, FOREIGN) == 0 and busy_elsewhere(0.3) < QUIET_BUSY
            if quiet or time.monotonic() - began > self.quiet_wait:
                break
            time.sleep(1)
        self.waited += time.monotonic() - began
        self.disturbed += not quiet


def comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def alive(pid: int) -> bool:
    """pid exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def busy_elsewhere(seconds: float = 1.0) -> float:
    """Fraction of all CPU time the machine spent busy over `seconds` (we sleep meanwhile)."""
    def sample() -> tuple[int, int]:
        f = [int(x) for x in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
        return sum(f), f[3] + f[4]  # total, idle + iowait

    t0, i0 = sample()
    time.sleep(seconds)
    t1, i1 = sample()
    return 1 - (i1 - i0) / max(t1 - t0, 1)


def kill_ours(token: str, comms: set[str]) -> None:
    """SIGKILL our processes (tagged with token) whose command is in comms; wait until gone."""
    pids = [p for p in tagged_pids(token) if comm(p) in comms]
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(comm(p) in comms for p in tagged_pids(token)):
        time.sleep(0.02)


# ---------------------------------------------------------------- mpiarena


def run_arena(s: Session, suite: Path, nobs: int, out: dict[str, Side]) -> None:
    """`mpiarena run` of every transport, read back through the store; the implementations
    of transports whose cells came back empty (a LAM job that hung) are run again."""
    db = s.workdir / "arena.db"
    pending = list(TRANSPORTS)
    for _ in range(ARENA_TRIES):
        impls = sorted({t.variant.split(":")[0] for t in pending})
        argv = [*mpiarena_argv(), "run", *(a for i in impls for a in ("--impl", i)),
                "--bench", "pingpong", "--sizes", "1,1M", "--observations", str(nobs),
                "--db", str(db), "--suite", str(suite), "--timeout", "15"]
        s.check_foreign()
        run(argv, s.env, 900)
        store = Store(db)
        try:
            data = load(store, store.resolve("latest"))
        finally:
            store.close()
        missing = []
        for t in pending:
            groups = [data.cells[("pingpong", size, 2)][t.variant] for size in SIZES]
            if bad := [g for g in groups if g.status != "ok" or not g.values]:
                missing.append(t)
                out[t.name].notes.append((f"mpiarena {t.variant}",
                                          f"{bad[0].status}: {bad[0].reason}"))
                continue
            for size, group in zip(SIZES, groups, strict=True):
                out[t.name].typical[size].append(float(np.median(group.array)))
                out[t.name].best[size].append(float(group.array.min()))
                out[t.name].ks[size].add(int(group.iterations or 0))
        if not (pending := missing):
            break
    for t in pending:
        for size in SIZES:
            out[t.name].typical[size].append(None)
            out[t.name].best[size].append(None)


# ---------------------------------------------------------------- NetPIPE


def np_args(size: int, output: Path | None = None) -> list[str]:
    """One message size, no perturbation (NetPIPE's default adds size +- 3)."""
    return ["-l", str(size), "-u", str(size), "-p", "0", *(["-o", str(output)] if output else [])]


def parse_np_out(path: Path, size: int) -> float:
    """Half round trip in seconds at size, from NetPIPE's output file.

    Lines are `bytes Mbps seconds`, Mbps = 8 * bytes / seconds / 2^20; the seconds column has
    8 decimals (10 ns steps, too coarse for shared memory), so t comes from the Mbps column.
    """
    try:
        lines = path.read_text().split("\n")
    except OSError as e:
        raise Hung(f"NetPIPE wrote no output file: {e.strerror}") from None
    for line in lines:
        parts = line.split()
        if len(parts) == 3 and int(parts[0]) == size:
            mbps, secs = float(parts[1]), float(parts[2])
            return 8 * size / (mbps * 2**20) if mbps > 0 else secs
    raise Hung(f"{path.name} has no {size} B line: {lines[:3]}")


def spawn(argv: list[str], s: Session, env: dict[str, str], log: Path) -> subprocess.Popen:
    with open(log, "w") as out:
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env,
                                cwd=s.workdir, start_new_session=True, **s.as_user())


def stop(proc: subprocess.Popen, timeout: float) -> int | None:
    """Wait for proc up to timeout, then kill its process group; its exit status."""
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5)
        return None


def listening(port: int) -> bool:
    """A TCP socket listens on port (any address), per /proc/net/tcp."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                f = line.split()
                if f[3] == "0A" and int(f[1].rsplit(":", 1)[1], 16) == port:
                    return True
    return False


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("", 0))
        return sock.getsockname()[1]


def netpipe_tcp(s: Session, size: int, tag: str) -> float:
    """NPtcp receiver, then the transmitter to 127.0.0.1 on a free port."""
    port, out = free_port(), s.workdir / f"{tag}.out"
    env, rx_log, tx_log = s.user_env(), s.workdir / f"{tag}.rx.log", s.workdir / f"{tag}.tx.log"
    receiver = spawn([str(NP_BIN / "NPtcp"), "-P", str(port), *np_args(size)], s, env, rx_log)
    try:
        deadline = time.monotonic() + 10
        while not listening(port):
            if receiver.poll() is not None or time.monotonic() > deadline:
                raise Hung(f"NPtcp receiver did not listen on {port}: {last_words(rx_log)}")
            time.sleep(0.01)
        code = run_as([str(NP_BIN / "NPtcp"), "-h", "127.0.0.1", "-P", str(port),
                       *np_args(size, out)], RunWith(env, s.workdir, s.user, tx_log),
                      timeout=NP_TIMEOUT)
        if code != 0:
            raise Hung(f"NPtcp transmitter exited {code}: {last_words(tx_log)}")
    finally:
        stop(receiver, 10)
    return parse_np_out(out, size)


def netpipe_lam(s: Session, rpi: str, size: int, tag: str, lam_env: dict[str, str]) -> float:
    """mpirun -ssi rpi RPI -np 2 NPlam in the universe lam_env names.

    A rank whose MPI_Init fails (LAM's RPI start-up: writev to lamd gets EFAULT now and then)
    prints LAM's abort message, and mpirun then waits forever: that is caught from the log.
    """
    out, log = s.workdir / f"{tag}.out", s.workdir / f"{tag}.log"
    mpirun = spawn([str(LAM_BIN / "mpirun.lam"), "-ssi", "rpi", rpi, "-np", "2",
                    str(NP_BIN / "NPlam"), *np_args(size, out)], s, s.user_env(lam_env), log)
    deadline = time.monotonic() + NP_TIMEOUT
    try:
        while (code := mpirun.poll()) is None:
            text = log.read_text(errors="replace")
            if "PID of failed process" in text or time.monotonic() > deadline:
                words = " ".join(ln for ln in text.splitlines() if not ln.startswith("---"))
                why = next((f"{x.strip()}." for x in words.split(".") if "fail" in x),
                           "no answer")
                raise Hung(f"mpirun NPlam ({rpi}) stuck: {why}")
            time.sleep(0.05)
    finally:
        stop(mpirun, 0)
    if code != 0:
        raise Hung(f"mpirun NPlam ({rpi}) exited {code}: {last_words(log)}")
    return parse_np_out(out, size)


def netpipe_pvm(s: Session, size: int, tag: str, pvm_env: dict[str, str]) -> float:
    """NPpvm receiver, then the transmitter (-h: its peer is the only other task)."""
    out, log, rx_log = (s.workdir / f"{tag}{x}" for x in (".out", ".tx.log", ".rx.log"))
    env = s.user_env(pvm_env)
    receiver = spawn([str(NP_BIN / "NPpvm"), *np_args(size)], s, env, rx_log)
    code = -1
    try:
        # the transmitter needs the receiver enrolled first ("Start a clean machine. n=1")
        for _ in range(50):
            time.sleep(0.1)
            code = run_as([str(NP_BIN / "NPpvm"), "-h", "peer", *np_args(size, out)],
                          RunWith(env, s.workdir, s.user, log), timeout=NP_TIMEOUT)
            if code == 0 or "n=1" not in last_words(log) or receiver.poll() is not None:
                break
        if code != 0:
            raise Hung(f"NPpvm transmitter exited {code}: {last_words(log)}")
    finally:
        stop(receiver, 10)
    return parse_np_out(out, size)


def lam_ipc(universe: LamUniverse) -> list[tuple[str, str]]:
    """The SysV IPC objects (kind m|s, id) the universe's ranks registered with it."""
    found = []
    for d in Path("/tmp").glob(f"lam-*-{universe.suffix}"):
        with contextlib.suppress(OSError):
            for line in (d / "lam-registry").read_text().splitlines():
                kind, _, ident = line.partition(" ")
                if kind in ("m", "s") and ident.strip().isdigit():
                    found.append((kind, ident.strip()))
    return found


@contextlib.contextmanager
def lam_booted(s: Session) -> Iterator[dict[str, str]]:
    """A LAM universe booted as mpiarena boots it; on the way out, whatever state it is in,
    halt it, kill what is left of it, remove its session directory and the IPC it registered."""
    universe = LamUniverse(LAM_BIN, 2, s.workdir, s.user, None)
    try:
        env = universe.up(s.env)
    except RuntimeError as e:
        raise Hung(str(e)) from None
    hung = False
    try:
        yield env
    except Hung:
        hung = True
        raise
    finally:
        ipc = lam_ipc(universe)
        if hung:  # a deadlocked lamd would hold lamhalt and lamwipe for their full timeouts
            kill_ours(s.token, NETPIPE_COMMS)
        universe.down()
        kill_ours(s.token, NETPIPE_COMMS)
        for d in Path("/tmp").glob(f"lam-*-{universe.suffix}"):
            shutil.rmtree(d, ignore_errors=True)
        for kind, ident in ipc:  # gone already unless the ranks were killed
            subprocess.run(["ipcrm", f"-{kind}", ident], capture_output=True, check=False)


@contextlib.contextmanager
def pvm_booted(s: Session) -> Iterator[dict[str, str]]:
    daemon = PvmDaemon(s.workdir, s.user, None)
    try:
        env = daemon.up(s.env)
    except RuntimeError as e:
        raise Hung(str(e)) from None
    try:
        yield env
    finally:
        daemon.down()
        kill_ours(s.token, NETPIPE_COMMS)


def measure(s: Session, what: str, side: Side,
            attempt: Callable[[], float]) -> float | None:
    """attempt() up to TRIES times; None (with a note) if every one hangs or fails."""
    for _ in range(TRIES):
        s.check_foreign()
        try:
            return attempt()
        except Hung as e:
            side.notes.append((what, str(e)))
    return None


def run_netpipe(s: Session, rnd: int, out: dict[str, Side], reverse: bool) -> None:
    """Each transport at each size once; LAM and PVM daemons up only while they are needed."""
    def lam(t: Transport, size: int) -> Callable[[], float]:
        def attempt() -> float:
            with lam_booted(s) as env:  # a fresh universe per launch: a hang kills it
                return netpipe_lam(s, t.rpi, size, f"r{rnd}-lam-{t.rpi}-{size}", env)
        return attempt

    def pvm(size: int) -> Callable[[], float]:
        def attempt() -> float:
            with pvm_booted(s) as env:
                return netpipe_pvm(s, size, f"r{rnd}-pvm-{size}", env)
        return attempt

    def tcp(size: int) -> Callable[[], float]:
        return lambda: netpipe_tcp(s, size, f"r{rnd}-tcp-{size}")

    steps = [(t, size) for t in TRANSPORTS for size in SIZES]
    for t, size in reversed(steps) if reverse else steps:
        attempt = lam(t, size) if t.netpipe == "lam" else pvm(size) if t.netpipe == "pvm" \
            else tcp(size)
        what = f"NetPIPE {t.name} {size} B"
        out[t.name].typical[size].append(measure(s, what, out[t.name], attempt))


# ---------------------------------------------------------------- report



def fmt_opt(seconds: float | None) -> str:
    return "-" if seconds is None else fmt_t(seconds)


def mbit(size: int, seconds: float) -> float:
    return 8 * size / seconds / 1e6


def got(values: list[float | None]) -> list[float]:
    return [v for v in values if v is not None]


def per_round(values: list[float | None]) -> str:
    """Every round's figure in one unit, '-' where nothing was measured."""
    unit, scale = ("ns", 1e9) if min(got(values) or [1.0]) < 1e-6 else ("us", 1e6)
    return " ".join("-" if v is None else f"{v * scale:.3g}" for v in values) + f" {unit}"


def report(arena: dict[str, Side], netpipe: dict[str, Side], tol: float,
           min_rounds: int) -> bool:
    lo_ok, hi_ok = 1 - tol, 1 + tol
    big = SIZES[1]
    rows, checks, ok_all = [], [], True
    for t in TRANSPORTS:
        a, n = arena[t.name], netpipe[t.name]
        if min(len(got(x.typical[s])) for x in (a, n) for s in SIZES) < min_rounds:
            rows.append(f"{t.name:<11} fewer than {min_rounds} rounds measured on a side"
                        f"{'':>36}FAIL")
            ok_all = False
            continue
        med = {(w, s): float(np.median(got(x.typical[s])))
               for w, x in (("a", a), ("n", n)) for s in SIZES}
        r_lat = med["a", 1] / med["n", 1]
        bw_a, bw_n = mbit(big, med["a", big]), mbit(big, med["n", big])
        r_bw = bw_a / bw_n
        ok = lo_ok <= r_lat <= hi_ok and lo_ok <= r_bw <= hi_ok
        ok_all &= ok
        rows.append(f"{t.name:<11} {fmt_t(med['a', 1]):>9} {fmt_t(med['n', 1]):>9} {r_lat:6.3f}"
                    f"{'' if lo_ok <= r_lat <= hi_ok else '!':1} {bw_a:10.0f} {bw_n:10.0f}"
                    f" {r_bw:6.3f}{'' if lo_ok <= r_bw <= hi_ok else '!':1}  "
                    f"{'PASS' if ok else 'FAIL'}")
        for size in SIZES:
            pairs = [(x, y) for x, y in zip(a.typical[size], n.typical[size], strict=True)
                     if x is not None and y is not None]
            paired = float(np.median([x / y for x, y in pairs])) if pairs else float("nan")
            best = float(np.median(got(a.best[size]))) / med["n", size]
            what = "1 B" if size == 1 else "1 MiB"
            checks.append(f"  {t.name:<10} {what:>5}: mpiarena {per_round(a.typical[size])}"
                          f" (k {','.join(map(str, sorted(a.ks[size])))}); NetPIPE "
                          f"{per_round(n.typical[size])}\n{'':18}time ratio paired by round "
                          f"{paired:.3f}; mpiarena's best observation / NetPIPE {best:.3f}")
    print(f"\n{'':<11} {'1 B half round trip':^26}   {'1 MiB, Mbit/s (10^6 bit/s)':^29}")
    print(f"{'transport':<11} {'mpiarena':>9} {'NetPIPE':>9} {'ratio':>6}  "
          f"{'mpiarena':>10} {'NetPIPE':>10} {'ratio':>6}")
    print("\n".join(rows))
    print(f"ratio = mpiarena / NetPIPE of the medians over rounds (for 1 MiB, of bandwidths); "
          f"PASS within {lo_ok:.2f}..{hi_ok:.2f}, '!' marks a ratio outside")
    print("per-round half round trips, and time ratios mpiarena/NetPIPE (> 1: mpiarena slower):")
    print("\n".join(checks))
    notes = Counter(note for t in TRANSPORTS for note in arena[t.name].notes +
                    netpipe[t.name].notes)
    if notes:
        print("launches that failed or hung, left out (the next launch of the same took over):")
        print("\n".join(f"  {n} x {what}: {why}" for (what, why), n in notes.items()))
    return ok_all


def stop_arena(token: str) -> None:
    """SIGTERM a `mpiarena run` of ours that is still going (it then halts its own daemons and
    ranks), and give it 20 s to do so."""
    runs = [p for p in tagged_pids(token) if comm(p) in ("mpiarena", "python", "python3")]
    for pid in runs:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(alive(p) for p in runs):
        time.sleep(0.05)


def on_signal(signum: int, _frame: object) -> None:
    raise SystemExit(f"error: stopped by signal {signum}; cleaning up")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5,
                        help="A/B alternations: one mpiarena run and one NetPIPE set each")
    parser.add_argument("--min-rounds", type=int, default=3,
                        help="rounds a transport needs measured on each side (default 3)")
    parser.add_argument("--observations", type=int, default=20, help="mpiarena, per cell")
    parser.add_argument("--target-time", type=float, default=0.001,
                        help="mpiarena: seconds an observation lasts at least (default 0.001)")
    parser.add_argument("--tolerance", type=float, default=0.10, help="allowed |ratio - 1|")
    parser.add_argument("--quiet-wait", type=float, default=60.0,
                        help="seconds to wait before each launch for other MPI jobs to end "
                        "and the CPUs to idle (default 60; 0: do not wait)")
    args = parser.parse_args()

    for exe in ("NPtcp", "NPlam", "NPpvm"):
        if not (NP_BIN / exe).exists():
            raise SystemExit(f"error: {NP_BIN / exe} missing: apt-get install netpipe-tcp "
                             "netpipe-lam netpipe-pvm")
    user = users.for_ranks()
    if os.geteuid() == 0 and user is None:
        raise SystemExit("error: LAM refuses root and the rank user does not exist: "
                         "mpiarena setup")
    token = uuid.uuid4().hex
    for sig in (signal.SIGTERM, signal.SIGHUP):  # clean up as on Ctrl-C
        signal.signal(sig, on_signal)
    workdir = Path(tempfile.mkdtemp(prefix="mpiarena-netpipe-", dir="/var/tmp"))
    workdir.chmod(0o755)
    if user is not None:  # NetPIPE writes its output files as the rank user
        os.chown(workdir, user.uid, user.gid)
    s = Session(workdir, {**os.environ, TAG: token}, user, token, args.quiet_wait)
    suite = workdir / "netpipe_reference.toml"
    suite.write_text(SUITE.format(obs=args.observations, target=args.target_time))
    arena = {t.name: Side() for t in TRANSPORTS}
    netpipe = {t.name: Side() for t in TRANSPORTS}
    failed = True
    try:
        print(f"ranks run as {user.name if user else 'self'}, mpiarena's bound one per core, "
              "NetPIPE's unbound; "
              f"{args.rounds} rounds, each one mpiarena run ({args.observations} observations "
              f"of >= {args.target_time * 1e3:g} ms per cell) and one NetPIPE launch per "
              "transport and size, in alternating order")
        if n := foreign_mpi(token, FOREIGN):
            print(f"warning: {n} MPI/LAM/PVM/NetPIPE processes of others are running now")
        if (busy := busy_elsewhere()) > 0.15:
            print(f"warning: the CPUs were {busy:.0%} busy before we started (2 cores: "
                  "blocking transports and polling shared memory both suffer)")
        for rnd in range(args.rounds):
            began = time.monotonic()
            for who in ("arena", "netpipe") if rnd % 2 == 0 else ("netpipe", "arena"):
                if who == "arena":
                    run_arena(s, suite, args.observations, arena)
                else:
                    run_netpipe(s, rnd, netpipe, reverse=rnd % 2 == 1)
            print(f"  round {rnd + 1}/{args.rounds} done in {time.monotonic() - began:.0f} s: "
                  + "; ".join(f"{t.name} " + ", ".join(
                      f"{fmt_opt(arena[t.name].typical[z][-1])}/"
                      f"{fmt_opt(netpipe[t.name].typical[z][-1])}" for z in SIZES)
                      for t in TRANSPORTS) + " (mpiarena/NetPIPE at 1 B, 1 MiB)",
                  file=sys.stderr)
        print(f"waited {s.waited:.0f} s in all for a quiet machine before launches")
        if s.disturbed:
            print(f"warning: other MPI/LAM/PVM/NetPIPE jobs were running, or the CPUs were "
                  f">= {QUIET_BUSY:.0%} busy, at {s.disturbed} of {s.launches} launches: "
                  "their load disturbs these figures")
        failed = not report(arena, netpipe, args.tolerance, args.min_rounds)
    finally:
        stop_arena(token)
        clean_up(token, workdir)
    print(f"\n{'FAIL' if failed else 'PASS'}: mpiarena against NetPIPE "
          f"{'outside' if failed else 'within'} 1.00 +- {args.tolerance:.2f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
