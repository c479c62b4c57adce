"""Shared helpers: the real mpiarena command, the implementations on this machine, leftovers."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import uuid
from pathlib import Path
from typing import NoReturn

import pytest

from mpiarena import paths
from mpiarena.cluster import emulated, netns
from mpiarena.impls import Implementation, discover
from mpiarena.runner.cleanup import sweep_stale

LEFTOVER_NAMES = {"arena", "mpiexec", "mpiexec.hydra", "mpiexec.mpich", "mpirun", "orterun",
                  "hydra_pmi_proxy", "prterun", "prted", "orted", "mpiexec.openmpi", "lamd",
                  "lamboot", "lamhalt", "pvmd", "pvmd3", "pvmgs", "smpirun", "smpimain"}
SLURM_DAEMONS = {"munged", "slurmctld", "slurmd"}  # of `cluster up --slurm`: see _slurm_left
# Every process this test session starts inherits the marker (launchers pass the environment
# on to ranks and daemons), so a leftover is one of ours whatever else runs on the machine.
MARKER = f"MPIARENA_TEST_SESSION={uuid.uuid4().hex}"
os.environ["MPIARENA_TEST_SESSION"] = MARKER.partition("=")[2]


ARGV = [sys.executable, "-c", "from mpiarena.commands import main; main()"]
CHILDREN: list[int] = []  # pids of the commands started


class Forked:
    """`python -c 'from mpiarena.commands import main; main()' ARGS` with stdin from /dev/null,
    as subprocess.Popen(..., stdout=PIPE, stderr=PIPE, text=True) would start it, but forked
    from this process, which has imported mpiarena already: a fresh interpreter spends a second
    or two importing it, in each of the hundred commands the tests run. Output goes to files,
    read by communicate()."""

    def __init__(self, args: tuple[str, ...], cwd: Path | None = None,
                 env: dict[str, str] | None = None):
        import mpiarena.commands  # noqa: F401 - before the first fork, under pytest's capture
        self.args = [*ARGV, *args]
        self.returncode: int | None = None
        self._out = tempfile.TemporaryFile()  # noqa: SIM115 - closed by communicate()
        self._err = tempfile.TemporaryFile()  # noqa: SIM115
        self.pid = os.fork()
        if self.pid == 0:  # pragma: no cover - the child
            _as_command(self.args, self._out.fileno(), self._err.fileno(), cwd, env or {})
        CHILDREN.append(self.pid)

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while (code := self.poll()) is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            time.sleep(0.005)
        return code

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        self.wait(timeout)
        read = []
        for f in (self._out, self._err):
            f.seek(0)
            read.append(f.read().decode(errors="replace"))
            f.close()
        return read[0], read[1]

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


Started = Forked | subprocess.Popen[str]


def _fresh() -> bool:
    """A fresh interpreter where this process writes to a terminal (the consoles it imported
    would think theirs is one: pytest -s)."""
    return sys.stdout.isatty() or sys.stderr.isatty()


def spawn(*args: str) -> Started:
    """Start the real mpiarena command line: forked (see Forked), else in a fresh interpreter."""
    if not _fresh():
        return Forked(args)
    proc = subprocess.Popen([*ARGV, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, stdin=subprocess.DEVNULL)
    CHILDREN.append(proc.pid)
    return proc


def mpiarena(*args: str, cwd: Path | None = None, timeout: float = 600,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real mpiarena command line: forked (see Forked), else in a fresh interpreter."""
    if _fresh():
        return subprocess.run([*ARGV, *args], capture_output=True, text=True, cwd=cwd,
                              timeout=timeout, env={**os.environ, **(env or {})},
                              stdin=subprocess.DEVNULL)
    proc = Forked(args, cwd, env)
    try:
        out, err = proc.communicate(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise
    return subprocess.CompletedProcess(proc.args, proc.wait(), out, err)


def _as_command(argv: list[str], out: int, err: int, cwd: Path | None,
                env: dict[str, str]) -> NoReturn:
    """In a forked child: become `python -c ... ARGS` with stdin from /dev/null, stdout and
    stderr to out and err; exit with the command's status, running nothing of this process."""
    code = 1
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        for fd, to in ((null, 0), (out, 1), (err, 2)):
            os.dup2(fd, to)
        # the streams live until os._exit, as a process's own do
        sys.stdin = open(0, closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.environ.update(env)
        if "PYTHONPATH" in env:  # mpiarena from there: imported afresh, what it imports kept
            sys.path[:0] = env["PYTHONPATH"].split(os.pathsep)
            for name in [m for m in sys.modules if m.split(".")[0] == "mpiarena"]:
                del sys.modules[name]
        if cwd is not None:
            os.chdir(cwd)
        sys.argv = argv[1:2] + argv[3:]
        from mpiarena.commands import main
        main()
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError):
                stream.flush()
        os._exit(code)


def _running() -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                comm = (entry / "comm").read_text().strip()
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                left = comm in LEFTOVER_NAMES or (comm in SLURM_DAEMONS and _slurm_left(entry))
                ours = left and MARKER.encode() in (entry / "environ").read_bytes().split(b"\0")
            except (OSError, IndexError):
                continue
            if ours and state not in ("Z", "X"):
                found.append(f"{comm}[{entry.name}]")
    return found


def _slurm_left(proc: Path) -> bool:
    """A Slurm daemon of an emulated cluster (its files in the cluster's directory) that is no
    longer up."""
    args = (proc / "cmdline").read_bytes().decode(errors="replace")
    top = f"{emulated.clusters_dir()}/"
    if top not in args:
        return False
    return emulated.load(args.split(top, 1)[1].split("/", 1)[0]) is None


def leftovers(grace: float = 2.0) -> list[str]:
    """Launchers, daemons or core processes of this test session still running after a short
    grace for exits."""
    deadline = time.monotonic() + grace
    while (found := _running()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def usable_impls() -> list[Implementation]:
    return [f.impl for f in discover({}, paths.impls_dir()) if f.impl is not None]


IMPLS = usable_impls()


@pytest.fixture(params=IMPLS, ids=[i.id for i in IMPLS])
def impl(request: pytest.FixtureRequest) -> Implementation:
    return request.param


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "results.db")


@pytest.fixture(autouse=True, scope="session")
def nothing_left_behind():
    """Start from what a crashed earlier run may have left swept away; end with nothing running."""
    sweep_stale(paths.scratch_dir())
    yield
    assert leftovers() == []
    assert ours(netns.existing()) == []  # no emulated cluster outlives the tests


def ours(namespaces: list[str]) -> list[str]:
    """The namespaces this session made: those of the commands it started, and of the clusters
    named t-... that this process made or a test kept up; other test sessions on this machine
    may have theirs up."""
    made = {f"{netns.PREFIX}doctor-{pid}" for pid in CHILDREN}

    def test_made(ns: str) -> bool:
        name = ns[len(netns.PREFIX):].rsplit("-", 1)[0]
        cluster = emulated.load(name) if name.startswith("t-") else None
        return cluster is not None and (cluster.owner is None or cluster.owner.pid == os.getpid())

    return [ns for ns in namespaces if ns in made or test_made(ns)
            or any(ns.startswith(f"{netns.PREFIX}run{pid}-") for pid in CHILDREN)]


def watchdog_of(pid: int) -> int:
    """The watchdog mpiarena pid started."""
    for entry in Path("/proc").iterdir():
        try:
            args = (entry / "cmdline").read_bytes().rstrip(b"\0").split(b"\0")
            if entry.name.isdigit() and args[-2:] == [b"mpiarena.runner.watchdog",
                                                      str(pid).encode()]:
                return int(entry.name)
        except OSError:
            continue
    raise AssertionError(f"no watchdog for {pid}")
