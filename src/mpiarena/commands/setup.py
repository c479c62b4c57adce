"""`mpiarena setup`: the unprivileged user ranks run as."""

from __future__ import annotations

import click

from ..base import users
from .consoles import console


@click.command("setup")
def setup_cmd() -> None:
    """Create the unprivileged user that ranks run as when mpiarena runs as root."""
    user = users.create()
    console.print(f"rank user '{user.name}' (uid {user.uid}) is ready")
