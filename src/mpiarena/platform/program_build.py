"""The user's program once per MPI library, for `mpiarena program`: built from a source tree by its
own build command, compiled from one source file, or prebuilt; each binary checked to load the
library it is run with."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..base import paths, tools
from ..base.errors import ArenaError
from ..impls import Implementation, family_of
from ..model.programs import BuiltProgram
from .build import Build, build_core, run_with, source_digest, staged

BUILD_TIMEOUT = 600.0  # seconds a build command may run before its process group is killed
SOURCE_FLAGS = ("-O2",)  # a single source file's flags: user code, so no -Werror
TAIL = 5  # lines of a failed build's output in its warning
# the variable naming the wrapper that compiles a single source file, by its suffix
LANGUAGES = {".c": "MPICC", ".cc": "MPICXX", ".cpp": "MPICXX", ".cxx": "MPICXX", ".C": "MPICXX",
             ".f90": "MPIFC", ".F90": "MPIFC", ".f": "MPIF77", ".F": "MPIF77"}
# the wrappers beside a library's mpicc (with its suffix: mpicxx.mpich, mpic++.openmpi,
# mpif77.lam), by the variable a build reads; the first name found is taken
COMPANIONS = {"MPICXX": ("mpicxx", "mpic++", "mpiCC"), "MPIFC": ("mpifort", "mpif90", "mpif77"),
              "MPIF90": ("mpif90", "mpifort"), "MPIF77": ("mpif77", "mpifort", "mpif90")}
# the commands a build may call by name, put first on its PATH, by the variable they run
SHIMS = {"mpicc": "MPICC", "mpicxx": "MPICXX", "mpic++": "MPICXX", "mpiCC": "MPICXX",
         "mpifort": "MPIFC", "mpif90": "MPIF90", "mpif77": "MPIF77"}
MPI_LIBRARY = re.compile(r"lib(mpi|lam)[\w+-]*\.so")  # libmpi, libmpich, libmpi_cxx, liblam...
LDD_LINE = re.compile(r"^\s*(\S+)\s+=>\s+(.*?)(?:\s+\(0x[0-9a-f]+\))?\s*$")
DONE = ".mpiarena-built"  # in a tree build's directory once its command succeeded


@dataclass(frozen=True)
class BuildRequest:
    """How `mpiarena program` was told to get the program."""

    program: list[str]  # PROGRAM ARGS as given after `--` (only ARGS with --bin)
    src: Path | None = None  # --src DIR: copied once per implementation
    build: str | None = None  # --build CMD: a shell command run inside that copy
    bins: dict[str, Path] = field(default_factory=dict)  # --bin ID=PATH, prebuilt per library


@dataclass(frozen=True)
class LinkedLibrary:
    """An MPI library a binary loads, as ldd resolves it (path None: not found)."""

    name: str
    path: Path | None


class BuildFailed(Exception):
    """One implementation's build failed: warned about, the others go on."""

    def __init__(self, reason: str, output: str = ""):
        super().__init__(f"{reason}; it said:\n{_last(output)}" if output else reason)
        self.reason = reason


def build_programs(impls: list[Implementation], req: BuildRequest,
                   warn: Callable[[str], None]) -> dict[str, BuiltProgram]:
    """The program each implementation runs, by implementation id; a build that fails for one
    is warned about and left out, unless it fails for all."""
    for impl in impls:
        if not family_of(impl).pmpi:
            raise ArenaError(f"{impl.id} is not an MPI library: leave it out with --impl")
    make = _maker(impls, req)
    built: dict[str, BuiltProgram] = {}
    failed: list[str] = []
    for impl in impls:
        try:
            built[impl.id] = make(impl, warn)
        except BuildFailed as e:
            warn(str(e))
            failed.append(e.reason)
    if not built:
        raise ArenaError("the program was built for no library: " + "; ".join(failed))
    return built


Builder = Callable[[Implementation, Callable[[str], None]], BuiltProgram]


def _maker(impls: list[Implementation], req: BuildRequest) -> Builder:
    """How each implementation gets its program, once the request is checked."""
    if req.bins:
        if req.src or req.build:
            raise ArenaError("--bin gives prebuilt binaries: leave out --src and --build")
        known = {i.id for i in impls}
        for impl_id, path in req.bins.items():
            if impl_id not in known:
                raise ArenaError(f"--bin {impl_id}={path}: no library {impl_id} in this run; "
                                 f"known: {', '.join(sorted(known))}")
            if not (path.is_file() and os.access(path, os.X_OK)):
                raise ArenaError(f"--bin {impl_id}={path}: not an executable file")
        if missing := [i.id for i in impls if i.id not in req.bins]:
            raise ArenaError(f"--bin gives no binary for {', '.join(missing)}: add "
                             f"--bin {missing[0]}=PATH or leave it out with --impl")
        return lambda impl, warn: _prebuilt(impl, req, warn)
    if not req.program:
        raise ArenaError("give the program after --: a binary your --build makes, a source "
                         "file (prog.c, prog.cc, prog.f90), or with --bin ID=PATH its arguments")
    if req.src is not None:
        if not req.src.is_dir():
            raise ArenaError(f"--src {req.src}: not a directory")
        return lambda impl, warn: _from_tree(impl, req, warn)
    if req.build:
        raise ArenaError("--build runs in a copy of the source tree: give it with --src DIR")
    if Path(req.program[0]).suffix not in LANGUAGES:
        raise ArenaError(f"{req.program[0]}: a program is built per library: give --src DIR "
                         "--build CMD, a source file (prog.c, prog.cc, prog.f90), or a binary "
                         "per library with --bin ID=PATH")
    if not Path(req.program[0]).is_file():
        raise ArenaError(f"{req.program[0]}: no such source file")
    return lambda impl, warn: _from_source(impl, req, warn)


