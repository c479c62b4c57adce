"""Compile the measurement core against one implementation, cached by implementation and source."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ..base import core_env, paths, tools
from ..base.errors import ArenaError
from ..impls import Implementation, family_of, scripted
from ..impls.base import MPI_EXT, Family
from ..impls.registry import reference

KERNELS = Path(__file__).parent.parent / "kernels"
CFLAGS = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror"]
# The driver every family's core is built from, each file using only those after it (core.h lists
# what each does; tests/test_kernel_calls.py checks that none uses a file that uses it); a family
# adds its transport module and whatever else it needs (impls/: kernel_modules).
DRIVER = ("driver.c", "cell.c", "commands.c", "validate.c", "timing_loop.c", "timing_barrier.c",
          "timing_window.c", "clock.c", "bench_p2p.c", "bench_coll.c", "bench_cost.c",
          "bench_loggp.c", "bench_app.c", "buffers.c", "ext.c", "sync.c", "extras.c", "faults.c",
          "crash.c", "benchmarks.c", "job.c")
HEADERS = ("arena.h", "core.h", "ext.h", "mpi_type.h")


@dataclass(frozen=True)
class Build:
    impl: Implementation
    binary: Path
    wrapper_flags: str  # what the wrapper adds (its -show / --showme)
    cflags: str
    version_string: str  # the library's own (MPI_Get_library_version)


def run_with(argv: list[str], impl: Implementation, cwd: Path | None = None
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, env=impl.environ(), cwd=cwd,
                          stdin=subprocess.DEVNULL, timeout=300)


def core_sources(family: Family) -> list[Path]:
    """The C files of a core of family: the driver's and the family's modules."""
    return [KERNELS / s for s in (*DRIVER, *family.kernel_modules)]


def _sources(impl: Implementation) -> list[Path]:
    return core_sources(family_of(impl))


def source_digest(sources: list[Path], *words: str) -> str:
    """The cache key of a build: its sources' bytes and whatever else decides the output."""
    h = hashlib.sha256()
    for src in sources:
        h.update(src.read_bytes())
    h.update("\0".join([*words, *CFLAGS]).encode())
    return h.hexdigest()[:16]


def _key(impl: Implementation, show: str) -> str:
    return source_digest([*_sources(impl), *(KERNELS / h for h in HEADERS)], impl.id,
                   str(impl.wrapper.resolve()), show)


