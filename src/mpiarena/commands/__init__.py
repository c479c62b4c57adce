"""The mpiarena command line: the group, one module per command, and the entry point."""

from __future__ import annotations

import signal
import sys

import click

from .. import __version__
from ..base.errors import ArenaError
from .cluster import cluster_cmd
from .compare import compare_cmd
from .consoles import VOICE, conventions, err, reader_gone
from .doctor import doctor_cmd
from .exit_status import Exit, traceback_file
from .explain import explain_cmd
from .export import export_cmd
from .guide import ENTRIES, SECTIONS, epilog, first_steps, start_here
from .history import history_cmd
from .impls import impls_cmd
from .import_ import import_cmd
from .install import install_cmd
from .list_runs import list_cmd
from .plot import plot_cmd
from .profile import profile_cmd
from .program import program_cmd
from .releases import releases_cmd
from .renames import deprecated
from .report import report_cmd
from .reproduce import reproduce_cmd
from .run import run_cmd
from .setup import setup_cmd
from .show import show_cmd
from .simulate import simulate_cmd
from .store import store_cmd
from .sweeping import on_sigterm
from .tune import tune_cmd

COMMANDS = (doctor_cmd, setup_cmd, impls_cmd, install_cmd, run_cmd, program_cmd, import_cmd,
            list_cmd, releases_cmd, show_cmd, export_cmd, compare_cmd, history_cmd, explain_cmd,
            profile_cmd, reproduce_cmd, tune_cmd, report_cmd, plot_cmd, cluster_cmd,
            simulate_cmd, store_cmd)


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
        return [e.name for s in SECTIONS for e in s.entries if e.name in self.commands]

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        for section in SECTIONS:
            rows = [(e.name, e.summary) for e in section.entries if e.name in self.commands]
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


cli.params.extend(conventions())
for command in COMMANDS:
    assert command.name is not None
    cli.add_command(_described(command, command.name))


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
