"""Shared helpers: the real mpiarena command, the implementations on this machine, leftovers."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NoReturn

import pytest

from mpiarena.base import paths
from mpiarena.base.records import RunKind, RunSettings
from mpiarena.cluster import emulated, netns
from mpiarena.impls import Implementation, discover, family_of
from mpiarena.model.runs import RunStart, StoredSettings
from mpiarena.runner import presence, watchdog
from mpiarena.runner.cleanup import sweep_stale
from mpiarena.store import Store

LEFTOVER_NAMES = {"arena", "mpiexec", "mpiexec.hydra", "mpiexec.mpich", "mpirun", "orterun",
                  "hydra_pmi_proxy", "prterun", "prted", "orted", "mpiexec.openmpi", "lamd",
                  "lamboot", "lamhalt", "pvmd", "pvmd3", "pvmgs", "smpirun", "smpimain"}
SLURM_DAEMONS = {"munged", "slurmctld", "slurmd"}  # of `cluster up --slurm`: see _slurm_left
# Every process this test session starts inherits the marker (launchers pass the environment
# on to ranks and daemons), so a leftover is one of ours whatever else runs on the machine.
MARKER = f"MPIARENA_TEST_SESSION={uuid.uuid4().hex}"
os.environ["MPIARENA_TEST_SESSION"] = MARKER.partition("=")[2]
# The runs of this session count only each other as measuring beside them (another test
# session's runs, or anyone's, would add a warning line to what a test checks); runs outside it
# still see these
GROUP = f"tests-{MARKER.partition('=')[2]}"
os.environ[presence.GROUP_VAR] = GROUP
# Emulated clusters a test names carry this session's tag: two test sessions on one machine
# never ask for the same name (cluster_name)
SESSION = str(os.getpid())
# xdist's workers (make test's parallel lane) set COLUMNS=80 and LINES=24: the commands would
# wrap at 80 columns there and at 150 (piped, no COLUMNS) everywhere else
if "PYTEST_XDIST_WORKER" in os.environ:
    for _var in ("COLUMNS", "LINES"):
        os.environ.pop(_var, None)
# Files whose tests assert nothing that another test running beside them could move (no time,
# figure or verdict read from a measurement, no quiet machine; a test there that does is marked
# `alone`): their build, structure, error paths, stored runs, reports and simulations.
# `make test` runs them two at a time (-m parallel, pytest-xdist) beside the wheel smoke and
# the BESIDE files, then every other test alone. The slowest first (each file's time in a fresh
# clone's make test, 2026-12-02), so that the two workers end together. The files of real runs
# that read no figure are here rather than in the lane alone,
# test_report.py among them: the first lane grew from 218 s to 267-273 s and the lane alone
# shrank from 389 s to 244-264 s (make test 647 s, then 582-624 s in fresh clones).
PARALLEL = ("test_app_report.py", "test_report.py", "test_cli.py", "test_app_build.py",
            "test_releases.py", "test_mpi3_io.py", "test_core_asan.py", "test_exit_codes.py",
            "test_import.py", "test_kernel_calls.py", "test_whatran_report.py",
            "test_doc_commands.py", "test_datatype.py", "test_whatran.py", "test_family_module.py",
            "test_install_doctor.py", "test_fingerprint.py", "test_simulate.py",
            "test_run_protocol.py", "test_answer_libraries.py", "test_any_machine.py",
            "test_modules.py", "test_profile.py", "test_mpi3_coll.py", "test_mpi3_suite.py",
            "test_mpi3_nbc.py", "test_mpi3_rma.py", "test_mpi3_dtype.py", "test_suites.py",
            "test_overlap_section.py", "test_crash.py", "test_stats.py", "test_drift.py",
            "test_predict.py", "test_layers.py", "test_rule_simulation.py",
            "test_rule_at_the_line.py", "test_rank_view.py", "test_vocabulary.py",
            "test_architecture.py", "test_core_contract.py", "test_docs.py", "test_guide.py",
            "test_conventions.py", "test_launchers.py", "test_plan.py", "test_renderers.py",
            "test_sizes.py", "test_store.py", "test_units.py", "test_bisection.py",
            "test_releases_report.py", "test_build_or_release.py", "test_store_filesystems.py")
# Files of real runs that wait more than they compute (emulated clusters' ssh and shaped links,
# Slurm's daemons and queue, killed and hung jobs, runs at once) and read no figure a busy
# machine moves: `make test` runs them two at a time (-m beside), from make check's start,
# beside it and then beside the PARALLEL files' two workers, in the cores' idle time. The
# slowest first. A test there that reads a measured figure is marked `alone`. In a fresh clone
# (2026-12-02) these took 205 s while make check and the PARALLEL files took 87 s and 177 s;
# one at a time, without the Slurm files (in PARALLEL then), the correctness checks and tune's
# (alone then), 249 s against 72 s and 218 s (make test 419 s, then 519 s).
BESIDE = ("test_faults.py", "test_cluster.py", "test_reproduce.py", "test_sbatch.py",
          "test_app.py", "test_concurrency.py", "test_store_postgres.py", "test_slurm.py",
          "test_core.py", "test_slurm_cluster.py", "test_apps.py", "test_guidelines.py",
          "test_tune.py")
_missing = set(PARALLEL + BESIDE) - {p.name for p in Path(__file__).parent.glob("test_*.py")}
assert not _missing, f"PARALLEL or BESIDE names no such file: {_missing}"
assert not set(PARALLEL) & set(BESIDE), "a file is in both PARALLEL and BESIDE"


# Files whose tests launch no MPI library but where marked `mpi` (or given the `impl`
# fixture), and take a few seconds at most: `make check` runs them, the scripted libraries'
# runs (tests/test_scripted.py) among them, in under a minute. Every test of any other file is
# marked `mpi` (it may launch one). A test not marked `mpi` that starts a launcher, a daemon or
# a built core fails (no_mpi_launched): this list cannot lie. The slowest first, so that make
# check's two workers end together.
NO_MPI = ("test_scripted.py", "test_rule_at_the_line.py", "test_conventions.py", "test_drift.py",
          "test_layers.py", "test_stats.py", "test_rule_simulation.py", "test_vocabulary.py",
          "test_analysis.py", "test_glossary.py", "test_store.py", "test_rank_view.py",
          "test_golden.py", "test_fingerprint_rule.py", "test_answer.py", "test_architecture.py",
          "test_bisection.py", "test_run_spread.py", "test_build_or_release.py",
          "test_core_contract.py", "test_docs.py", "test_launchers.py", "test_plan.py",
          "test_predict.py", "test_releases_kind.py", "test_releases_report.py",
          "test_renderers.py", "test_run_lifecycle.py", "test_signatures.py", "test_sizes.py",
          "test_suites.py", "test_units.py")
_missing = set(NO_MPI) - {p.name for p in Path(__file__).parent.glob("test_*.py")}
assert not _missing, f"NO_MPI names no such file: {_missing}"


def _marks_alone(name: str) -> bool:
    """A test of the file is marked `alone`."""
    return "mark.alone" in (Path(__file__).parent / name).read_text()


# a lane's mark expression (Makefile, scripts/checks-beside.sh) -> whether a file can hold none
# of the tests it selects: make check's files outside NO_MPI (every test there is marked mpi),
# the lanes' files outside their lists, the lane alone's files of the other two lanes but those
# with a test marked alone (collecting every file took a lane 2.7 s, its own 0.8 s)
LANE_LEAVES_OUT: dict[str, Callable[[str], bool]] = {
    "not mpi": lambda name: name not in NO_MPI,
    "parallel and mpi": lambda name: name not in PARALLEL,
    "beside and mpi": lambda name: name not in BESIDE,
    "mpi and not parallel and not beside":
        lambda name: name in PARALLEL + BESIDE and not _marks_alone(name),
}


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A test file whose tests the run's lane (LANE_LEAVES_OUT) cannot select is not even
    imported."""
    leaves_out = LANE_LEAVES_OUT.get(config.getoption("markexpr", ""))
    if leaves_out is not None and collection_path.suffix == ".py" and \
            collection_path.name.startswith("test_") and leaves_out(collection_path.name):
        return True
    return None


