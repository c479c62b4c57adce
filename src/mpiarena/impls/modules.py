"""Implementations a site offers as environment modules (Lmod, Environment Modules): every
module whose load puts an MPI compiler wrapper on PATH, named `module:NAME` and run with the
environment its load sets.

A load is evaluated, never exec'd: the module system prints Python code (`lmod python load X`,
`modulecmd.tcl python load X`) and only its assignments to os.environ are read from its syntax
tree. The family is whatever the wrapper says it is (wrappers.identify).
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ..base.errors import ArenaError
from ..base.records import MODULE_PREFIX
from .base import Found, Implementation
from .wrappers import identify

# Where Debian and the upstream installs put each system's command, after what the shell's
# init exported (LMOD_CMD, MODULES_CMD), which names the system in use.
LMOD = ("/usr/share/lmod/lmod/libexec/lmod",)
ENV_MODULES = ("/usr/share/modules/libexec/modulecmd.tcl", "/usr/lib/modulecmd.tcl")
WRAPPERS = ("mpicc",)
LAUNCHERS = ("mpiexec", "mpirun")
INSTALL = ("no environment module system found: install lmod (apt-get install lmod) or "
           "Environment Modules, or export LMOD_CMD / MODULES_CMD naming its command")
# CPython 3.11's ast.parse is not safe in threads at once ("AST constructor recursion depth
# mismatch", seen here): the loads run in a pool, their parses one at a time
_PARSING = threading.Lock()
_ANNOTATION = re.compile(r"\s*(\(.*\)|<.*>)\s*$")  # (default), (D), <aL> after a name


@dataclass(frozen=True)
class ModuleSystem:
    """One module system: its name and the command that evaluates modulefiles."""

    name: str  # lmod | environment-modules
    command: Path

    def python(self, *args: str) -> subprocess.CompletedProcess[str]:
        """`COMMAND python ARGS`: Python code on stdout, messages on stderr."""
        try:
            return subprocess.run([str(self.command), "python", *args], capture_output=True,
                                  text=True, timeout=60, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as e:
            return subprocess.CompletedProcess([], 1, "", f"{self.command} does not run: {e}")


@dataclass(frozen=True)
class Loaded:
    """What loading a module did: the variables it set (unsets are not applied), or why not."""

    env: dict[str, str]
    error: str | None


def systems() -> list[ModuleSystem]:
    """The module systems installed, the one the shell's init named first."""
    named = [("lmod", os.environ.get("LMOD_CMD")),
             ("environment-modules", os.environ.get("MODULES_CMD"))]
    defaults = [("lmod", p) for p in LMOD] + [("environment-modules", p) for p in ENV_MODULES]
    if home := os.environ.get("MODULESHOME"):
        defaults.insert(0, ("environment-modules", f"{home}/libexec/modulecmd.tcl"))
    found: list[ModuleSystem] = []
    seen: set[Path] = set()
    for name, command in named + defaults:
        if command and Path(command).is_file() and (real := Path(command).resolve()) not in seen:
            seen.add(real)
            if name not in (s.name for s in found):
                found.append(ModuleSystem(name, Path(command)))
    return found


def available(system: ModuleSystem) -> list[str]:
    """The modules `avail` lists (terse) on MODULEPATH, full names."""
    done = system.python("-t", "avail")
    names = (_ANNOTATION.sub("", line.strip()) for line in done.stderr.splitlines())
    return list(dict.fromkeys(n for n in names if n and not n.endswith((":", "/"))
                              and " " not in n))


def _one_line(text: str) -> str:
    """A module system's message as one line, without Lmod's banner and advice."""
    said = " ".join(text.split()).removeprefix("Lmod has detected the following error: ")
    for advice in (" While processing", " Please check", " Also make sure"):
        said = said.split(advice)[0]
    return said[:300] or "no message"


def _assigned(code: str) -> tuple[dict[str, str], bool]:
    """The os.environ assignments of the code a load printed, and its _mlstatus."""
    env: dict[str, str] = {}
    ok = True
    with _PARSING:
        tree = ast.parse(code)
    for node in tree.body:
        match node:
            case ast.Assign(targets=[ast.Subscript(
                    value=ast.Attribute(value=ast.Name(id="os"), attr="environ"),
                    slice=ast.Constant(value=str(key)))], value=ast.Constant(value=str(value))):
                env[key] = value
            case ast.Assign(targets=[ast.Name(id="_mlstatus")],
                            value=ast.Constant(value=bool(status))):
                ok = status
    return env, ok


def load(system: ModuleSystem, name: str) -> Loaded:
    """Evaluate `module load name` against this process's environment."""
    done = system.python("load", name)
    try:
        env, ok = _assigned(done.stdout)
    except SyntaxError:
        return Loaded({}, f"{system.name} printed what is not Python: {_one_line(done.stdout)}")
    if not ok or done.returncode != 0:
        return Loaded({}, _one_line(done.stderr))
    return Loaded(env, None)


