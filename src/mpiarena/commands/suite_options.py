"""The options of what to measure, shared by the commands that measure a suite: --suite, --impl,
--bench, --np, --sizes, --launches, --timeout, --budget, --seed, and their parsers."""

from __future__ import annotations

from collections.abc import Callable

import click

from ..base.errors import ArenaError
from ..base.sizes import parse_sizes
from ..suites import builtin_names
from .durations import DURATION, DURATION_HELP, DURATION_OR_OFF
from .grouping import F


def impl_option(help: str, required: bool = False) -> Callable[[F], F]:
    """--impl (repeatable) into `impl_specs`: implementation ids or NAME=/prefix."""
    return click.option("--impl", "impl_specs", multiple=True, required=required, metavar="ID",
                        help=help)


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
