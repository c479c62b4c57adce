"""Find every implementation on this machine: Debian's, PATH's, PyPI prefixes, user prefixes,
and what each family finds itself."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..base.paths import more_impls_dirs
from . import modules, pypi
from .base import Found, Implementation
from .registry import families, family_named
from .wrappers import identify


@dataclass(frozen=True)
class _Candidate:
    """A place an MPI may live."""

    name: str | None  # None: named after the family and version its wrapper reports
    origin: str
    wrapper: Path
    launcher: Path
    prefix: Path | None
    env: dict[str, str]
    cached: bool = False  # installed by `releases` for a bisection (pypi.CACHED)


def _candidates(user: dict[str, Path], impls_dir: Path) -> Iterator[_Candidate]:
    """Every place an MPI may live."""
    for wrapper, launcher in (pair for f in families() for pair in f.debian):
        if Path(wrapper).exists():
            yield _Candidate(None, "debian", Path(wrapper), Path(launcher), None, {})
    if on_path := shutil.which("mpicc"):
        yield _Candidate(None, "path", Path(on_path), Path(on_path).with_name("mpiexec"), None,
                         {})
    for prefix in (p for d in (impls_dir, *more_impls_dirs()) for p in pypi.installed_prefixes(d)):
        marker = pypi.read_marker(prefix)
        mpicc, mpiexec = pypi.wrapper_and_launcher(prefix)
        yield _Candidate(pypi.impl_id(marker), "pypi", mpicc, mpiexec,
                         prefix, family_named(marker["family"]).run_env(prefix),
                         pypi.is_cached(prefix))
    for name, prefix in user.items():
        bin_dir = prefix / "bin"
        env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
        yield _Candidate(name, "user", bin_dir / "mpicc", bin_dir / "mpiexec", prefix, env)


def discover(user: dict[str, Path], impls_dir: Path, with_modules: bool = False
             ) -> list[Found]:
    """Every implementation found, usable or not, each under a unique stable id; with_modules,
    also those every module on MODULEPATH offers (each loaded once: the listings only, since a
    command that runs one names it, --impl module:NAME, and select loads that one alone)."""
    found = _mpi_wrappers(user, impls_dir)
    for family in families():
        found += family.detect()
    return found + (modules.discover_modules() if with_modules else [])


def _mpi_wrappers(user: dict[str, Path], impls_dir: Path) -> list[Found]:
    """The families found by their compiler wrapper, told apart by asking it."""
    found: list[Found] = []
    seen: set[Path] = set()
    ids: set[str] = set()
    for c in _candidates(user, impls_dir):
        real = c.wrapper.resolve()
        if real in seen:
            continue
        seen.add(real)
        label = c.name or str(c.wrapper)
        if not c.wrapper.exists():
            found.append(Found(label, problem=f"no compiler wrapper at {c.wrapper}",
                               fix="point --impl NAME=PREFIX at a prefix holding bin/mpicc"))
            continue
        env = dict(os.environ)
        env.update(c.env)
        kind = identify(c.wrapper, env)
        if kind is None:
            known = ", ".join(f.name for f in families() if f.wrapper_pattern)
            found.append(Found(label, problem=f"{c.wrapper} is not the compiler wrapper of a "
                               f"family mpiarena knows ({known}), or it does not run",
                               fix=f"run '{c.wrapper} -v' to see why"))
            continue
        family, version = kind
        impl_id = c.name or f"{family}-{version}"
        if impl_id in ids:
            impl_id = f"{impl_id}-{c.origin}"
        ids.add(impl_id)
        if not c.launcher.exists():
            found.append(Found(impl_id, problem=f"no launcher beside the wrapper ({c.launcher})",
                               fix="install the implementation's runtime package"))
            continue
        found.append(Found(impl_id, Implementation(impl_id, family, version, c.origin, c.wrapper,
                                                   c.launcher, c.prefix,
                                                   tuple(sorted(c.env.items()))),
                           cached=c.cached))
    return found


def with_floor(chosen: list[Implementation], found: list[Found],
               benchmarks: Sequence[str]) -> list[Implementation]:
    """The chosen implementations and the machine floor after them, where two or more are
    compared, none of them is the floor, it is found usable and it measures one of the
    benchmarks: a comparison on this machine has the floor beside it, named or not. Scripted
    libraries (impls/scripted.py) measure nothing of this machine: none beside them."""
    floors = [f.impl for f in found if f.impl is not None and family_named(f.impl.family).floor]
    if len(chosen) < 2 or not floors or \
            any(family_named(i.family).floor or family_named(i.family).scripted for i in chosen):
        return chosen
    measures = family_named(floors[0].family).benchmarks
    return [*chosen, floors[0]] if not measures or set(measures) & set(benchmarks) else chosen
