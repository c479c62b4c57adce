"""What every command prints through: the two consoles (a closed pipe ends the command quietly), the
conventions every command takes (-q, -v, --no-color) and --json."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn

import click
from rich.console import Console

from .exit_status import Exit
from .grouping import F


def reader_gone() -> NoReturn:
    """A reader that stopped reading (a closed pipe: `mpiarena export | head`) ends the command
    quietly with status 0; what is still buffered goes nowhere."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    raise SystemExit(Exit.OK)


class Terminal(Console):
    """rich's console, but a closed pipe is reader_gone(), where rich's exits 1."""

    def on_broken_pipe(self) -> None:
        reader_gone()


# piped: COLUMNS where set, else 150 columns (rich's 80 would break most lines)
console = Terminal(highlight=False, width=None if sys.stdout.isatty() or "COLUMNS" in os.environ
                   else 150)
err = Terminal(stderr=True, highlight=False,
               width=None if sys.stderr.isatty() or "COLUMNS" in os.environ else 150)


@dataclass
class Voice:
    """What -v/--verbose asked (-q and --no-color set the consoles themselves); one command
    runs per process."""

    verbose: bool = False


VOICE = Voice()


def _quiet(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        err.quiet = True


def _verbose(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        VOICE.verbose = True


def _no_color(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        console.no_color = err.no_color = True


def conventions() -> list[click.Option]:
    """-q/--quiet, -v/--verbose and --no-color: taken before the command and by every command
    (NO_COLOR in the environment turns colour off too: rich reads it)."""
    return [click.Option(["-q", "--quiet"], is_flag=True, expose_value=False, is_eager=True,
                         callback=_quiet, help="nothing on stderr but errors: no progress bar, "
                         "notes or the stored line"),
            click.Option(["-v", "--verbose"], is_flag=True, expose_value=False, is_eager=True,
                         callback=_verbose, help="an internal error's traceback on stderr too, "
                         "not only in its file"),
            click.Option(["--no-color"], is_flag=True, expose_value=False, is_eager=True,
                         callback=_no_color, help="no colour (as NO_COLOR=1 in the environment)")]


CONVENTIONS = {o for p in conventions() for o in p.opts}


def json_option(what: str) -> Callable[[F], F]:
    """--json: `what` as JSON on stdout, for scripts, instead of the table."""
    return click.option("--json", "as_json", is_flag=True,
                        help=f"{what} as JSON on stdout, for scripts, instead of the table")


def print_json(records: object) -> None:
    """Records (lists, dicts, str, int, bool, None) as indented JSON on stdout."""
    click.echo(json.dumps(records, indent=2))
