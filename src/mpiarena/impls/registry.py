"""The families of implementations: every module of this package that defines FAMILY.

Adding a message-passing library is one module here (plus a kernels/ module for a transport
that is not MPI): nothing else names a family.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from pathlib import Path

from ..base.errors import ArenaError
from . import scripted
from .base import Family


def families() -> tuple[Family, ...]:
    """Every family, in their `order`: each module of this package that defines FAMILY, and
    the scripted libraries while MPIARENA_SCRIPTED is set (impls/scripted.py)."""
    return (*_modules(), scripted.SCRIPTED) if scripted.enabled() else _modules()


@cache
def _modules() -> tuple[Family, ...]:
    """The families found by importing each module of this package, in their `order`."""
    found = []
    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
        module = importlib.import_module(f"{__package__}.{info.name}")
        if (family := getattr(module, "FAMILY", None)) is not None:
            found.append(family)
    return tuple(sorted(found, key=lambda f: (f.order, f.name)))


def family_named(name: str) -> Family:
    """The family called name."""
    for family in families():
        if family.name == name:
            return family
    known = ", ".join(f.name for f in families())
    raise ArenaError(f"unknown implementation family {name!r}: known are {known}")


def lineage(name: str) -> str:
    """What studies and suites may call the family of this name (itself if unknown here)."""
    return next((f.lineage for f in families() if f.name == name), name)


def reference() -> Family:
    """The family every library is held against (raw TCP)."""
    return next(f for f in families() if f.reference)
