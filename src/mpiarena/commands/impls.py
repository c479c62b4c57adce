"""`mpiarena impls`: every implementation found and whether it is usable."""

from __future__ import annotations

from dataclasses import dataclass

import click
from rich.table import Table

from ..base import paths
from ..base.errors import ArenaError
from ..impls import discover, parse_user_impls
from ..platform.build import build_cores
from . import consoles
from .consoles import console, json_option
from .suite_options import impl_option


@dataclass(frozen=True)
class Listed:
    """One implementation as `impls` lists it (an unusable one: why, as its version)."""

    id: str
    usable: bool
    library_version: str
    origin: str = ""
    wrapper: str = ""
    launcher: str = ""
    cached: bool = False  # installed by `releases` for a bisection: a default run leaves it out


def _table(listed: list[Listed]) -> Table:
    table = Table("id", "usable", "library version", "origin", "wrapper", "launcher")
    for x in listed:
        table.add_row(x.id, "[green]yes[/]" if x.usable else "[red]no[/]", x.library_version,
                      x.origin, x.wrapper, x.launcher)
    return table


def _records(listed: list[Listed]) -> None:
    """Where the table does not fit: one block per implementation, each path and the version
    on a line of its own, whole."""
    for x in listed:
        console.print(f"{x.id}  {'[green]usable[/]' if x.usable else '[red]not usable[/]'}"
                      f"{'  ' + x.origin if x.origin else ''}", soft_wrap=True)
        for label, value in (("library version", x.library_version), ("wrapper", x.wrapper),
                             ("launcher", x.launcher)):
            if value:
                console.print(f"  {label + ':':<17}{value}", soft_wrap=True, markup=False)


@click.command("impls")
@impl_option("NAME=/prefix of another installation")
@json_option("every implementation (id, usable, library version, origin, wrapper, launcher, "
             "cached: installed by releases for a bisection)")
def impls_cmd(impl_specs: tuple[str, ...], as_json: bool) -> None:
    """Every implementation found: id, library version, where it comes from (Debian, PATH,
    PyPI, a prefix, an environment module), wrapper, launcher, usable or not."""
    _, user = parse_user_impls(impl_specs)
    found = discover(user, paths.impls_dir(), with_modules=True)
    built = iter(build_cores([f.impl for f in found if f.impl is not None]))
    listed = []
    for f in found:
        if f.impl is None:
            listed.append(Listed(f.name, False, f"{f.problem}; {f.fix}"))
            continue
        core = next(built)
        usable = not isinstance(core, ArenaError)
        version = str(core) if isinstance(core, ArenaError) else \
            " ".join(core.version_string.splitlines()[0].split())[:60]
        origin = f"{f.impl.origin}, releases' cache" if f.cached else f.impl.origin
        listed.append(Listed(f.name, usable, version, origin, str(f.impl.wrapper),
                             str(f.impl.launcher), f.cached))
    if as_json:
        consoles.print_json([vars(x) for x in listed])
        return
    if cached := [x.id for x in listed if x.cached]:
        console.print(f"releases' cache (installed by 'mpiarena releases', left out of a default "
                      f"run; 'mpiarena install' one to compare it by default): "
                      f"{', '.join(cached)}", soft_wrap=True, markup=False)
    table = _table(listed)
    wanted = table.__rich_measure__(console, console.options.update_width(10_000)).maximum
    if wanted <= console.width:
        console.print(table)
    else:
        _records(listed)
