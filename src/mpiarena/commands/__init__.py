"""The mpiarena command line: the group, one module per command, and the entry point."""

from __future__ import annotations

import importlib
import signal
import sys
from functools import cache

import click

from .. import __version__
from ..base.errors import ArenaError
from .consoles import VOICE, conventions, err, reader_gone
from .exit_status import Exit, on_sigterm, traceback_file
from .guide import ENTRIES, SECTIONS, epilog, first_steps, start_here
from .renames import deprecated

# Each command's module, loaded when that command runs (or its help is asked): `mpiarena
# --help` reads guide.py's names and summaries alone. Loading them all took 211 ms of its
# start-up (issue 63).
WHERE = {"doctor": "doctor", "setup": "setup", "impls": "impls", "install": "install",
         "run": "run", "program": "program", "import": "import_", "list": "list_runs",
         "releases": "releases", "show": "show", "export": "export", "compare": "compare",
         "history": "history", "explain": "explain", "profile": "profile",
         "reproduce": "reproduce", "tune": "tune", "report": "report", "plot": "plot",
         "cluster": "cluster", "simulate": "simulate", "store": "store"}


OLD_NAMES = {"app": "program"}  # a command's old spelling: works for this release, with a notice


class Arena(click.Group):
    """The command group: --help lists the commands in guide.py's sections, in its order; an
    old spelling of a command runs the command under its name with a notice."""

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and args[0] in OLD_NAMES:
            old, new = args[0], OLD_NAMES[args[0]]
            deprecated(f"'mpiarena {old}' is now 'mpiarena {new}' (the old spelling goes in the "
                       "next release)")
            args = [new, *args[1:]]
        return super().resolve_command(ctx, args)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [e.name for s in SECTIONS for e in s.entries if e.name in WHERE]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return command(cmd_name) if cmd_name in WHERE else None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        for section in SECTIONS:
            rows = [(e.name, e.summary) for e in section.entries if e.name in WHERE]
            with formatter.section(section.title):
                formatter.write_dl(rows)


@click.group(cls=Arena, invoke_without_command=True, epilog=start_here())
@click.version_option(__version__, prog_name="mpiarena")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Put message-passing libraries side by side."""
    if ctx.invoked_subcommand is None:
        click.echo(first_steps())


def _described(command: click.Command, name: str) -> click.Command:
    """`command` with guide.py's summary and examples and the conventions' options (a group's
    subcommands too)."""
    command.short_help = ENTRIES[name].summary
    command.epilog = epilog(name)
    command.params.extend(conventions())
    if isinstance(command, click.Group):
        for sub_name, sub in command.commands.items():
            _described(sub, f"{name} {sub_name}")
    return command


@cache
def command(name: str) -> click.Command:
    """The command called name, its module loaded now, as --help shows it (_described)."""
    module = importlib.import_module(f"{__name__}.{WHERE[name]}")
    found = getattr(module, f"{name}_cmd")
    assert isinstance(found, click.Command) and found.name == name, name
    return _described(found, name)


def all_commands() -> list[click.Command]:
    """Every command, each module loaded: for what reads them all (the docs' tests)."""
    return [command(name) for name in WHERE]


cli.params.extend(conventions())


def _say(text: str) -> None:
    """An error's line on stderr, -q or not."""
    err.quiet = False
    err.print(text, soft_wrap=True, markup=False, emoji=False)


def main() -> None:
    """Entry point: exit statuses as exit_status.Exit says; a user error is one line on stderr,
    an internal error one line and a traceback file."""
    signal.signal(signal.SIGTERM, on_sigterm)  # SIGTERM stops as cleanly as Ctrl-C
    try:
        cli.main(prog_name="mpiarena", standalone_mode=False)
    except ArenaError as e:
        _say(f"mpiarena: error: {e}")
        sys.exit(Exit.BAD_INPUT)
    except (click.exceptions.Abort, KeyboardInterrupt):
        _say("mpiarena: interrupted")
        sys.exit(Exit.INTERRUPTED)
    except BrokenPipeError:
        reader_gone()
    except click.exceptions.ClickException as e:
        _say(f"mpiarena: error: {e.format_message()} (see 'mpiarena --help')")
        sys.exit(Exit.BAD_INPUT)
    except Exception as e:  # a bug: never a status of the table's others
        where = traceback_file(e)
        if VOICE.verbose:
            _say(where.read_text(encoding="utf-8").rstrip())
        _say(f"mpiarena: internal error: {type(e).__name__}: {e} (a bug; the traceback is in "
             f"{where})")
        sys.exit(Exit.INTERNAL)
