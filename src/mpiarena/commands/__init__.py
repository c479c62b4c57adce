"""The mpiarena command line: the group, one module per command, and the entry point."""

from __future__ import annotations

import signal
import sys

import click

from .. import __version__
from ..errors import ArenaError
from .app import app_cmd
from .cluster import cluster_cmd
from .compare import compare_cmd
from .doctor import doctor_cmd
from .explain import explain_cmd
from .export import export_cmd
from .history import history_cmd
from .impls import impls_cmd
from .import_ import import_cmd
from .install import install_cmd
from .list_runs import list_cmd
from .options import err, on_sigterm
from .plot import plot_cmd
from .profile import profile_cmd
from .releases import releases_cmd
from .report import report_cmd
from .reproduce import reproduce_cmd
from .run import run_cmd
from .setup import setup_cmd
from .show import show_cmd
from .simulate import simulate_cmd
from .tune import tune_cmd

COMMANDS = (doctor_cmd, setup_cmd, impls_cmd, install_cmd, run_cmd, app_cmd, import_cmd, list_cmd,
            releases_cmd, show_cmd, export_cmd, compare_cmd, history_cmd, explain_cmd, profile_cmd,
            reproduce_cmd, tune_cmd, report_cmd, plot_cmd, cluster_cmd, simulate_cmd)


@click.group()
@click.version_option(__version__, prog_name="mpiarena")
def cli() -> None:
    """Put message-passing libraries side by side."""


for command in COMMANDS:
    cli.add_command(command)


def main() -> None:
    """Entry point: every user error becomes one line on stderr and exit status 2."""
    signal.signal(signal.SIGTERM, on_sigterm)  # SIGTERM stops as cleanly as Ctrl-C
    try:
        cli.main(standalone_mode=False)
    except ArenaError as e:
        err.print(f"mpiarena: error: {e}", soft_wrap=True)
        sys.exit(2)
    except click.exceptions.Abort:
        err.print("mpiarena: interrupted")
        sys.exit(130)
    except click.exceptions.ClickException as e:
        err.print(f"mpiarena: error: {e.format_message()} (see 'mpiarena --help')", soft_wrap=True)
        sys.exit(e.exit_code)
