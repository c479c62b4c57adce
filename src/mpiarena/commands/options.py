"""What the commands share: the consoles, the --db, --impl, -o, --dir, --json and where options,
the conventions (-q, -v, --no-color), options grouped into one record and a --help section, the
types of durations and rank counts, the parsers of sizes and benchmarks, old spellings with
their notice, and the sweep of what a crashed mpiarena left."""

from __future__ import annotations

import functools
import json
import math
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TypeVar, cast

import click
from click.core import ParameterSource
from rich.console import Console

from .. import paths
from ..cluster import sbatch
from ..cluster.topology import Where
from ..errors import ArenaError
from ..records import VariantRecord
from ..results import RunData, load
from ..runner import watchdog
from ..runner.cleanup import sweep_stale
from ..sizes import parse_sizes
from ..store import Store
from ..suites import builtin_names
from .exit_status import Exit


def reader_gone() -> NoReturn:
    """A reader that stopped reading (a closed pipe: `mpiarena export | head`) ends the command
    quietly with status 0; what is still buffered goes nowhere."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    raise SystemExit(Exit.OK)


class Terminal(Console):
    """rich's console, but a closed pipe is reader_gone(), where rich's exits 1."""

    def on_broken_pipe(self) -> None:
        reader_gone()


# piped: COLUMNS where set, else 150 columns (rich's 80 would break most lines)
console = Terminal(highlight=False, width=None if sys.stdout.isatty() or "COLUMNS" in os.environ
                   else 150)
err = Terminal(stderr=True, highlight=False,
               width=None if sys.stderr.isatty() or "COLUMNS" in os.environ else 150)


@dataclass
class Voice:
    """What -v/--verbose asked (-q and --no-color set the consoles themselves); one command
    runs per process."""

    verbose: bool = False


VOICE = Voice()


def _quiet(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        err.quiet = True


def _verbose(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        VOICE.verbose = True


def _no_color(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        console.no_color = err.no_color = True


def conventions() -> list[click.Option]:
    """-q/--quiet, -v/--verbose and --no-color: taken before the command and by every command
    (NO_COLOR in the environment turns colour off too: rich reads it)."""
    return [click.Option(["-q", "--quiet"], is_flag=True, expose_value=False, is_eager=True,
                         callback=_quiet, help="nothing on stderr but errors: no progress bar, "
                         "notes or the stored line"),
            click.Option(["-v", "--verbose"], is_flag=True, expose_value=False, is_eager=True,
                         callback=_verbose, help="an internal error's traceback on stderr too, "
                         "not only in its file"),
            click.Option(["--no-color"], is_flag=True, expose_value=False, is_eager=True,
                         callback=_no_color, help="no colour (as NO_COLOR=1 in the environment)")]


CONVENTIONS = {o for p in conventions() for o in p.opts}
DB_DEFAULT = "mpiarena.db"  # in the working directory
DB_ENV = "MPIARENA_DB"
DB_HELP = (f"results store (SQLite file), relative to the working directory; {DB_ENV} sets "
           "another default")

F = TypeVar("F", bound=Callable[..., Any])


def db_option(f: F) -> F:
    """--db FILE: the results store, $MPIARENA_DB, else mpiarena.db."""
    return click.option("--db", default=DB_DEFAULT, show_default=True, metavar="FILE",
                        envvar=DB_ENV, help=DB_HELP)(f)


def db_from_environment(ctx: click.Context, param: click.Parameter,
                        value: tuple[str, ...]) -> tuple[str, ...]:
    """A repeatable --db's stores: $MPIARENA_DB (one path, spaces and all) where none is given."""
    if param.name and ctx.get_parameter_source(param.name) == ParameterSource.DEFAULT and \
            os.environ.get(DB_ENV):
        return (os.environ[DB_ENV],)
    return value


def impl_option(help: str, required: bool = False) -> Callable[[F], F]:
    """--impl (repeatable) into `impl_specs`: implementation ids or NAME=/prefix."""
    return click.option("--impl", "impl_specs", multiple=True, required=required, metavar="ID",
                        help=help)


def output_option(help: str, **kwargs: Any) -> Callable[[F], F]:
    """-o/--output FILE: in every command a file (a directory is --dir)."""
    return click.option("-o", "--output", type=click.Path(dir_okay=False), help=help, **kwargs)


def dir_option(help: str, **kwargs: Any) -> Callable[[F], F]:
    """--dir DIR into `directory` (with -o, its old spelling, for this release)."""
    def both(f: F) -> F:
        f = renamed("-o/--output", "--dir", "directory", type=click.Path(file_okay=False))(f)
        return click.option("--dir", "directory", type=click.Path(file_okay=False), help=help,
                            **kwargs)(f)
    return both


SECTIONS = "__arena_sections__"  # a command function's: parameter name -> its --help section