def wrappers(impl: Implementation) -> dict[str, Path]:
    """The library's compiler wrappers by variable (MPICC, MPICXX, MPIFC, MPIF90, MPIF77): its
    mpicc, and those beside it named like it."""
    found = {"MPICC": impl.wrapper}
    name = impl.wrapper.name
    if name.startswith("mpicc"):
        suffix = name.removeprefix("mpicc")
        for var, names in COMPANIONS.items():
            beside = (impl.wrapper.with_name(n + suffix) for n in names)
            if (path := next((p for p in beside if p.is_file()), None)) is not None:
                found[var] = path
    return found


def _core(impl: Implementation) -> Build:
    try:
        return build_core(impl)
    except ArenaError as e:
        raise BuildFailed(str(e)) from e


def _prebuilt(impl: Implementation, req: BuildRequest, warn: Callable[[str], None]
              ) -> BuiltProgram:
    binary = req.bins[impl.id].absolute()
    links = _check_links(impl, binary, _core(impl), warn,
                         f"give the binary built with {impl.id}")
    return BuiltProgram(impl.id, [str(binary), *req.program], "bin", links)


def _from_source(impl: Implementation, req: BuildRequest, warn: Callable[[str], None]
                 ) -> BuiltProgram:
    """One source file compiled with the wrapper of its language, cached by its bytes."""
    source = Path(req.program[0]).resolve()
    var = LANGUAGES[source.suffix]
    wrapper = wrappers(impl).get(var)
    if wrapper is None:
        raise BuildFailed(f"{impl.id}: no {var} wrapper beside {impl.wrapper} to compile "
                          f"{source.name}")
    core = _core(impl)
    key = source_digest([source], source.name, impl.id, str(wrapper.resolve()), core.wrapper_flags,
                  *SOURCE_FLAGS)
    dest = paths.builds_dir() / f"app-{impl.slug}-{source.stem}-{key}"
    binary = dest / source.stem
    cached = binary.is_file()
    if not cached:
        try:
            with staged(dest) as tmp:
                done = run_with([str(wrapper), *SOURCE_FLAGS, "-o", str(tmp / source.stem),
                             str(source)], impl, cwd=tmp)
                if done.returncode != 0:
                    said = done.stderr + done.stdout
                    errors = [ln for ln in said.splitlines() if "error" in ln.lower()]
                    raise BuildFailed(f"{impl.id}: compiling {source.name} with {wrapper} "
                                      "failed", "\n".join(errors[:TAIL]) or said)
        except (OSError, subprocess.TimeoutExpired) as e:
            if not binary.is_file():  # else another process built it meanwhile
                raise BuildFailed(f"{impl.id}: compiling {source.name} failed: {e}") from e
    links = _check_links(impl, binary, core, warn, f"build it with {impl.id}'s wrapper alone")
    return BuiltProgram(impl.id, [str(binary), *req.program[1:]], "source", links, cached)


def _from_tree(impl: Implementation, req: BuildRequest, warn: Callable[[str], None]
               ) -> BuiltProgram:
    """The source tree copied and built with the build command in the library's environment,
    cached by the tree's bytes, the command and the library; PROGRAM found in the copy."""
    assert req.src is not None
    core = _core(impl)
    files = _files(req.src)
    key = source_digest([req.src / f for f in files], *map(str, files), req.build or "", impl.id,
                  str(impl.wrapper.resolve()), core.wrapper_flags)
    # built where it stays (a build may write its own path into what it makes: CMake's RPATH)
    dest = paths.builds_dir() / f"app-{impl.slug}-{key}"
    with _locked(paths.builds_dir()):
        cached = (dest / DONE).is_file()
        if not cached:
            _build_tree(impl, req, dest)
    first = Path(req.program[0])
    binary = first if first.is_absolute() else dest / "src" / first
    if not binary.is_file():
        made = sorted(set(_files(dest / "src")) - set(files),
                      key=lambda p: (not os.access(dest / "src" / p, os.X_OK), str(p)))
        left = ", ".join(map(str, made[:5])) + (", ..." if len(made) > 5 else "") \
            if made else "no new file"
        raise ArenaError(f"{impl.id}: the build left no {first} (looked for {binary}); "
                         f"it made {left}")
    links = _check_links(impl, binary, core, warn,
                         "make the build compile with $MPICC, from a clean tree")
    return BuiltProgram(impl.id, [str(binary), *req.program[1:]], "build", links, cached)


