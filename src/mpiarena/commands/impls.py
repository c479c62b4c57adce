"""`mpiarena impls`: every implementation found and whether it is usable."""

from __future__ import annotations

import click
from rich.table import Table

from .. import paths
from ..build import build_cores
from ..errors import ArenaError
from ..impls import discover, parse_user_impls
from .options import console, impl_option


@click.command("impls")
@impl_option("NAME=/prefix of another installation")
def impls_cmd(impl_specs: tuple[str, ...]) -> None:
    """Every implementation found: id, library version, where it comes from (Debian, PATH,
    PyPI, a prefix, an environment module), wrapper, launcher, usable or not."""
    _, user = parse_user_impls(impl_specs)
    table = Table("id", "usable", "library version", "origin", "wrapper", "launcher")
    found = discover(user, paths.impls_dir(), with_modules=True)
    built = iter(build_cores([f.impl for f in found if f.impl is not None]))
    for f in found:
        if f.impl is None:
            table.add_row(f.name, "[red]no[/]", f"{f.problem}; {f.fix}", "", "", "")
            continue
        core = next(built)
        if isinstance(core, ArenaError):
            version, usable = str(core), "[red]no[/]"
        else:
            version, usable = core.version_string.splitlines()[0][:60], "[green]yes[/]"
        table.add_row(f.name, usable, version, f.impl.origin, str(f.impl.wrapper),
                      str(f.impl.launcher))
    console.print(table)