class Sectioned(click.Command):
    """A command whose --help lists its options under the titles grouped() gave them, the
    others last."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        titles: dict[str, str] = vars(self.callback).get(SECTIONS, {}) if self.callback else {}
        rest = "Other options" if titles else "Options"
        rows: dict[str, list[tuple[str, str]]] = {}
        for p in self.get_params(ctx):
            if (record := p.get_help_record(ctx)) is not None:
                rows.setdefault(titles.get(p.name or "", rest), []).append(record)
        for title, found in rows.items():
            with formatter.section(title):
                formatter.write_dl(found)


def grouped(into: str, build: Callable[..., Any],
            *decorators: Callable[[Callable[..., Any]], Callable[..., Any]],
            title: str | None = None) -> Callable[[F], F]:
    """Options (click.option decorators, in the order they show) whose values reach the command
    as one record: parameter `into` = build(their values by parameter name); with `title`, the
    section of a Sectioned command's --help they show under."""
    def probe() -> None: ...
    for decorate in reversed(decorators):
        decorate(probe)
    params: list[click.Parameter] = vars(probe)["__click_params__"]
    names = [p.name for p in params if p.name and p.expose_value]

    def wrap(f: F) -> F:
        @functools.wraps(f)
        def command(*args: Any, **kwargs: Any) -> Any:
            kwargs[into] = build(**{n: kwargs.pop(n) for n in names})
            return f(*args, **kwargs)

        vars(command)["__click_params__"] = [*vars(f).get("__click_params__", []), *params]
        if title:
            vars(command)[SECTIONS] = {**vars(f).get(SECTIONS, {}),
                                       **{p.name: title for p in params if p.name}}
        return cast(F, command)
    return wrap


def where_options(cluster: str, hosts: str, slurm: str) -> Callable[[F], F]:
    """--cluster, --hosts and --slurm (with these helps) into `where`."""
    return grouped("where", Where,
                   click.option("--cluster", help=cluster),
                   click.option("--hosts", type=click.Path(dir_okay=False), help=hosts),
                   click.option("--slurm", is_flag=True, help=slurm), title="Where ranks run")


@dataclass(frozen=True)
class Submit:
    """--sbatch and what it asks of Slurm (commands/batch.py submits); False: measure now."""

    sbatch: bool = False
    partition: str | None = None
    time: str | None = None  # Slurm's format: minutes, M:S, H:M:S, D-H:M...
    nodes: str | None = None  # N or MIN-MAX
    no_wait: bool = False
    cancel_on_interrupt: bool = False

    def __post_init__(self) -> None:
        if not self.sbatch and (self.partition or self.time or self.nodes or self.no_wait
                                or self.cancel_on_interrupt):
            raise ArenaError("--partition, --sbatch-time, --nodes, --no-wait and "
                             "--cancel-on-interrupt go with --sbatch; add --sbatch to submit the "
                             "run as a batch job")

    def check(self, where: Where) -> None:
        """--sbatch runs in the job's own allocation, not where --cluster/--hosts/--slurm say,
        and needs Slurm's commands."""
        if not self.sbatch:
            return
        if where.cluster or where.hosts or where.slurm:
            raise ArenaError("--sbatch runs the measurement inside the job's allocation (as "
                             "--slurm): leave out --cluster, --hosts and --slurm")
        for name in ("sbatch", "squeue", "scontrol"):
            sbatch.tool(name)


SBATCH_FLAGS = ("--sbatch", "--no-wait", "--cancel-on-interrupt")
SBATCH_VALUED = ("--partition", "--sbatch-time", "--time", "--nodes")  # --time: the old one


def sbatch_options(what: str) -> Callable[[F], F]:
    """--sbatch and its Slurm requests into `submit`; `what` names what the job runs."""
    return grouped(
        "submit", Submit,
        click.option("--sbatch", is_flag=True, help=f"submit {what} as a Slurm batch job (the "
                     "same command with --slurm, its script kept beside the store), follow it "
                     "and show what it measured"),
        click.option("--partition", help="with --sbatch: the partition (default: the cluster's)"),
        click.option("--sbatch-time", "time", type=SLURM_TIME_TYPE, help="with --sbatch: "
                     "Slurm's time limit of the job, as sbatch's --time takes it (a bare number "
                     "is minutes, M:S, H:M:S, D-H) or a duration with its unit: 90s, 30m, 1h"),
        renamed("--time", "--sbatch-time", "time", type=SLURM_TIME_TYPE),
        click.option("--nodes", help="with --sbatch: how many nodes, N or MIN-MAX"),
        click.option("--no-wait", is_flag=True, help="with --sbatch: print the job id and "
                     "return"),
        click.option("--cancel-on-interrupt", is_flag=True, help="with --sbatch: Ctrl-C "
                     "cancels the job (default: it keeps running)"), title="As a Slurm batch job")


