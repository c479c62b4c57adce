"""`mpiarena profile`: calls and time per MPI function of any MPI program."""

from __future__ import annotations

from pathlib import Path

import click

from ..base import paths, users
from ..impls import discover, parse_user_impls, select
from ..report.profile import table
from ..report.tables import show as show_table
from . import renames, sweeping
from .consoles import console
from .durations import DURATION, DURATION_HELP
from .suite_options import RANK_COUNTS, impl_option


@click.command("profile", context_settings={"ignore_unknown_options": True})
@impl_option("ids to profile side by side, or NAME=/prefix", required=True)
@click.option("--np", "nps", type=RANK_COUNTS, default="2", show_default=True,
              help="comma-separated rank counts, e.g. 2,4: a table each")
@click.option("--compile", "source", type=click.Path(dir_okay=False),
              help="a C source to compile with each implementation's wrapper; the arguments "
              "after -- are then the program's")
@renames.renamed("--build", "--compile", "source", type=click.Path(dir_okay=False))
@click.option("--timeout", default="120s", show_default=True, type=DURATION,
              help=f"how long one run of the program may take ({DURATION_HELP}); 120s: a whole "
              "program under the profiler, where a benchmark's job answers a cell in seconds")
@click.argument("program", nargs=-1, type=click.UNPROCESSED)
def profile_cmd(impl_specs: tuple[str, ...], nps: tuple[int, ...], source: str | None,
                timeout: float, program: tuple[str, ...]) -> None:
    """Calls and time per MPI function of any MPI program (PMPI, preloaded), per implementation:
    mpiarena profile --impl ID [--impl ID2] [--np 2,4] -- PROGRAM ARGS."""
    # here, not at the top: ~12 ms more start-up for every command
    from ..runner.profile import profile

    ids, user_prefixes = parse_user_impls(impl_specs)
    impls = select(discover(user_prefixes, paths.impls_dir()), ids)
    sweeping.sweep()
    for np_ in nps:
        results = profile(impls, np_, list(program), users.for_ranks(),
                          Path(source) if source else None, timeout)
        show_table(console, *table(results, np_))