def needs_mpi(item: pytest.Item) -> bool:
    """A test that launches an MPI library: outside NO_MPI, marked `mpi`, or given a library
    (the `impl` fixture)."""
    return item.path.name not in NO_MPI or item.get_closest_marker("mpi") is not None or \
        "impl" in getattr(item, "fixturenames", ())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests that launch an MPI library `mpi` (needs_mpi); mark the tests of the
    PARALLEL files `parallel` and those of the BESIDE files `beside`, but for those marked
    `alone` (a test there that reads a measured figure); under xdist, run them the slowest
    file first (make check: NO_MPI's order; the lanes: PARALLEL's, then BESIDE's)."""
    for item in items:
        if needs_mpi(item):
            item.add_marker(pytest.mark.mpi)
        if item.get_closest_marker("alone") is not None:
            continue
        if item.path.name in PARALLEL:
            item.add_marker(pytest.mark.parallel)
        elif item.path.name in BESIDE:
            item.add_marker(pytest.mark.beside)
    if "PYTEST_XDIST_WORKER" in os.environ:
        slowest_first = NO_MPI if config.getoption("markexpr", "") == "not mpi" else \
            PARALLEL + BESIDE
        rank = {name: i for i, name in enumerate(slowest_first)}
        items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


# --- no MPI launched by a test not marked `mpi` --------------------------------------------

_MPI_ALLOWED = True  # False while a test not marked `mpi` runs (and in what it forks)


def _a_built_core(program: Path) -> bool:
    """A core compiled against a library (the scripted core is a script: impls/scripted.py)."""
    try:
        with open(program, "rb") as f:
            return f.read(2) != b"#!"
    except OSError:
        return True


def _no_mpi(event: str, args: tuple[object, ...]) -> None:
    """Refuse to start a launcher, a daemon or a built core while _MPI_ALLOWED is off."""
    if _MPI_ALLOWED or event != "subprocess.Popen":
        return
    executable, argv = args[0], args[1]
    first = executable or (argv if isinstance(argv, str | bytes) else next(iter(argv), ""))
    program = Path(os.fsdecode(first)) if isinstance(first, str | bytes | os.PathLike) else Path()
    if program.name in LEFTOVER_NAMES - {"arena"} or \
            (program.name == "arena" and _a_built_core(program)):
        raise RuntimeError(f"{program} started by a test not marked mpi: mark it "
                           "@pytest.mark.mpi, or leave its file out of NO_MPI (conftest.py)")


sys.addaudithook(_no_mpi)


@pytest.fixture(autouse=True)
def no_mpi_launched(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test not marked `mpi` starts no MPI library: no launcher, daemon or built core, in
    this process or in the commands it forks (_no_mpi)."""
    global _MPI_ALLOWED
    _MPI_ALLOWED = request.node.get_closest_marker("mpi") is not None
    try:
        yield
    finally:
        _MPI_ALLOWED = True


def cluster_name(what: str) -> str:
    """A name for a test's emulated cluster that no other test session on this machine uses."""
    return f"t-{what}-{SESSION}"


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


STARTED: list[Started] = []  # runs a test started in the background, to stop if it fails


@pytest.fixture(autouse=True)
def stop_runs_left_by_a_failed_test() -> Iterator[None]:
    """A run a failed test left going (STARTED) is stopped, its cluster with it, not left to
    the tests after it."""
    yield
    while STARTED:
        proc = STARTED.pop()
        if proc.poll() is None:
            proc.terminate()
            proc.communicate(timeout=60)


def stored_run(store: Store, suite: str = "quick", settings: StoredSettings | None = None,
               seed: int = 1, kind: RunKind = RunKind.BENCHMARK) -> int:
    """A run started and ended through the store's one lifecycle, to write rows into by hand
    (a test's own cells): its id."""
    start = RunStart(kind, suite, f"test {suite}", settings or RunSettings(), seed, {"cores": 2})
    with store.new_run(start) as run:
        pass
    return run.id


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
    proc: Started
    if _fresh():
        proc = subprocess.Popen([*ARGV, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, cwd=cwd, env={**os.environ, **(env or {})},
                                stdin=subprocess.DEVNULL)
        CHILDREN.append(proc.pid)
    else:
        proc = Forked(args, cwd, env)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
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


def _comm(pid: str) -> str:
    """The process's name ("" if gone): os.open and os.read, a tenth of the time of Path's
    read_text, as every process on the machine is read after every test."""
    try:
        fd = os.open(f"/proc/{pid}/comm", os.O_RDONLY)
    except OSError:
        return ""
    try:
        return os.read(fd, 64).decode(errors="replace").strip()
    except OSError:
        return ""
    finally:
        os.close(fd)


def _running() -> list[str]:
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        comm = _comm(pid)
        if comm not in LEFTOVER_NAMES and comm not in SLURM_DAEMONS:
            continue
        entry = Path("/proc", pid)
        try:
            if comm in SLURM_DAEMONS and not _slurm_left(entry):
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            ours = MARKER.encode() in (entry / "environ").read_bytes().split(b"\0")
        except (OSError, IndexError):
            continue
        if ours and state not in ("Z", "X"):
            found.append(f"{comm}[{pid}]")
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
    """The libraries found here (the machine floor, no library, is tests/test_floor.py's)."""
    return [f.impl for f in discover({}, paths.impls_dir())
            if f.impl is not None and not family_of(f.impl).floor]


IMPLS = usable_impls()


@pytest.fixture(params=IMPLS, ids=[i.id for i in IMPLS])
def impl(request: pytest.FixtureRequest) -> Implementation:
    return request.param


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "results.db")


@pytest.fixture(autouse=True, scope="session")
def nothing_left_behind():
    """Start from what a crashed earlier run may have left swept away, whichever test session or
    user's it was (a sweep in this session's group would take only the group's: none yet);
    end with nothing running."""
    sweep_stale(paths.scratch_dir(), every_group=True)
    yield
    assert leftovers() == []
    assert ours(netns.existing()) == []  # no emulated cluster outlives the tests


# --- after each test: nothing of it is left ---------------------------------------------------

# seconds a test's processes, namespaces and files have to go once it ended: what is gone by
# then was not left behind. Where tests run two at a time or beside others (xdist's workers,
# make check, the parallel lane and the BESIDE files beside it: scripts/checks-beside.sh) an
# exit takes longer and nothing there is timed, so the grace is no time bound there; alone,
# the tests that time calls keep it short
BUSY = "PYTEST_XDIST_WORKER" in os.environ or "MPIARENA_TESTS_BESIDE" in os.environ
LEFT_GRACE = 15.0 if BUSY else 3.0


def _listed(folder: Path) -> set[str]:
    try:
        return set(os.listdir(folder))
    except OSError:
        return set()


def _traces() -> tuple[set[str], set[str], set[str]]:
    """The machine's network namespaces, presence registrations and scratch entries, by name:
    a few directory listings (netns.existing runs `ip`)."""
    return (_listed(Path("/run/netns")), _listed(paths.machine_dir() / "measuring"),
            _listed(paths.data_dir() / "scratch"))


def _in_group(registration: str) -> bool:
    """A presence registration of this session's runs (GROUP)."""
    try:
        path = paths.machine_dir() / "measuring" / registration
        return bool(json.loads(path.read_text()).get("group") == GROUP)
    except (OSError, ValueError, AttributeError):
        return False


def _scratch_of(entry: str, pids: list[int]) -> bool:
    """A run's scratch directory (run-PID.START-..., or run-PID-... as earlier versions named
    them) of one of pids."""
    parts = entry.split("-")
    return parts[0] == "run" and len(parts) > 2 and parts[1].split(".")[0] in map(str, pids)


def _left_since(before: tuple[set[str], set[str], set[str]], pids: list[int]) -> list[str]:
    """What the test left: this session's launchers, daemons and cores still running, and the
    namespaces, registrations as measuring and scratch directories that came since `before`
    and are the test's (pids: the commands it started, and this process)."""
    namespaces, registrations, scratch = _traces()
    return (_running() + [f"namespace {ns}" for ns in
                          ours(sorted(namespaces - before[0]), pids)]
            + [f"registered as measuring: {r}" for r in sorted(registrations - before[1])
               if r.endswith(".json") and _in_group(r)]
            + [f"scratch {paths.data_dir() / 'scratch' / d}" for d in sorted(scratch - before[2])
               if _scratch_of(d, pids)])


@pytest.fixture(autouse=True)
def nothing_left_by_the_test() -> Iterator[None]:
    """After each test: none of this session's launchers, daemons or cores runs, and no network
    namespace, registration as measuring (/run/mpiarena/measuring) or scratch directory of the
    test's (of the commands it started, or of this process) is left, after a grace of LEFT_GRACE
    for exits. About a millisecond a test where nothing is left: cheaper than telling which
    tests started processes (an audit hook on process starts cost 0.2 us an audited call, 1.4 ms
    in each command the tests fork)."""
    children = len(CHILDREN)
    before = _traces()
    yield
    # mpiarena run inside this process starts its watchdog here, once for the whole session:
    # every command forked after it would then start none of its own
    assert watchdog._pipe is None, "a test ran mpiarena in the test process: use mpiarena()"
    pids = [*CHILDREN[children:], os.getpid()]
    deadline = time.monotonic() + LEFT_GRACE
    while (left := _left_since(before, pids)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left, f"left behind by this test: {', '.join(left)}"


def ours(namespaces: list[str], pids: list[int] | None = None) -> list[str]:
    """The namespaces this session made: those of the commands it started (or of pids), of the
    clusters it named (cluster_name), and of the cluster named for this process as a run's
    would be (slurm_fixture's); other test sessions on this machine may have theirs up."""
    pids = CHILDREN if pids is None else pids
    clusters = {emulated.run_name(pid) for pid in [*pids, os.getpid()]}
    doctors = {f"{netns.PREFIX}doctor-{pid}" for pid in pids}

    def named(ns: str) -> bool:
        name = ns[len(netns.PREFIX):].rsplit("-", 1)[0]
        return name in clusters or (name.startswith("t-") and name.endswith(f"-{SESSION}"))

    return [ns for ns in namespaces if ns in doctors or named(ns)]


@contextlib.contextmanager
def keeping_clusters(down_all: bool = False) -> Iterator[None]:
    """Between this machine's test sessions: `cluster down --all` takes every cluster that no
    live mpiarena owns, so a test with one up that no live process owns (kept by `cluster
    up`, or a claim being made) holds this shared, and the test that runs `cluster down --all`
    holds it alone (down_all)."""
    with open(paths.shared_dir(paths.machine_dir()) / "tests-clusters.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX if down_all else fcntl.LOCK_SH)
        yield


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """With --durations (make test): each test file's time (its tests' setup, call and
    teardown), the slowest first, after the slowest tests; pytest's short summary, which names
    each FAILED test, stays last."""
    if terminalreporter.config.option.durations is None:
        return
    per_file: dict[str, float] = defaultdict(float)
    for reports in terminalreporter.stats.values():
        for report in reports:
            if isinstance(report, pytest.TestReport):
                per_file[report.nodeid.split("::")[0]] += report.duration
    if not per_file:
        return
    terminalreporter.write_sep("=", f"time per file, {sum(per_file.values()):.0f} s in all")
    ranked = sorted(per_file.items(), key=lambda kv: -kv[1])
    shown = [(path, s) for path, s in ranked if s >= 1.0]
    for path, seconds in shown:
        terminalreporter.write_line(f"{seconds:7.1f}s {path}")
    if rest := ranked[len(shown):]:
        terminalreporter.write_line(f"{sum(s for _, s in rest):7.1f}s {len(rest)} more files, "
                                    "under 1 s each")


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