def json_option(what: str) -> Callable[[F], F]:
    """--json: `what` as JSON on stdout, for scripts, instead of the table."""
    return click.option("--json", "as_json", is_flag=True,
                        help=f"{what} as JSON on stdout, for scripts, instead of the table")


def print_json(records: object) -> None:
    """Records (lists, dicts, str, int, bool, None) as indented JSON on stdout."""
    click.echo(json.dumps(records, indent=2))


def store(db: str) -> Store:
    """The store in file `db`."""
    return Store(Path(db))


def existing_store(db: str) -> Store:
    """The store in file `db`, which must exist: a command that only reads never makes one."""
    if not Path(db).exists():
        raise ArenaError(f"no store at {db}; give --db FILE (or set {DB_ENV}) or start one with "
                         "'mpiarena run'")
    return store(db)


def existing_run(db: str, run: str) -> tuple[RunData, list[VariantRecord]]:
    """Run `run` of the store `db`, which must exist, and its variants' rows."""
    opened = existing_store(db)
    run_id = opened.resolve(run)
    return load(opened, run_id), opened.variants(run_id)


def check_baseline(data: RunData, baseline: str | None) -> None:
    """--baseline, when given, must name a variant of the run."""
    if baseline is not None and baseline not in data.variants:
        raise ArenaError(f"unknown baseline '{baseline}'; run {data.run_id} has "
                         f"{', '.join(data.variants) or 'no variants'}")


