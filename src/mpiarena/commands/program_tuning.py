"""`mpiarena program --tune`'s part of the command: the race run, then its result in words."""

from __future__ import annotations

import shlex
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..analysis.program_tuning_space import Space
from ..base import users
from ..base.errors import ArenaError
from ..base.status import RunStatus
from ..cluster.topology import Where, opened
from . import stores
from .consoles import console, err
from .exit_status import Exit

if TYPE_CHECKING:
    from ..runner.program import ProgramRun
    from ..runner.program_tuning import TuneSettings


def tune_program_run(measured: ProgramRun, tuning: TuneSettings, where: Where, db: str,
               recorded: dict[str, object]) -> None:
    """Race, verify, store, say what to run the program with, write it to -o DIR (the
    tuning's output)."""
    # here, not at the top: ~50 ms more start-up for every command
    from ..analysis.program_tuning import tune_result
    from ..report.program_tuning import ready_files, render, space_lines
    from ..runner.program_tuning import Said, tune_program
    from ..runner.session import RunContext

    rank_user = None if where.slurm else users.for_ranks()
    directory = Path(tuning.output).resolve() if tuning.output else None
    if directory is not None:  # for the user's launches: mpiarena's ranks never read them
        directory.mkdir(parents=True, exist_ok=True)

    def show_space(spaces: list[Space]) -> None:
        for line in space_lines(spaces):
            console.print(line, soft_wrap=True, markup=False, highlight=False)

    said = Said(show_space,
                lambda line: err.print(line, soft_wrap=True, markup=False, highlight=False))
    with opened(where) as topology:
        store = stores.store(db)
        context = RunContext(store, rank_user, shlex.join(["mpiarena", *sys.argv[1:]]), err,
                             said.progress)
        asked = replace(tuning, output=str(directory) if directory else None)
        outcome = tune_program(measured, asked, context, topology, said, recorded)
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
