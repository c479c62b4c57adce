"""What a command that starts ranks does first: clear what a crashed mpiarena left."""

from __future__ import annotations

from ..base import paths
from ..runner import watchdog
from ..runner.cleanup import sweep_stale
from .consoles import err


def sweep() -> None:
    """Clear what an earlier mpiarena that crashed left running, and start the watchdog that
    clears what this one starts should it be killed outright."""
    if killed := sweep_stale(paths.scratch_dir()):
        err.print(f"cleaned up {killed} processes left by an earlier mpiarena that crashed")
    watchdog.guard()
