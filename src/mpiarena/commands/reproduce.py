"""`mpiarena reproduce`: rerun a seed study and check its conclusions."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from ..base import paths, users
from ..base.errors import ArenaError
from ..base.machine import cores
from ..cluster.topology import Where
from ..impls import discover, parse_user_impls, select
from ..store.results import load
from . import grouping, placing, stores, sweeping
from .batch import run_batch, show_output
from .consoles import console, err
from .durations import DURATION, DURATION_HELP
from .exit_status import Exit
from .report_files import output_option, write_report
from .stores import db_option
from .suite_options import impl_option


@click.command("reproduce", cls=grouping.Sectioned)
@click.argument("study")
@placing.where_options(
    cluster="where to run: an emulated spec, a kept cluster's name, or 'local' (this machine "
    "only); default: the emulated network closest to the study's",
    hosts="a real cluster instead: one host per line (this machine first)",
    slurm="inside a Slurm allocation instead")
@placing.sbatch_options("the reproduction")
@click.option("--quick", is_flag=True, help="the short mode: fewer sizes, ranks, observations")
@impl_option("only these implementation ids")
@click.option("--max-ranks", type=int, help="most ranks per experiment (default: the cores)")
@click.option("--timeout", default="60s", show_default=True, type=DURATION,
              help=f"how long a job may take to start or to answer one cell before it is "
              f"called hung ({DURATION_HELP}); 60s, as run's: far above one cell")
@output_option("Markdown report (default: reproduce-STUDY.md)")
@db_option
def reproduce_cmd(study: str, where: Where, submit: placing.Submit, quick: bool,
                  impl_specs: tuple[str, ...], max_ranks: int | None, timeout: float,
                  output: str | None, db: str) -> None:
    """Rerun a seed study (nevin1996, chau2001, dimitrov2002, cleary2006): its experiments on
    the network closest to its own, its published figures beside ours, its conclusions checked."""
    # here, not at the top: ~40 ms more start-up for every command
    from .. import studies
    from ..analysis.quantities import Measured
    from ..analysis.reproduction import evaluate
    from ..report.reproduction_text import markdown, render
    from ..runner import reproduce

    submit.check(where)
    chosen = studies.load(study)
    cap = max_ranks if max_ranks is not None else cores()
    if cap < 2:
        raise ArenaError(f"--max-ranks {cap}: the studies need at least 2 ranks")
    ids, user_prefixes = parse_user_impls(impl_specs)
    impls = select(discover(user_prefixes, paths.impls_dir()), ids)
    if submit.sbatch:  # the job runs this command with --slurm; its output is the summary
        run_batch("reproduce", submit, cap, db, show_output)
        return
    sweeping.sweep()
    store = stores.store(db)
    # here, not at the top: ~30 ms more start-up for every command
    from ..runner.session import RunContext

    done = reproduce.run(reproduce.ReproductionAsk(chosen, quick, where, cap, timeout), impls,
                         RunContext(store, None if where.slurm else users.for_ranks(),
                                    shlex.join(["mpiarena", *sys.argv[1:]]), err,
                                    lambda line: err.print(f"[dim]{line}[/]")))
    runs: dict[str, Measured] = {name: load(store, run_id) for name, run_id in done.runs.items()}
    runs |= done.profiles
    stores.say_stored(db, sorted(done.runs.values()))
    ev = evaluate(chosen, runs, done.skipped)
    render(ev, runs, done.skipped, done.notes, console)
    write_report(Path(output or f"reproduce-{chosen.id}.md"),
                 markdown(ev, runs, done.skipped, done.notes, db))
    if done.interrupted:
        err.print("interrupted: the runs kept what was measured (marked incomplete)")
        sys.exit(Exit.INTERRUPTED)
