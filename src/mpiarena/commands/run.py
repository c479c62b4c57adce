"""`mpiarena run`: build the cores, run a suite, store and summarise."""

from __future__ import annotations

import shlex
import sys

import click

from .. import paths, users
from ..build import Build, build_all
from ..cluster.topology import Where, opened
from ..errors import ArenaError
from ..impls import Implementation, discover, parse_user_impls, select
from ..plan import check_variants, make_plan
from ..results import load
from ..status import RunStatus
from ..suites import fit_to_cores, override
from ..suites import load as load_suite
from . import options
from .options import SECONDS, console, db_option, err, impl_option


def _fraction(text: str | None) -> float | None:
    """'2%' or '0.02' -> 0.02."""
    if text is None:
        return None
    try:
        value = float(text.rstrip("%")) / (100 if text.endswith("%") else 1)
    except ValueError as e:
        raise ArenaError(f"bad --precision '{text}'; use e.g. 2%") from e
    if not 0 < value < 1:
        raise ArenaError(f"--precision must lie between 0% and 100%, got '{text}'")
    return value


def _builds(impls: list[Implementation], explicit: bool) -> dict[str, Build]:
    return build_all(impls, explicit, lambda line: err.print(f"[yellow]{line}[/]"))


@click.command("run")
@click.option("--suite", default="quick", show_default=True, help="quick, default, or FILE.toml")
@impl_option("ids to compare, or NAME=/prefix")
@click.option("--bench", help="comma-separated benchmarks, e.g. pingpong,bcast")
@click.option("--np", "np_text", help="comma-separated rank counts, e.g. 2,4")
@click.option("--sizes", help="message sizes, e.g. 0,1,8,1K..4M")
@click.option("--perturb", is_flag=True, help="add NetPIPE's size-3 and size+3 neighbours")
@click.option("--observations", type=int, help="observations per cell in each launch")
@click.option("--launches", type=int,
              help="independent launches of each variant per rank count (the statistics' unit)")
@click.option("--off-cache", is_flag=True, help="rotate buffers so caches do not flatter sizes")
@click.option("--validate", is_flag=True, help="check received data after each cell")
@click.option("--timeout", default=60.0, show_default=True, type=SECONDS,
              help="seconds before a job is hung")
@click.option("--precision", help="add launches of each cell until its figure's 95%% CI (over "
              "launches) is within this, e.g. 2%%")
@click.option("--max-time", default=30.0, show_default=True, type=SECONDS,
              help="with --precision: seconds one cell may take in all")
@click.option("--budget", type=options.DURATION,
              help="time the measurement may take (e.g. 3m; off for none): after the suite's "
              "launches, more go to the comparisons still undecided that more can decide "
              "(default: the suite's, 170s for quick; none with --launches)")
@click.option("--wait-quiet", type=SECONDS, help="before each launch, wait up to "
              "this many seconds for other processes to leave the machine quiet")
@click.option("--seed", type=int, help="seed of the interleaving order (recorded either way)")
@click.option("--sync", help="how collectives are timed: loop, barrier or window (default: the "
              "suite's, else window; barrier where a family cannot do window)")
@click.option("--cluster", help="emulated:nodes=4,link=100mbit,mtu=1500, a profile "
              "(emulated:fast-ethernet|fddi|gige), or the name of one kept up")
@click.option("--hosts", "hosts_file", type=click.Path(dir_okay=False),
              help="a real cluster: one host per line (this machine first), optional slots=N")
@click.option("--slurm", "slurm_job", is_flag=True,
              help="inside a Slurm allocation (salloc/sbatch): ranks start with srun")
@click.option("--tables", is_flag=True, help="a table per benchmark with its verdicts, after the "
              "scoreboard")
@click.option("--method", is_flag=True, help="the method and the verdict rule in full")
@db_option
def run_cmd(suite: str, impl_specs: tuple[str, ...], bench: str | None, np_text: str | None,
            sizes: str | None, perturb: bool, observations: int | None,
            launches: int | None, off_cache: bool,
            validate: bool, timeout: float, precision: str | None, max_time: float,
            budget: float | None, wait_quiet: float | None,
            seed: int | None, sync: str | None, cluster: str | None,
            hosts_file: str | None, slurm_job: bool, tables: bool, method: bool,
            db: str) -> None:
    """Build the core against each implementation, run the suite, store and summarise."""
    chosen = override(load_suite(suite), sizes=options.sizes(sizes, perturb),
                      nps=options.nps(np_text), observations=observations, launches=launches,
                      budget=0.0 if budget is None and launches is not None else budget,
                      sync=sync, benchmarks=options.benchmarks(bench))
    ids, user_prefixes = parse_user_impls(impl_specs)
    found = discover(user_prefixes, paths.impls_dir())
    check_variants(chosen.variants, [f.name for f in found], f"suite {suite}")
    impls = select(found, ids)
    options.sweep()
    from ..report import terminal  # statistics load scipy: only the commands that need them
    from ..runner.execute import Settings
    from ..runner.session import measure

    with opened(Where(cluster, hosts_file, slurm_job)) as topology:
        if np_text is None:
            where = "this machine" if topology.label == "local" else topology.label
            chosen, note = fit_to_cores(chosen, topology.cores, where)
            if note:
                err.print(f"note: {note}", soft_wrap=True, markup=False)
        store = options.store(db)
        builds = _builds(impls, explicit=bool(ids))
        plan = make_plan(chosen, [b.impl for b in builds.values()], seed)
        settings = Settings(timeout=timeout, offcache=off_cache, validate=validate,
                            precision=_fraction(precision), max_time=max_time,
                            topology=topology.label, wait_quiet=wait_quiet or 0.0)
        rank_user = None if slurm_job else users.for_ranks()  # Slurm: the allocation's owner
        outcome = measure(plan, builds, store, topology, settings, rank_user,
                          shlex.join(["mpiarena", *sys.argv[1:]]), err)
        terminal.render(load(store, outcome.run_id), console, tables=tables, method=method)
        if outcome.status == RunStatus.INCOMPLETE:
            err.print(f"interrupted: run {outcome.run_id} kept what was measured "
                      "(marked incomplete)")
            sys.exit(130)
