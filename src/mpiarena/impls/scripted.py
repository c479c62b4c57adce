"""Scripted libraries: the scripted core (scripted_core.py) started in place of a built core,
one per script in the directory MPIARENA_SCRIPTED names, so that the plan, the executor, the
store, the analysis and the reports run without an MPI library (docs/scripted.md). Known only
while that variable is set (impls/registry.py)."""

from __future__ import annotations

import os
import sys
import tomllib
from collections.abc import Mapping
from pathlib import Path

from ..base import core_env
from ..base.errors import ArenaError
from ..cluster.placement import Placement
from ..model.whatran import Cvar
from .base import Daemonless, Found, Implementation, Launch

SCRIPTED_VAR = "MPIARENA_SCRIPTED"  # a directory of scripts, NAME.toml each
CORE = Path(__file__).with_name("scripted_core.py")


def interpreter() -> Path:
    """A Python that the rank user can run: this one, else the system's (a venv's Python may
    lie under a home directory only its owner enters)."""
    for candidate in (Path(sys.executable).resolve(), Path("/usr/bin/python3").resolve()):
        if candidate.exists() and all(p.stat().st_mode & 0o001
                                      for p in (candidate, *candidate.parents)):
            return candidate
    return Path(sys.executable)


def core_text() -> str:
    """The scripted core as an executable file: its interpreter's line, then its source."""
    return f"#!{interpreter()} -IS\n{CORE.read_text()}"


def enabled() -> bool:
    """Whether scripted libraries are asked for (MPIARENA_SCRIPTED is set)."""
    return bool(os.environ.get(SCRIPTED_VAR))


def version_of(script: Path) -> str:
    """What the script's library says it is; ArenaError if the script is not TOML."""
    try:
        return str(tomllib.loads(script.read_text()).get("version", "scripted 1.0"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ArenaError(f"scripted library {script}: {e}; fix the script "
                         "(docs/scripted.md)") from e


class Scripted(Daemonless):
    """A library the scripted core plays: any rank count, one process for all its ranks."""

    name = "scripted"
    title = "a scripted library"
    order = 90
    kernel_modules: tuple[str, ...] = ()
    scripted = True
    install_hint = f"write NAME.toml into the directory {SCRIPTED_VAR} names (docs/scripted.md)"

    def detect(self) -> list[Found]:
        folder = Path(os.environ.get(SCRIPTED_VAR, ""))
        return [Found(p.stem, Implementation(p.stem, self.name, "1", "scripted",
                                             Path(sys.executable), CORE, p))
                for p in sorted(folder.glob("*.toml"))] if enabled() else []

    def launch(self, impl: Implementation, np: int, binding: str, as_root: bool) -> Launch:
        """The scripted core as built (platform/build.py), one process for every rank."""
        return Launch([], {core_env.NP: str(np), core_env.BIND: binding}, binding="none")

    def wrapper_flags(self, impl: Implementation) -> list[str]:
        return []

    def hosts_launch(self, impl: Implementation, placement: Placement) -> Launch:
        raise ArenaError(f"{impl.id}: a scripted library runs on this machine only")

    def transport(self, impl: Implementation, cvars: tuple[Cvar, ...] | None, version: str,
                  env: Mapping[str, str], said: str = "") -> tuple[str, str]:
        return "none: scripted", "the scripted core (impls/scripted_core.py)"


SCRIPTED = Scripted()