def _build_tree(impl: Implementation, req: BuildRequest, dest: Path) -> None:
    """Copy the tree into dest/src and run the build command there, output in dest/build.log;
    dest removed unless it succeeds (its log kept beside it, as dest.failed.log)."""
    assert req.src is not None
    shutil.rmtree(dest, ignore_errors=True)  # what a build killed outright left
    failed_log = dest.with_name(f"{dest.name}.failed.log")
    ok = False
    try:
        dest.mkdir()
        shutil.copytree(req.src, dest / "src", symlinks=True)
        env = _environment(impl, dest / "wrappers")
        log = dest / "build.log"
        code = _bash(req.build, dest / "src", env, log) if req.build else 0
        if code != 0:
            how = f"was killed after {BUILD_TIMEOUT:.0f} s" if code is None \
                else f"failed with exit status {code}"
            log.replace(failed_log)
            raise BuildFailed(f"{impl.id}: the build ({req.build}) {how} (log: {failed_log})",
                              failed_log.read_text(errors="replace") or "(no output)")
        (dest / DONE).write_text(f"{req.build or ''}\n")
        failed_log.unlink(missing_ok=True)
        ok = True
    except OSError as e:
        raise BuildFailed(f"{impl.id}: copying {req.src} for the build failed: {e}") from e
    finally:
        if not ok:
            shutil.rmtree(dest, ignore_errors=True)


def _environment(impl: Implementation, shims: Path) -> dict[str, str]:
    """The library's environment with its wrappers named: MPICC and the others it has, and as
    commands first on PATH (a build calling plain mpicc gets this library's), then the
    wrapper's directory."""
    tools = wrappers(impl)
    shims.mkdir()
    for name, var in SHIMS.items():
        if var in tools:
            (shims / name).write_text(f'#!/bin/sh\nexec "{tools[var]}" "$@"\n')
            (shims / name).chmod(0o755)
    env = impl.environ()
    env.update({var: str(path) for var, path in tools.items()})
    env["PATH"] = os.pathsep.join([str(shims), str(impl.wrapper.parent), env.get("PATH", "")])
    return env


def _bash(command: str, cwd: Path, env: dict[str, str], log: Path) -> int | None:
    """Exit status of `bash -c command` (None: killed at BUILD_TIMEOUT), output to log; its
    whole process group is killed when it ends, so nothing it started outlives it."""
    with open(log, "ab") as out:
        proc = subprocess.Popen(["bash", "-c", command], cwd=cwd, env=env, stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            return proc.wait(timeout=BUILD_TIMEOUT)
        except subprocess.TimeoutExpired:
            out.write(f"\nmpiarena: killed after {BUILD_TIMEOUT:.0f} s\n".encode())
            return None
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """Hold an exclusive lock on directory: one tree build at a time across processes."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _files(root: Path) -> list[Path]:
    """The regular files under root (symbolic links to them included), relative, sorted."""
    return sorted(Path(top, name).relative_to(root) for top, _, names in os.walk(root)
                  for name in names if Path(top, name).is_file())


def _last(text: str) -> str:
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    return "\n".join(f"  {ln[:300]}" for ln in lines[-TAIL:])


def mpi_libraries(binary: Path, impl: Implementation) -> list[LinkedLibrary]:
    """The MPI libraries binary loads with impl's environment, as ldd resolves them ([]: none,
    or not a dynamic executable)."""
    tools.require("ldd", f"checking which MPI library {binary.name} loads")
    try:
        done = subprocess.run(["ldd", str(binary)], capture_output=True, text=True,
                              env=impl.environ(), stdin=subprocess.DEVNULL, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ArenaError(f"ldd {binary} did not run: {e}") from e
    found = []
    for line in done.stdout.splitlines():
        if (m := LDD_LINE.match(line)) and MPI_LIBRARY.match(m.group(1)):
            where = m.group(2)
            found.append(LinkedLibrary(m.group(1), None if where == "not found" else Path(where)))
    return found


def _check_links(impl: Implementation, binary: Path, core: Build, warn: Callable[[str], None],
                 fix: str) -> str:
    """The MPI library binary loads, checked to be the one the core built for impl loads; a
    binary that loads none is warned about (static, or a script)."""
    have = mpi_libraries(binary, impl)
    if not have:
        warn(f"{binary} loads no MPI library (static, or a script?): mpiarena cannot check "
             f"that it runs {impl.id}")
        return ""
    if lost := [so.name for so in have if so.path is None]:
        raise ArenaError(f"{binary}: the loader finds no {', '.join(lost)} with {impl.id}'s "
                         f"environment: {fix}")
    want = [so for so in mpi_libraries(core.binary, impl) if so.path is not None]
    wanted = {so.path.resolve() for so in want if so.path}
    match = next((so for so in have if so.path and so.path.resolve() in wanted), None)
    if match is None and want:
        raise ArenaError(f"{binary} is linked to {have[0].path}, not {impl.id}'s "
                         f"{want[0].path}: {fix}")
    return str((match or have[0]).path)
