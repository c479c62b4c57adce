"""Old spellings of options that still work for a release, with a one-line notice."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click
from click.core import ParameterSource

from .consoles import err
from .grouping import F


def deprecated(notice: str) -> None:
    """One line on stderr for an old spelling that still works for this release."""
    err.print(f"mpiarena: deprecated: {notice}", soft_wrap=True, markup=False)


def renamed(old: str, new: str, dest: str, **kwargs: Any) -> Callable[[F], F]:
    """Option `old` (flags as click takes them, e.g. '-o/--output'), hidden, still setting
    `dest` as `new` does for this release, with a one-line notice when given. Its own name is
    OLD_PREFIX + dest: click's parser keys what it reads by name, and the two must not share."""
    def take(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if param.name and ctx.get_parameter_source(param.name) == ParameterSource.COMMANDLINE:
            deprecated(f"{old} is now {new} (the old spelling goes in the next release)")
            ctx.params[dest] = value
            ctx.set_parameter_source(dest, ParameterSource.COMMANDLINE)  # --new's default loses
        return value
    return click.option(*old.split("/"), OLD_PREFIX + dest, hidden=True, expose_value=False,
                        callback=take, **kwargs)


OLD_PREFIX = "old_spelling_of_"