def write_report(path: Path, text: str) -> None:
    """Write a report file; a path that cannot be written is one line naming -o."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as e:
        raise ArenaError(f"cannot write {path}: {e.strerror}; choose another -o FILE") from e
    click.echo(f"wrote {path} ({len(text.encode()) / 1024:.0f} KiB)")


UNITS = {"s": 1, "m": 60, "h": 3600}
DURATION_HELP = "seconds, or with a unit: 90s, 3m, 1h"


def seconds_of(text: str) -> float:
    """'90', '90s', '3m' or '1h' -> seconds (a bare number is seconds); NaN if not one."""
    text = text.strip().lower()
    scale = UNITS.get(text[-1:], 1)
    try:
        return float(text[:-1] if text[-1:] in UNITS else text) * scale
    except ValueError:
        return math.nan


class Duration(click.ParamType[float]):
    """Every duration option's type: a bare number is seconds, 90s, 3m or 1h its units; with
    `off`, also 0, off or none for none (0.0)."""

    name = "duration"

    def __init__(self, off: bool = False):
        self.off = off

    def convert(self, value: str | float, param: click.Parameter | None,
                ctx: click.Context | None) -> float:
        if isinstance(value, int | float):
            seconds = float(value)
        elif self.off and value.strip().lower() in ("0", "off", "none"):
            return 0.0
        else:
            seconds = seconds_of(value)
        if not 0 < seconds < math.inf:
            example = f"{param.opts[0] if param else ''} 90s".strip()
            self.fail(f"'{value}' is not a duration above 0; give seconds or a unit, e.g. "
                      f"{example}, 3m or 1h" + (", or off for none" if self.off else ""),
                      param, ctx)
        return seconds


DURATION = Duration()
DURATION_OR_OFF = Duration(off=True)
SLURM_TIME = re.compile(r"\d+(-\d+)?(:\d+){1,2}|\d+-\d+")  # M:S, H:M:S, D-H, D-H:M[:S]


class SlurmTime(click.ParamType[str]):
    """--sbatch-time: Slurm's time format as sbatch takes it (a bare number is minutes, M:S,
    H:M:S, D-H, D-H:M[:S]), or a duration with its unit (90s, 30m, 1h) turned into H:M:S."""

    name = "slurm-time"

    def convert(self, value: str, param: click.Parameter | None,
                ctx: click.Context | None) -> str:
        text = value.strip()
        if SLURM_TIME.fullmatch(text) or text.isdigit():
            return text
        if text[-1:].lower() not in UNITS:
            self.fail(f"'{value}' is not a Slurm time limit; give minutes (30), H:M:S (1:30:00) "
                      "or a duration with its unit (90s, 30m, 1h)", param, ctx)
        seconds = math.ceil(DURATION.convert(text, param, ctx))
        return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


SLURM_TIME_TYPE = SlurmTime()


def deprecated(notice: str) -> None:
    """One line on stderr for an old spelling that still works for this release."""
    err.print(f"mpiarena: deprecated: {notice}", soft_wrap=True, markup=False)


def renamed(old: str, new: str, dest: str, **kwargs: Any) -> Callable[[F], F]:
    """Option `old` (flags as click takes them, e.g. '-o/--output'), hidden, still setting
    `dest` as `new` does for this release, with a one-line notice when given. Its own name is
    OLD_PREFIX + dest: click's parser keys what it reads by name, and the two must not share."""
    def take(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if param.name and ctx.get_parameter_source(param.name) == ParameterSource.COMMANDLINE:
            deprecated(f"{old} is now {new} (the old spelling goes in the next release)")
            ctx.params[dest] = value
            ctx.set_parameter_source(dest, ParameterSource.COMMANDLINE)  # --new's default loses
        return value
    return click.option(*old.split("/"), OLD_PREFIX + dest, hidden=True, expose_value=False,
                        callback=take, **kwargs)


OLD_PREFIX = "old_spelling_of_"


class RankCounts(click.ParamType[tuple[int, ...]]):
    """--np in every command: comma-separated rank counts (2,4); with `one`, where a command
    runs at one rank count, parsed the same way and held to one."""

    name = "ranks"

    def __init__(self, one: bool = False):
        self.one = one

    def convert(self, value: str | int | tuple[int, ...], param: click.Parameter | None,
                ctx: click.Context | None) -> tuple[int, ...]:
        if isinstance(value, tuple):
            return value
        text = str(value)
        try:
            counts = tuple(int(x) for x in text.split(","))
        except ValueError:
            self.fail(f"bad rank count list '{text}'; use e.g. --np 2,4", param, ctx)
        if min(counts) < 1:
            self.fail(f"rank counts must be 1 or more, got '{text}'; use e.g. --np 2,4",
                      param, ctx)
        if self.one and len(counts) != 1:
            self.fail(f"'{text}': this command runs at one rank count; give one, e.g. --np 4",
                      param, ctx)
        return counts


RANK_COUNTS = RankCounts()
ONE_RANK_COUNT = RankCounts(one=True)


# the options of what to measure and how, shared by the commands that measure a suite
SUITE = click.option("--suite", default="quick", show_default=True,
                     help=f"{', '.join(builtin_names())}, or FILE.toml")
BENCH = click.option("--bench", metavar="BENCHMARKS",
                     help="comma-separated benchmarks, e.g. pingpong,bcast")
NPS = click.option("--np", "nps", type=RANK_COUNTS, help="comma-separated rank counts, e.g. "
                   "2,4 (default: the suite's, at most one rank per core)")
SIZES = click.option("--sizes", metavar="SIZES", help="message sizes, e.g. 0,1,8,1K..4M")
LAUNCHES = click.option("--launches", type=int, help="independent launches of each variant per "
                        "rank count (the statistics' unit); without --budget it turns the "
                        "suite's budget off, and says so")
TIMEOUT = click.option("--timeout", default="60s", show_default=True, type=DURATION,
                       help=f"how long a job may take to start or to answer one cell before it "
                       f"is called hung ({DURATION_HELP}); 60s: far above a suite's cell (1-2 "
                       "s) and a library's start-up")
BUDGET = click.option("--budget", type=DURATION_OR_OFF,
                      help=f"time the measurement may take ({DURATION_HELP}; off for none): "
                      "after the suite's launches, more go to the comparisons of message "
                      "passing still undecided that more can decide (default: the suite's, "
                      "105s for quick; for --bench/--sizes runs 25s a variant; none with "
                      "--launches)")
SEED = click.option("--seed", type=int,
                    help="seed of the interleaving order (recorded either way)")


def sizes(text: str | None, perturb: bool) -> tuple[int, ...] | None:
    """--sizes: message sizes, or None when not given."""
    return None if text is None else tuple(parse_sizes(text, perturb))


def benchmarks(text: str | None) -> tuple[str, ...] | None:
    """--bench: comma-separated benchmark names, or None when not given."""
    if text is None:
        return None
    names = tuple(b.strip() for b in text.split(","))
    if "" in names:
        raise ArenaError(f"--bench '{text}' has an empty benchmark name; give a comma-separated "
                         "list, e.g. --bench pingpong,bcast")
    return names


def sweep() -> None:
    """Clear what an earlier mpiarena that crashed left running, and start the watchdog that
    clears what this one starts should it be killed outright."""
    if killed := sweep_stale(paths.scratch_dir()):
        err.print(f"cleaned up {killed} processes left by an earlier mpiarena that crashed")
    watchdog.guard()


def on_sigterm(*_: object) -> NoReturn:
    """SIGTERM handler: stop as cleanly as Ctrl-C."""
    raise KeyboardInterrupt


def say_stored(db: str, run_ids: list[int]) -> None:
    """After a command that stored runs: which, and the store's full path, once."""
    if not run_ids:
        return
    runs = f"run {run_ids[0]}" if len(run_ids) == 1 else f"runs {', '.join(map(str, run_ids))}"
    err.print(f"stored {runs} in {Path(db).resolve()}", soft_wrap=True, markup=False)