def _added_dirs(env: dict[str, str]) -> list[Path]:
    """The PATH entries the load put before or after those already there."""
    before = set(os.environ.get("PATH", "").split(os.pathsep))
    return [Path(d) for d in env.get("PATH", "").split(os.pathsep) if d and d not in before]


def _first(dirs: list[Path], names: tuple[str, ...]) -> Path | None:
    return next((d / n for d in dirs for n in names if (d / n).is_file()), None)


def _mpi_like(name: str) -> bool:
    """Whether a module that cannot be told by its load (it failed) looks like an MPI."""
    return "mpi" in name.lower()


def _found(impl_id: str, system: ModuleSystem, name: str, listing: bool) -> Found | None:
    """The implementation a module offers; None: it offers none (listing: nor looks like one)."""
    loaded = load(system, name)
    if loaded.error is not None:
        if listing and not _mpi_like(name):
            return None
        return Found(impl_id, problem=f"'module load {name}' failed ({system.name}): "
                     f"{loaded.error}", fix="fix the modulefile or load it by hand to see why")
    dirs = _added_dirs(loaded.env)
    wrapper, launcher = _first(dirs, WRAPPERS), _first(dirs, LAUNCHERS)
    missing = [str(d) for d in dirs if not d.is_dir()]
    if wrapper is None and launcher is None:
        if missing and (not listing or _mpi_like(name)):
            return Found(impl_id, problem=f"module {name} puts {', '.join(missing)} on PATH, "
                         "which does not exist", fix="fix the prefix in its modulefile")
        if not listing:
            return Found(impl_id, problem=f"module {name} puts no MPI compiler wrapper "
                         "(mpicc) nor launcher on PATH",
                         fix="name a module of an MPI library ('mpiarena impls' lists them)")
        return None
    if wrapper is None:
        return Found(impl_id, problem=f"module {name} puts {launcher} on PATH but no compiler "
                     "wrapper (mpicc)", fix="load a module that offers the library's mpicc")
    env = {**os.environ, **loaded.env}
    if (kind := identify(wrapper, env)) is None:
        return Found(impl_id, problem=f"{wrapper} (module {name}) is not the compiler wrapper "
                     "of a family mpiarena knows, or it does not run",
                     fix=f"load the module and run '{wrapper.name} -v' to see why")
    launcher = _first([wrapper.parent], LAUNCHERS) or launcher
    if launcher is None:
        return Found(impl_id, problem=f"module {name} puts no launcher (mpiexec) on PATH",
                     fix="load a module that offers the library's runtime")
    family, version = kind
    return Found(impl_id, Implementation(
        impl_id, family, version, f"{system.name} module {name}", wrapper, launcher,
        wrapper.parent.parent, tuple(sorted(loaded.env.items()))))


def _offered() -> Iterator[tuple[str, ModuleSystem, str]]:
    """(id, system, module) for every module avail lists, ids unique across systems."""
    ids: set[str] = set()
    for system in systems():
        for name in available(system):
            impl_id = f"{MODULE_PREFIX}{name}"
            if impl_id in ids:
                impl_id = f"{impl_id}-{system.name}"
            ids.add(impl_id)
            yield impl_id, system, name


def discover_modules() -> list[Found]:
    """Every MPI the module systems offer on MODULEPATH, usable or not; nothing without one."""
    if not os.environ.get("MODULEPATH"):
        return []
    offered = list(_offered())
    with ThreadPoolExecutor(max_workers=4) as pool:
        found = pool.map(lambda o: _found(o[0], o[1], o[2], listing=True), offered)
        return [f for f in found if f is not None]


def resolve(impl_id: str) -> Implementation:
    """The implementation --impl module:NAME names (a full name, a short one such as mpich for
    its default version, or one `impls` listed as NAME-SYSTEM since two systems offer it), or
    the one line saying why there is none."""
    name = impl_id.removeprefix(MODULE_PREFIX)
    if not (have := systems()):
        raise ArenaError(f"--impl {impl_id}: {INSTALL}")
    if not os.environ.get("MODULEPATH"):
        raise ArenaError(f"--impl {impl_id}: MODULEPATH is empty; export MODULEPATH=DIR naming "
                         "where your site's modulefiles are (as 'module use DIR' does)")
    listed = {s: available(s) for s in have}
    named = [s for s in have if name.endswith(f"-{s.name}")]  # as _offered tells them apart
    if named:
        have, name = named, name.removesuffix(f"-{named[0].name}")
    for system in have:
        if any(n == name or n.startswith(f"{name}/") for n in listed[system]):
            found = _found(impl_id, system, name, listing=False)
            if found is not None and found.impl is not None:
                return found.impl
            if found is not None:
                raise ArenaError(f"--impl {impl_id}: {found.problem}; {found.fix}")
    modules = sorted({f"{MODULE_PREFIX}{n}" for names in listed.values() for n in names})
    raise ArenaError(f"--impl {impl_id}: no module {name} on MODULEPATH "
                     f"({', '.join(s.name for s in have)}); there: {', '.join(modules) or 'none'}")
