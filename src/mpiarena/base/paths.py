"""Where mpiarena keeps installed implementations, cached builds and scratch directories."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import ArenaError


def data_dir() -> Path:
    """MPIARENA_HOME, else /var/lib/mpiarena for root (ranks may run as another user), else XDG."""
    if env := os.environ.get("MPIARENA_HOME"):
        return Path(env)
    if os.geteuid() == 0:
        return Path("/var/lib/mpiarena")
    xdg = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(xdg) / "mpiarena"


def machine_dir() -> Path:
    """What every mpiarena on this machine sees whatever its MPIARENA_HOME: the emulated
    clusters (their namespaces are the machine's) and the runs measuring now. /run/mpiarena
    for root; a user who cannot write there makes no namespaces and sees only its own runs."""
    return Path("/run/mpiarena") if os.geteuid() == 0 else data_dir() / "machine"


def shared_dir(path: Path) -> Path:
    """Create path readable and searchable by every user (the rank user included); return it."""
    if blocked := next((p for p in [path, *path.parents] if p.exists() and not p.is_dir()),
                       None):
        raise ArenaError(f"{blocked} is not a directory, so mpiarena cannot keep {path} there: "
                         "remove it, or set MPIARENA_HOME to a directory")
    missing = [p for p in [path, *path.parents] if not p.exists()]
    for p in reversed(missing):
        p.mkdir(exist_ok=True)  # another thread or mpiarena may make it meanwhile
        p.chmod(0o755)
    if path.stat().st_uid == os.geteuid():
        path.chmod(path.stat().st_mode | 0o755)
    return path


def impls_dir() -> Path:
    return shared_dir(data_dir() / "impls")


def more_impls_dirs() -> list[Path]:
    """MPIARENA_IMPLS_PATH: more directories of `mpiarena install` prefixes, colon-separated
    (a site-wide install, or the builds only the tests use), searched after impls_dir()."""
    return [Path(d) for d in os.environ.get("MPIARENA_IMPLS_PATH", "").split(os.pathsep) if d]


def builds_dir() -> Path:
    return shared_dir(data_dir() / "builds")


def scratch_dir() -> Path:
    return shared_dir(data_dir() / "scratch")
