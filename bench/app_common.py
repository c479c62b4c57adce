"""What the `mpiarena program` benchmarks share: bench/app_program.c built per library the way
`mpiarena program` builds a source file, a bare `mpiexec -n NP BINARY` of it (as the rank user when
root, as `mpiarena program` runs ranks), medians, and the machine's load."""

from __future__ import annotations

import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

from mpiarena.base import paths, users
from mpiarena.impls import Implementation, discover, select
from mpiarena.model.programs import BuiltProgram
from mpiarena.platform.program_build import BuildRequest, build_programs
from mpiarena.runner import cleanup
from mpiarena.system.procs import as_user, wait_until

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "app_program.c"
DEFAULT_IMPLS = ("mpich-4.0.2", "openmpi-4.1.4")
TAG = "MPIARENA_BENCH_TOKEN"  # inherited by every process a bench starts
TOKEN = uuid.uuid4().hex
NP = 2


def implementations(ids: list[str] | None) -> list[Implementation]:
    return select(discover({}, paths.impls_dir()), list(ids or DEFAULT_IMPLS))


def built(impls: list[Implementation], args: list[str]) -> dict[str, BuiltProgram]:
    """app_program.c compiled per library by `mpiarena program`'s own build (cached), with args."""
    def warn(line: str) -> None:
        print(f"warning: {line}", file=sys.stderr)
    return build_programs(impls, BuildRequest([str(SOURCE), *args]), warn)


@contextlib.contextmanager
def scratch() -> Iterator[Path]:
    """A directory the rank user can write in; removed, and every process this bench started
    gone (killed if still there after a while), on the way out."""
    os.environ[TAG] = TOKEN
    work = Path(tempfile.mkdtemp(prefix="mpiarena-appbench-", dir="/var/tmp"))
    work.chmod(0o777)
    try:
        yield work
    finally:
        # mpiarena's watchdog sweeps once the command has exited, then ends by itself
        wait_until(lambda: not cleanup.tagged_pids(TOKEN, TAG), within=15.0, step=0.1)
        left = [_name(pid) for pid in cleanup.tagged_pids(TOKEN, TAG)]
        cleanup.kill_tagged(TOKEN, grace=0.0, var=TAG)
        shutil.rmtree(work, ignore_errors=True)
        if left:
            print(f"warning: killed leftover processes: {', '.join(left)}", file=sys.stderr)


def _name(pid: int) -> str:
    try:
        return f"{pid} {(Path('/proc') / str(pid) / 'cmdline').read_bytes()[:200]!r}"
    except OSError:
        return str(pid)


def bare(impl: Implementation, argv: list[str], work: Path,
         env: dict[str, str] | None = None, np_: int = NP) -> float:
    """Wall seconds of a bare `mpiexec -n np_ argv` from its start to its exit, as the rank user
    when root (as `mpiarena program` runs ranks), its output to files like `mpiarena program`'s."""
    user = users.for_ranks()
    full = impl.environ({**os.environ, **(env or {})})
    if user is not None:
        full.update(HOME=user.home, USER=user.name, LOGNAME=user.name)
    here = Path(tempfile.mkdtemp(dir=work))
    here.chmod(0o777)
    with open(here / "stdout", "w") as out, open(here / "stderr", "w") as err:
        began = time.monotonic()
        code = subprocess.Popen([str(impl.launcher), "-n", str(np_), *argv], cwd=here, env=full,
                                stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                start_new_session=True, **as_user(user, None)).wait(600)
        wall = time.monotonic() - began
    if code != 0:
        raise SystemExit(f"error: bare {impl.launcher} -n {np_} {' '.join(argv)} exited {code}: "
                         f"{(here / 'stderr').read_text()[-500:]}")
    shutil.rmtree(here, ignore_errors=True)
    return wall


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def spread(xs: list[float]) -> str:
    """The interquartile range, as text."""
    q = statistics.quantiles(xs, n=4) if len(xs) > 1 else [xs[0]] * 3
    return f"IQR {q[0] * 1e3:.1f}-{q[2] * 1e3:.1f} ms"


def load_line() -> str:
    one, five, fifteen = os.getloadavg()
    return (f"load average {one:.2f} {five:.2f} {fifteen:.2f} on "
            f"{len(os.sched_getaffinity(0))} cores")


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"
