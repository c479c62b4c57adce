"""The exit statuses of every command, one table a CI job can read (docs/commands.md shows
it), and an internal error turned into one line and a traceback file."""

from __future__ import annotations

import os
import tempfile
import time
import traceback
from enum import IntEnum
from pathlib import Path
from typing import NoReturn

from ..base import paths


class Exit(IntEnum):
    """What a command exits with. When two hold at once: INTERRUPTED wins over everything, then
    INTERNAL, then BAD_INPUT (it stops a command before it measures), then FOUND over FAILED."""

    OK = 0  # done
    BAD_INPUT = 2  # bad input or a refusal, one line saying what and how to fix it
    FOUND = 3  # a decided regression under --fail-on-regression
    FAILED = 4  # cells or launches that failed (stored with their reasons)
    INTERNAL = 70  # a bug in mpiarena: one line, the traceback in a file (EX_SOFTWARE)
    INTERRUPTED = 130  # Ctrl-C or SIGTERM


def traceback_file(error: BaseException) -> Path:
    """Write `error`'s traceback into the data directory's crashes/ (else the temporary
    directory); return where."""
    try:
        folder = paths.data_dir() / "crashes"
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        folder = Path(tempfile.gettempdir())
    path = folder / f"mpiarena-crash-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.txt"
    path.write_text("".join(traceback.format_exception(error)), encoding="utf-8")
    return path


def on_sigterm(*_: object) -> NoReturn:
    """SIGTERM handler: stop as cleanly as Ctrl-C."""
    raise KeyboardInterrupt
