"""LAM/MPI 7: a universe of lamd daemons booted for each job, ranks as the unprivileged user.

LAM refuses to run as root. Its default transport selection fails on this kind of machine
(rank exit status 22), so the shared-memory `usysv` RPI is chosen unless a variant sets
LAM_MPI_SSI_rpi (usysv, sysv, tcp, crtcp, lamd). LAM's empty iovecs carry garbage pointers that
current kernels reject, which made MPI_Init fail at random: the core built for LAM links
lam_iovec.c, which cleans them. LAM's malloc replaces free() but not aligned_alloc(): the core
allocates with malloc only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Mapping
from pathlib import Path

from ..base import core_env, tags, tools, users
from ..base.users import RankUser
from ..cluster.placement import Placement
from ..model.whatran import Cvar
from ..system.procs import RunWith, alive, last_words, run_as, start_as, wait_until
from .base import MPI_EXT, FamilyDefaults, Found, Implementation, Launch

WRAPPER = Path("/usr/bin/mpicc.lam")
SESSION_VAR = "LAM_MPI_SESSION_SUFFIX"
LAUNCHER = Path("/usr/bin/mpirun.lam")
RPI = "LAM_MPI_SSI_rpi"  # the point-to-point transport module mpirun selects
# mpirun -x: LAM passes no other environment to the ranks (and only the last -x counts);
# LD_PRELOAD and the profile directory are the per-call profiler's; the one-sided window's
# memory (a variant's setting), the MPI-IO benchmarks' directory and the sums' datatype
EXPORTED = ",".join((core_env.T0, core_env.FAULT, core_env.BIND, core_env.THREAD_LEVEL,
                     core_env.RMA_WINDOW, tags.TOKEN_VAR, tags.RUN_VAR, "LD_PRELOAD",
                     core_env.PROFILE_DIR, core_env.IO_DIR, core_env.DATATYPE))


class LamUniverse:
    """lamboot before the first rank; after the last, tkill on this machine, lamhalt across
    nodes (lamwipe if halting fails)."""

    def __init__(self, bin_dir: Path, np: int, workdir: Path, user: RankUser | None,
                 placement: Placement | None):
        self.bin_dir, self.np, self.workdir, self.user = bin_dir, np, workdir, user
        self.placement = placement
        self.suffix = f"arena{uuid.uuid4().hex[:12]}"
        self.schema = workdir / f"{self.suffix}.bhost"
        self.log = workdir / f"{self.suffix}.log"
        self.env: dict[str, str] = {}
        self.ipc_before: set[tuple[str, str]] = set()

    def up(self, env: dict[str, str]) -> dict[str, str]:
        self.env = {**env, SESSION_VAR: self.suffix}
        self.ipc_before = _sysv_ipc(self.user)
        if self.placement is None:
            self.schema.write_text(f"localhost cpu={self.np}\n")
        else:  # lamboot reaches the other nodes through the cluster's remote shell
            self.env["LAMRSH"] = str(self.placement.rsh)
            self.schema.write_text("".join(
                f"{n.name} cpu={r}\n" for n, r in zip(self.placement.nodes, self.placement.ranks,
                                                      strict=True) if r))
        self.schema.chmod(0o644)
        code = run_as([str(self.bin_dir / "lamboot"), str(self.schema)], self._with(),
                      placement=self.placement)
        if code != 0:
            self.down()
            raise RuntimeError(f"lamboot failed (exit status {code}): {last_words(self.log)}")
        return {SESSION_VAR: self.suffix}

    def down(self) -> None:
        if self.placement is not None or not self._terminate_here():
            self._halt()
        # ranks killed outright leave usysv's shared memory and semaphores behind; another
        # universe still up may own the new ones, so they are left to its own halt
        if not _other_universes(self.suffix):
            _remove_ipc(_sysv_ipc(self.user) - self.ipc_before)

    def _with(self) -> RunWith:
        """The universe's commands run in its environment and directory, as the rank user,
        into its log."""
        return RunWith(self.env, self.workdir, self.user, self.log)

    def _halt(self) -> None:
        """lamhalt on every node (lamwipe if it fails); it returns before its lamd has exited."""
        if run_as([str(self.bin_dir / "lamhalt")], self._with(), timeout=15,
                  placement=self.placement) != 0:
            run_as([str(self.bin_dir / "lamwipe"), str(self.schema)], self._with(), timeout=15,
                   placement=self.placement)
        wait_until(lambda: self.suffix not in live_session_suffixes(), within=5.0)

    def _terminate_here(self) -> bool:
        """A universe on this machine only: LAM's own tkill signals every process of the
        session (its kill file: the lamd and what it started) and the session is done once none
        runs. lamhalt takes 3 s here for the same end: its lamd sleeps a second before it runs
        tkill, tkill waits out its signals' backoff until the zombie lamd is reaped, and
        lamhalt polls all the while on one core. tkill is stopped once the session's processes
        are gone, and its directory removed as sweep_stale would. False if they outlive 5 s."""
        tkill = start_as([str(self.bin_dir / "tkill")], self._with())
        if tkill is None:
            return False
        ended = wait_until(lambda: not _session_pids(self.suffix) - {tkill.pid}, within=5.0)
        tkill.kill()
        tkill.wait()
        if ended:
            for session in Path("/tmp").glob(f"lam-*-{self.suffix}"):
                shutil.rmtree(session, ignore_errors=True)
        return ended


class Lam(FamilyDefaults):
    name = "lam"
    title = "LAM/MPI"
    order = 40
    kernel_modules = ("mod_mpi.c", *MPI_EXT, "lam_iovec.c", "apps.c")
    install_hint = "apt-get install lam-runtime lam4-dev"
    pmpi = True
    start_fixes = ("lam_iovec.c",)

    def sweep_stale(self) -> None:
        """Session directories of universes no process uses any more, and the rank user's
        System V objects (usysv's) once none of its processes is alive: ranks killed outright
        leave them, and stale ones made LAM's shared-memory transport hang. What is found is
        listed before the check, so nothing another run makes meanwhile is taken."""
        sessions = list(Path("/tmp").glob("lam-*-arena*"))
        live = live_session_suffixes()
        for session in sessions:
            if session.name.rsplit("-", 1)[-1] not in live:
                shutil.rmtree(session, ignore_errors=True)
        user = users.lookup()
        if user is None or os.geteuid() != 0:
            return
        left = _sysv_ipc(user)
        if not _has_processes(user.uid):
            _remove_ipc(left)

    def detect(self) -> list[Found]:
        if not WRAPPER.exists():
            return []
        version = _laminfo_version()
        impl_id = f"lam-{version}"
        if tools.find("lamboot") is None:
            return [Found(impl_id, problem="lamboot, which boots LAM's daemons, is not installed",
                          fix=f"apt-get install {tools.TOOLS['lamboot'].package}")]
        if os.geteuid() == 0 and users.lookup() is None:
            return [Found(impl_id, problem="LAM/MPI refuses to run as root and the rank user "
                          f"'{users.name()}' does not exist", fix="mpiarena setup")]
        return [Found(impl_id, Implementation(impl_id, "lam", version, "debian", WRAPPER,
                                              LAUNCHER))]

    def launch(self, impl: Implementation, np: int, binding: str, as_root: bool) -> Launch:
        return Launch([str(impl.launcher), "-np", str(np), "-x", EXPORTED],
                      {RPI: "usysv", core_env.BIND: binding})

    def hosts_launch(self, impl: Implementation, placement: Placement) -> Launch:
        return Launch([str(impl.launcher), "-np", str(sum(placement.ranks)), "-x", EXPORTED],
                      {RPI: "usysv", core_env.BIND: "none"},
                      binding="none")

    def wrapper_flags(self, impl: Implementation) -> list[str]:
        return ["-showme"]

    def transport(self, impl: Implementation, cvars: tuple[Cvar, ...] | None, version: str,
                  env: Mapping[str, str], said: str = "") -> tuple[str, str]:
        """The RPI module: LAM_MPI_SSI_rpi where the job sets it, else the highest priority
        of those laminfo lists."""
        if env.get(RPI):
            return f"rpi {env[RPI]}", f"{RPI} in the job's environment"
        return (f"rpi by priority among {', '.join(_laminfo_rpis()) or 'none listed'}",
                f"laminfo -parsable ({RPI} unset)")

    def runtime(self, impl: Implementation, np: int, workdir: Path, user: RankUser | None,
                env: dict[str, str], placement: Placement | None) -> LamUniverse:
        return LamUniverse(impl.launcher.parent, np, workdir, user, placement)


def _sysv_ipc(user: RankUser | None) -> set[tuple[str, str]]:
    """('m', shmid) and ('s', semid) of the System V objects the rank user owns."""
    uid = user.uid if user else os.geteuid()
    found = set()
    for kind, table in (("m", "/proc/sysvipc/shm"), ("s", "/proc/sysvipc/sem")):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        column = 7 if kind == "m" else 4  # uid
        found |= {(kind, f[1]) for f in (ln.split() for ln in lines) if int(f[column]) == uid}
    return found


def _remove_ipc(objects: set[tuple[str, str]]) -> None:
    """ipcrm each System V object; without ipcrm they stay (a note says so, once)."""
    if objects and tools.optional("ipcrm") is not None:
        for kind, ident in objects:
            subprocess.run(["ipcrm", f"-{kind}", ident], capture_output=True, check=False)


def _session_pids(suffix: str) -> set[int]:
    """The live processes of a session: its lamd, and every process started in it."""
    return {pid for pid, of in _sessions_of_processes().items() if of == suffix and alive(pid)}


def live_session_suffixes() -> set[str]:
    """Session suffixes of the lamd daemons running now and of the processes started in a
    session (lamboot while it boots, mpirun, ranks)."""
    return set(_sessions_of_processes().values())


def _sessions_of_processes() -> dict[int, str]:
    """pid -> the LAM session suffix of every process in one: a lamd's by its -sessionsuffix
    argument, another's by SESSION_VAR in its environment (readable for root and its owner)."""
    found, tag = {}, f"{SESSION_VAR}=".encode()
    for pid_dir in Path("/proc").glob("[0-9]*"):
        try:
            args = (pid_dir / "cmdline").read_bytes().split(b"\0")
            if b"-sessionsuffix" in args[:-1]:
                found[int(pid_dir.name)] = args[args.index(b"-sessionsuffix") + 1].decode(
                    errors="replace")
                continue
            environ = (pid_dir / "environ").read_bytes().split(b"\0")
        except OSError:  # gone, or another user's
            continue
        if said := next((e[len(tag):] for e in environ if e.startswith(tag)), None):
            found[int(pid_dir.name)] = said.decode(errors="replace")
    return found


def _has_processes(uid: int) -> bool:
    """True while a process of uid runs (zombies, which hold no System V object, excepted)."""
    for entry in Path("/proc").glob("[0-9]*/status"):
        try:
            status = entry.read_text()
            if f"Uid:\t{uid}\t" in status and "State:\tZ" not in status:
                return True
        except OSError:
            continue
    return False


def _other_universes(suffix: str) -> bool:
    """True if a lamd of another session is running."""
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if args[0].endswith(b"lamd") and suffix.encode() not in args:
            return True
    return False


def _laminfo_rpis() -> list[str]:
    """The RPI modules laminfo lists ("ssi:rpi:NAME:version:module:...")."""
    try:
        out = subprocess.run(["laminfo", "-parsable"], capture_output=True, text=True,
                             timeout=20, stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    return sorted({f[2] for line in out.splitlines()
                   if len(f := line.split(":")) > 3 and f[:2] == ["ssi", "rpi"]})


def _laminfo_version() -> str:
    """'7.1.4' from `laminfo -parsable -version lam full`."""
    try:
        out = subprocess.run(["laminfo", "-parsable", "-version", "lam", "full"],
                             capture_output=True, text=True, timeout=20,
                             stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    for line in out.splitlines():
        if line.startswith("version:lam:"):
            return line.rsplit(":", 1)[1].strip()
    return "unknown"


FAMILY = Lam()
