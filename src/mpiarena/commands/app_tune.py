"""`mpiarena app --tune`'s part of the command: the race run, then its result in words."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from .. import users
from ..analysis.tune_space import Space
from ..build import Build
from ..cluster.topology import Where, opened
from ..errors import ArenaError
from ..plan import Variant
from ..programs import BuiltProgram
from ..runner.app import AppSettings
from ..status import RunStatus
from . import stores
from .consoles import console, err
from .exit_status import Exit


def run_tuning(variants: list[Variant], programs: dict[str, BuiltProgram],
               builds: dict[str, Build], settings: AppSettings, budget: float,
               only: frozenset[str] | None, output: str | None, where: Where, db: str,
               recorded: dict[str, object]) -> None:
    """Race, verify, store, say what to run the program with, write it to -o DIR."""
    # here, not at the top: ~50 ms more start-up for every command
    from ..analysis.tuned_app import tune_result
    from ..report.tuned_app import ready_files, render, space_lines
    from ..runner.race import Said, TuneSettings, tune_app

    rank_user = None if where.slurm else users.for_ranks()
    directory = Path(output).resolve() if output else None
    if directory is not None:  # for the user's launches: mpiarena's ranks never read them
        directory.mkdir(parents=True, exist_ok=True)

    def show_space(spaces: list[Space]) -> None:
        for line in space_lines(spaces):
            console.print(line, soft_wrap=True, markup=False, highlight=False)

    said = Said(show_space,
                lambda line: err.print(line, soft_wrap=True, markup=False, highlight=False))
    with opened(where) as topology:
        store = stores.store(db)
        outcome = tune_app(variants, programs, builds, settings,
                           TuneSettings(budget, settings.launches, only,
                                        output=str(directory) if directory else None),
                           store, topology, rank_user, shlex.join(["mpiarena", *sys.argv[1:]]),
                           said, recorded)
    result = tune_result(store, outcome.run_id)
    render(result, console, with_space=False)
    if directory is not None:
        written = ready_files(result, str(directory))
        for name, text in written.items():
            (directory / name).write_text(text)
            (directory / name).chmod(0o644)
        err.print(f"wrote {', '.join(str(directory / n) for n in written)}" if written else
                  f"wrote nothing to {directory}: no setting found beats the default",
                  soft_wrap=True, markup=False, highlight=False)
    if outcome.status == RunStatus.INCOMPLETE:
        err.print(f"interrupted: run {outcome.run_id} kept what was measured (marked incomplete)")
        sys.exit(Exit.INTERRUPTED)
    if not result.winners:
        raise ArenaError(f"the program failed under every configuration (run {outcome.run_id} "
                         "keeps the launches): 'mpiarena show --output' prints what it said")
