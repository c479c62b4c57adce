"""Implementations: discovery, the families' launch rules, and selection by id."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..base.errors import ArenaError
from ..base.records import MODULE_PREFIX
from . import modules
from .base import Family, Found, Implementation, Launch
from .discover import discover
from .registry import families, family_named

__all__ = ["Found", "Implementation", "Launch", "discover", "families", "family_of",
           "parse_user_impls", "select"]


def family_of(impl: Implementation) -> Family:
    return family_named(impl.family)


def parse_user_impls(specs: tuple[str, ...]) -> tuple[list[str], dict[str, Path]]:
    """Split --impl values into ids to select and NAME=/prefix declarations."""
    ids: list[str] = []
    user: dict[str, Path] = {}
    for spec in specs:
        for item in filter(None, (s.strip() for s in spec.split(","))):
            if "=" in item:
                name, _, prefix = item.partition("=")
                if not name or not Path(prefix).is_dir():
                    raise ArenaError(f"--impl {item}: '{prefix}' is not a directory; "
                                     "use --impl NAME=/prefix/of/an/mpi")
                user[name] = Path(prefix)
                ids.append(name)
            else:
                ids.append(item)
    return ids, user


def select(found: list[Found], ids: list[str],
           say: Callable[[str], None] | None = None) -> list[Implementation]:
    """The usable implementations named by ids (when ids is empty, all usable ones but the
    releases `releases` installed for a bisection, a cache: then each found but unusable, e.g.
    for a program missing, is one line to `say`, and the cache one line)."""
    usable = {f.name: f.impl for f in found if f.impl is not None}
    if not ids:
        cached = [f.name for f in found if f.impl is not None and f.cached]
        if not usable.keys() - set(cached):
            raise ArenaError("no usable MPI implementation found; run 'mpiarena doctor' to see "
                             "what to install")
        for f in found:
            if f.impl is None and say is not None:
                say(f"note: {f.name} left out: {f.problem}" + (f" ({f.fix})" if f.fix else ""))
        if cached and say is not None:
            say(f"note: left out {', '.join(cached)}: releases that 'mpiarena releases' "
                "installed for a bisection (compare one with --impl ID, or 'mpiarena install' "
                "it to compare it by default)")
        return [impl for name, impl in usable.items() if name not in cached]
    chosen = []
    for wanted in ids:
        if wanted in usable:
            chosen.append(usable[wanted])
            continue
        broken = next((f for f in found if f.name == wanted), None)
        if broken is not None:
            raise ArenaError(f"implementation '{wanted}' is not usable: {broken.problem}; "
                             f"{broken.fix}")
        if wanted.startswith(MODULE_PREFIX):
            chosen.append(modules.resolve(wanted))
            continue
        known = ", ".join(sorted(usable)) or "none"
        raise ArenaError(f"unknown implementation '{wanted}'; known: {known} "
                         "(see 'mpiarena impls', or declare one with --impl NAME=/prefix)")
    return chosen
