"""`mpiarena tune`: choose each library's collective algorithms and write its tuning file."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from ..base import paths, users
from ..base.errors import ArenaError
from ..cluster.topology import Where
from ..impls import discover, parse_user_impls, select
from ..store import Store
from . import grouping, placing, renames, stores, suite_options, sweeping
from .consoles import console, err
from .durations import DURATION, DURATION_HELP
from .report_files import dir_option
from .stores import db_option
from .suite_options import RANK_COUNTS, impl_option


@click.command("tune", cls=grouping.Sectioned)
@impl_option("ids to tune, or NAME=/prefix")
@click.option("--bench", "colls", metavar="BENCHMARKS", default="allreduce,bcast",
              show_default=True,
              help="the collectives to tune: allreduce, bcast, reduce, allgather, alltoall")
@renames.renamed("--coll", "--bench", "colls")
@click.option("--np", "nps", type=RANK_COUNTS,
              help="rank counts, e.g. 2,4 (default 2; --verify: the tuned ones)")
@click.option("--sizes", metavar="SIZES",
              help="message sizes (default 8,1K,64K,1M; --verify: the tuned ones)")
@click.option("--algorithms", help="only these algorithm names, e.g. ring,binomial")
@click.option("--launches", default=8, show_default=True, type=int,
              help="independent launches of each variant per rank count")
@click.option("--observations", default=3, show_default=True, type=int,
              help="observations per cell in each launch")
@click.option("--timeout", default="60s", show_default=True, type=DURATION,
              help=f"how long a job may take to start or to answer one cell before it is "
              f"called hung ({DURATION_HELP}); 60s, as run's: far above one cell")
@placing.where_options(cluster="an emulated spec or the name of a cluster kept up",
                       hosts="a real cluster: one host per line (this machine first)",
                       slurm="inside a Slurm allocation")
@dir_option("directory for the tuning files (required, unless --verify)", metavar="DIR")
@click.option("--verify", "verify_dir", type=click.Path(file_okay=False),
              help="instead: A/B run of the default against the files tune wrote into DIR")
@db_option
def tune_cmd(impl_specs: tuple[str, ...], colls: str, nps: tuple[int, ...] | None,
             sizes: str | None, algorithms: str | None, launches: int, observations: int,
             timeout: float, where: Where, directory: str | None, verify_dir: str | None,
             db: str) -> None:
    """Measure every collective algorithm of each library against its default, choose per size
    range, and write the library's own tuning file: mpiarena tune --impl ID --dir DIR; then
    mpiarena tune --verify DIR."""
    # here, not at the top: ~70 ms more start-up for every command
    from ..report import library_tuning as shown
    from ..runner import library_tuning as tune

    if launches < 1 or observations < 1:
        raise ArenaError("--launches and --observations must be at least 1")
    ids, user_prefixes = parse_user_impls(impl_specs)
    found = discover(user_prefixes, paths.impls_dir())
    command = shlex.join(["mpiarena", *sys.argv[1:]])
    rank_user = None if where.slurm else users.for_ranks()
    # here, not at the top: ~30 ms more start-up for every command
    from ..runner.session import RunContext

    def context(store: Store) -> RunContext:
        return RunContext(store, rank_user, command, err,
                          lambda line: err.print(f"[yellow]{line}[/]"))

    if verify_dir:
        manifest = tune.read_manifest(Path(verify_dir))
        wanted = ids or list(manifest.files)
        if missing := [i for i in wanted if i not in manifest.files]:
            raise ArenaError(f"{verify_dir} holds no tuning file for {', '.join(missing)}; it "
                             f"has {', '.join(manifest.files) or 'none'}")
        m = tune.Measure(manifest.colls, nps or manifest.nps,
                         suite_options.sizes(sizes, False) or manifest.sizes, launches,
                         observations, where, timeout)
        impls = select(found, wanted)
        sweeping.sweep()
        run_id, gains = tune.verify(impls, m, manifest, context(stores.store(db)))
        shown.verify_lines(run_id, gains, console)
        stores.say_stored(db, [run_id])
        return
    if not directory:
        raise ArenaError("tune needs --dir DIR for the tuning files (or --verify DIR)")
    if not ids:
        raise ArenaError("tune needs --impl ID (see 'mpiarena impls')")
    coll_list = suite_options.benchmarks(colls) or ()
    tune.check_colls(coll_list)
    m = tune.Measure(coll_list, nps or (2,),
                     suite_options.sizes(sizes or "8,1K,64K,1M", False) or (), launches,
                     observations, where, timeout)
    impls = select(found, ids)
    sweeping.sweep()
    only = {a.strip() for a in algorithms.split(",")} if algorithms else None
    done = tune.tune(impls, m, only, Path(directory), context(stores.store(db)))
    shown.render(done, console)
    stores.say_stored(db, [done.run_id])