@contextlib.contextmanager
def staged(dest: Path) -> Iterator[Path]:
    """A temporary directory beside dest that becomes dest if the block succeeds, so no half
    build is ever kept (another mpiarena's, made from the same sources meanwhile, is kept)."""
    tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=dest.parent))
    try:
        yield tmp
        tmp.chmod(0o755)
        try:
            tmp.rename(dest)
        except OSError:
            if not dest.is_dir():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _first_error(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error" in ln.lower()]
    return (errors or lines or ["no output"])[0][:300]


def build_core(impl: Implementation) -> Build:
    """The core built against impl; compiled only when the implementation or the sources changed."""
    if family_of(impl).scripted:
        return _scripted(impl)
    if lacks_compiler(impl):
        raise tools.MissingTool(impl.wrapper.name, f"building the core of {impl.id}")
    try:
        show = run_with([str(impl.wrapper), *family_of(impl).wrapper_flags(impl)],
                        impl).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ArenaError(f"{impl.id}: compiler wrapper {impl.wrapper} does not run ({e}); "
                         "reinstall it or leave it out with --impl") from e
    dest = paths.builds_dir() / f"{impl.slug}-{_key(impl, show)}"
    if not (dest / "version.txt").exists():
        _check_compiler(impl, show)
        _compile(impl, dest)
    return Build(impl, dest / "arena", show, " ".join(CFLAGS),
                 (dest / "version.txt").read_text())


def _scripted(impl: Implementation) -> Build:
    """A scripted library's core: the scripted core and its script (the implementation's
    prefix) kept as a built core is, where the rank user runs it (impls/scripted.py)."""
    assert impl.prefix is not None
    version = scripted.version_of(impl.prefix)
    core = scripted.core_text()
    dest = paths.builds_dir() / \
        f"{impl.slug}-{source_digest([impl.prefix], core)}"
    if not dest.is_dir():
        with staged(dest) as tmp:
            (tmp / "script.toml").write_text(impl.prefix.read_text())
            (tmp / "arena").write_text(core)
            (tmp / "script.toml").chmod(0o644)
            (tmp / "arena").chmod(0o755)
    return Build(impl, dest / "arena", "", "", version)


def lacks_compiler(impl: Implementation) -> bool:
    """True for PVM and raw TCP, whose wrapper is the C compiler, where none was on PATH."""
    return impl.wrapper.name in tools.COMPILERS and not shutil.which(impl.wrapper)


def _check_compiler(impl: Implementation, show: str) -> None:
    """One line where the C compiler an MPI wrapper calls (the first word of its -show) is
    missing, before the build fails on it (PVM's and raw TCP's wrapper is the compiler)."""
    compiler = show.split()[0] if show.split() else ""
    if impl.wrapper.name in tools.COMPILERS or not compiler or \
            shutil.which(compiler, path=impl.environ().get("PATH")):
        return
    if Path(compiler).name in tools.COMPILERS:
        raise tools.MissingTool(Path(compiler).name, f"building the core of {impl.id}")
    raise ArenaError(f"{impl.id}: its wrapper compiles with {compiler}, which is not on PATH: "
                     "install it, or leave the implementation out with --impl")


def build_cores(impls: list[Implementation]) -> list[Build | ArenaError]:
    """build_core for each implementation, in order, the compilers run side by side (one per
    core: a first run builds every library's core, 1.6 s each here)."""
    def one(impl: Implementation) -> Build | ArenaError:
        try:
            return build_core(impl)
        except ArenaError as e:
            return e
    with ThreadPoolExecutor(max_workers=max(1, min(len(impls), os.cpu_count() or 1))) as pool:
        return list(pool.map(one, impls))


class NothingBuilt(ArenaError):
    """No core of a run's implementations could be built."""


def build_all(impls: list[Implementation], explicit: bool,
              warn: Callable[[str], None]) -> dict[str, Build]:
    """The core for each implementation; one that fails is skipped with a warning (one for
    all those a missing compiler stops), unless the user named it (explicit): then its error
    stops the run."""
    builds = {}
    missing: dict[str, list[str]] = {}  # a missing compiler's name -> the ids it stops
    for impl, built in zip(impls, build_cores(impls), strict=True):
        if isinstance(built, ArenaError):
            if explicit:
                raise built
            if isinstance(built, tools.MissingTool):
                missing.setdefault(built.tool.name, []).append(impl.id)
            else:
                warn(f"skipping {built}")
            continue
        builds[impl.id] = built
    if not builds:
        if len(missing) == 1:
            name, ids = next(iter(missing.items()))
            raise NothingBuilt(str(tools.MissingTool(name, f"building the cores of "
                                                           f"{', '.join(ids)}")))
        raise NothingBuilt("no implementation could be built; run 'mpiarena doctor'")
    for name, ids in missing.items():
        their = "its core" if len(ids) == 1 else "their cores"
        warn(f"skipping {', '.join(ids)}: {tools.MissingTool(name, f'building {their}')}")
    return builds


def build_baseline() -> Path:
    """The core without any library (cc, the reference family's modules): `--baseline` is the
    memory baseline."""
    sources = core_sources(reference())
    headers = [KERNELS / h for h in HEADERS]
    dest = paths.builds_dir() / f"baseline-{source_digest([*sources, *headers], 'cc')}"
    if (dest / "arena").exists():
        return dest / "arena"
    if (cc := tools.compiler()) is None:
        raise tools.MissingTool("cc", "the memory baseline")
    try:
        with staged(dest) as tmp:
            done = subprocess.run([str(cc), *CFLAGS, "-o", str(tmp / "arena"), *map(str, sources)],
                                  capture_output=True, text=True, stdin=subprocess.DEVNULL,
                                  timeout=300)
            if done.returncode != 0:
                raise ArenaError(f"building the memory baseline with cc failed: "
                                 f"{_first_error(done.stderr + done.stdout)}")
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ArenaError(f"building the memory baseline failed: {e}") from e
    return dest / "arena"


def run_baseline(bench: str, size: int, np_: int) -> dict[str, float]:
    """Resident bytes of a process doing a cell's work without the library: at start, after
    the work, and its peak (base_rss_init, base_rss, base_peak)."""
    try:
        done = subprocess.run([str(build_baseline()), "--baseline", bench, str(size), str(np_)],
                              capture_output=True, text=True, stdin=subprocess.DEVNULL,
                              timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ArenaError(f"the memory baseline did not run: {e}") from e
    parts = done.stdout.split()
    if done.returncode != 0 or len(parts) != 4 or parts[0] != "baseline":
        raise ArenaError(f"the memory baseline failed: {_first_error(done.stderr + done.stdout)}")
    return dict(zip(("base_rss_init", "base_rss", "base_peak"), map(float, parts[1:]),
                    strict=True))


def build_pmpi(impl: Implementation) -> Path:
    """The per-call profiler (kernels/pmpi.c) as a shared library for impl, cached like the core,
    with the family's start fixes (LAM's iovec fix, so that any program preloading it starts)."""
    return _shared_library(impl, "pmpi", ("pmpi.c", *family_of(impl).start_fixes))


def build_start_fixes(impl: Implementation) -> Path | None:
    """What any program of impl's family must have preloaded to start on this machine, as a
    shared library (LAM 7.1.4: its iovec fix); None where nothing is needed."""
    fixes = family_of(impl).start_fixes
    return _shared_library(impl, "fixes", fixes) if fixes else None


def _shared_library(impl: Implementation, name: str, files: tuple[str, ...]) -> Path:
    sources = [KERNELS / s for s in files]
    key = source_digest(sources, impl.id, str(impl.wrapper.resolve()))
    dest = paths.builds_dir() / f"{impl.id}-{name}-{key}"
    if not (dest / f"libarena_{name}.so").exists():
        with staged(dest) as tmp:
            compile_with(impl, sources, tmp / f"libarena_{name}.so", shared=True)
    return dest / f"libarena_{name}.so"


def compile_with(impl: Implementation, sources: list[Path], output: Path,
                 shared: bool = False) -> Path:
    """Compile sources with impl's wrapper into output (a shared library if shared)."""
    extra = ["-shared", "-fPIC"] if shared else []
    try:
        done = run_with([str(impl.wrapper), *CFLAGS, *extra, "-o", str(output),
                     *map(str, sources)], impl, cwd=output.parent)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ArenaError(f"{impl.id}: {impl.wrapper} did not run: {e}") from e
    if done.returncode != 0:
        names = " ".join(s.name for s in sources)
        raise ArenaError(f"{impl.id}: compiling {names} with {impl.wrapper} failed: "
                         f"{_first_error(done.stderr + done.stdout)}")
    return output


def _compile(impl: Implementation, dest: Path) -> None:
    """Compile and probe the core in a staged directory that becomes dest."""
    try:
        with staged(dest) as tmp:
            _compile_into(impl, tmp)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ArenaError(f"{impl.id}: building the core failed: {e}") from e


def _compile_into(impl: Implementation, tmp: Path) -> None:
    """Build the core in tmp, check that it starts, keep its library version string."""
    done = run_with([str(impl.wrapper), *CFLAGS, "-o", str(tmp / "arena"),
                 *map(str, _sources(impl)), *family_of(impl).link_flags], impl, cwd=tmp)
    if done.returncode != 0:
        raise ArenaError(f"{impl.id}: building the core with {impl.wrapper} failed: "
                         f"{_first_error(done.stderr + done.stdout)}; check that the "
                         "wrapper compiles a hello-world, or leave it out with --impl")
    probe = run_with([str(tmp / "arena"), "--library-version"], impl, cwd=tmp)
    line = probe.stdout.strip()
    if probe.returncode != 0 or not line.startswith("version\t"):
        raise ArenaError(f"{impl.id}: the core built but does not start: "
                         f"{_first_error(probe.stderr + probe.stdout)}")
    version = core_env.unescape(line.split("\t", 1)[1]).strip()
    (tmp / "version.txt").write_text(version)


# SMPI's smpicc force-includes a header that redefines malloc, which clashes with driver.c's
# <malloc.h>; ARENA_SMPI: mod_mpi.c leaves out MPI_T (SMPI has none) and its own communicator
SMPI_FLAGS = ("-DSMPI_NO_OVERRIDE_MALLOC", "-DARENA_SMPI")


@dataclass(frozen=True)
class SimulatedBuild:
    binary: Path  # a shared object smpirun loads once per simulated rank
    cflags: str


def build_simulated(smpicc: Path, version: str) -> SimulatedBuild:
    """The core built with SimGrid's smpicc (the MPI family's modules), cached by source."""
    sources = [KERNELS / s for s in (*DRIVER, "mod_mpi.c", *MPI_EXT, "apps.c")]
    flags = [*CFLAGS, *SMPI_FLAGS]
    key = source_digest([*sources, *(KERNELS / h for h in HEADERS)], "smpi", version,
                        str(smpicc.resolve()), *SMPI_FLAGS)
    dest = paths.builds_dir() / f"smpi-{version}-{key}"
    if not (dest / "arena").exists():
        try:
            with staged(dest) as tmp:
                done = subprocess.run([str(smpicc), *flags, "-o", str(tmp / "arena"),
                                       *map(str, sources), "-lm"], capture_output=True,
                                      text=True, stdin=subprocess.DEVNULL, timeout=300, cwd=tmp)
                if done.returncode != 0:
                    raise ArenaError(f"building the core with {smpicc} failed: "
                                     f"{_first_error(done.stderr + done.stdout)}")
        except (OSError, subprocess.TimeoutExpired) as e:
            raise ArenaError(f"building the core with {smpicc} failed: {e}") from e
    return SimulatedBuild(dest / "arena", " ".join(flags))
