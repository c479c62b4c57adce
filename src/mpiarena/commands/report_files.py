"""Report files: -o/--output, --dir and writing a report."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ..base.errors import ArenaError
from .grouping import F
from .renames import renamed


def output_option(help: str, **kwargs: Any) -> Callable[[F], F]:
    """-o/--output FILE: in every command a file (a directory is --dir)."""
    return click.option("-o", "--output", type=click.Path(dir_okay=False), help=help, **kwargs)


def dir_option(help: str, **kwargs: Any) -> Callable[[F], F]:
    """--dir DIR into `directory` (with -o, its old spelling, for this release)."""
    def both(f: F) -> F:
        f = renamed("-o/--output", "--dir", "directory", type=click.Path(file_okay=False))(f)
        return click.option("--dir", "directory", type=click.Path(file_okay=False), help=help,
                            **kwargs)(f)
    return both


def write_report(path: Path, text: str) -> None:
    """Write a report file; a path that cannot be written is one line naming -o."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as e:
        raise ArenaError(f"cannot write {path}: {e.strerror}; choose another -o FILE") from e
    click.echo(f"wrote {path} ({len(text.encode()) / 1024:.0f} KiB)")
