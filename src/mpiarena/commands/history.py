"""`mpiarena history`: every run of a store (or several) in time order, per cell."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlparse

import click

from ..analysis.compare import summed_differently
from ..base.errors import ArenaError
from ..store import RUN_NAME, Store
from ..store.backend import is_server
from ..store.results import RunData, load
from . import grouping, renames, report_files, stores, suite_options
from .ci import CI, ci_options, finish
from .consoles import console, err


@dataclass(frozen=True)
class Since:
    """--since: runs that started at or after a moment (a date, or a run's start)."""

    moment: datetime | None

    @classmethod
    def parse(cls, text: str | None, first_store: Store) -> Since:
        if text is None:
            return cls(None)
        if text.isdigit() or RUN_NAME.fullmatch(text):
            return cls(_moment(first_store.run(first_store.resolve(text)).started))
        try:
            return cls(_moment(text))
        except ValueError as e:
            raise ArenaError(f"bad --since '{text}'; give a run of the first --db (an id, "
                             "latest, previous or latest~N) or a date such as 2026-11-01 or "
                             "2026-11-01T12:00") from e

    def keeps(self, started: str) -> bool:
        return self.moment is None or _moment(started) >= self.moment


def _moment(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _runs(dbs: tuple[str, ...], since: str | None) -> tuple[list[RunData], list[str]]:
    """Every benchmark run of the stores from --since on, in time order, and their labels
    (the id, or STORE:ID with several stores)."""
    # here, not at the top: ~9 ms more start-up for every command
    from ..analysis.program import is_program_run

    for db in dbs:
        if not stores.exists(db):
            raise ArenaError(f"no store at {db}; give --db FILE (repeatable)")
    opened = [stores.existing_store(db) for db in dbs]
    cut = Since.parse(since, opened[0])
    found = []
    for db, store in zip(dbs, opened, strict=True):
        for run, cells in store.runs():
            if cells and not is_program_run(run) and cut.keeps(run.started):
                label = str(run.id) if len(dbs) == 1 else f"{_label(db)}:{run.id}"
                found.append((_moment(run.started), label, store, run.id))
    found.sort(key=lambda f: f[0])
    return [load(store, run_id) for *_, store, run_id in found], [f[1] for f in found]


def _label(db: str) -> str:
    """A store's name in a run's label: its file's stem, a server's database."""
    return urlparse(db).path.strip("/") if is_server(db) else Path(db).stem


@click.command("history", cls=grouping.Sectioned)
@suite_options.impl_option("only this implementation or variant (repeatable)")
@click.option("--bench", metavar="BENCHMARKS",
              help="only these benchmarks, e.g. pingpong,allreduce")
@click.option("--sizes", metavar="SIZES", help="only these message sizes, e.g. 8,64K or 1K..1M")
@renames.renamed("--size", "--sizes", "sizes")
@click.option("--np", "nps", type=suite_options.RANK_COUNTS,
              help="only these rank counts, e.g. 2,4")
@click.option("--follow", "follows", multiple=True, help="OLD=NEW: NEW continues OLD's series "
              "(e.g. mpich-4.0.2=mpich-5.0.2 after an upgrade); repeatable")
@click.option("--since", help="only runs started from this one (a run of the first --db: an id, "
              "latest, previous or latest~N) or this date (2026-11-01) on")
@click.option("--html", type=click.Path(dir_okay=False), help="also write an HTML page: a plot "
              "per cell with each run's figure and interval, its decided changes marked")
@click.option("--db", "dbs", multiple=True, default=(stores.DB_DEFAULT,), show_default=True,
              metavar="FILE", callback=stores.db_from_environment,
              help=f"{stores.DB_HELP}; repeat to follow runs across stores")
@ci_options
def history_cmd(impl_specs: tuple[str, ...], bench: str | None, sizes: str | None,
                nps: tuple[int, ...] | None, follows: tuple[str, ...], since: str | None,
                html: str | None, dbs: tuple[str, ...], ci: CI) -> None:
    """Every run of the store in time order, per cell (implementation, variant, benchmark,
    size, ranks): the figure in each run with its interval, and each change from one run to
    the next (and the first to the last) called a regression or improvement only by compare's
    rule, every change shown judged as one family; else inconclusive. With
    --fail-on-regression the exit status is 3 when a regression is decided."""
    # here, not at the top: matplotlib, ~460 ms more start-up for every command
    from ..analysis.history import Filter, history
    from ..report import history as words
    from ..report.junit import history_cases, to_xml

    follow = _follow(follows)
    runs, labels = _runs(dbs, since)
    if not runs:
        raise ArenaError(f"no benchmark runs in {', '.join(dbs)}"
                         + (f" since {since}" if since else "") + "; start one with "
                         "'mpiarena run'")
    keep = Filter(impl_specs, suite_options.benchmarks(bench), suite_options.sizes(sizes, False),
                  nps)
    h = history(runs, keep, ci.threshold, follow)
    if not h.series:
        raise ArenaError("no cell of these runs matches --impl, --bench, --sizes and --np; "
                         "'mpiarena list' and 'mpiarena show RUN' show what they measured")
    _say_unlike_sums(runs, labels)
    words.render(h, labels, console)
    if html:
        report_files.write_report(Path(html), words.render_html(h, labels))
    finish(ci, lambda: to_xml("mpiarena history", history_cases(h, labels)),
           [words.step_line(labels, s, step) for s, step in h.regressions()])


def _say_unlike_sums(runs: list[RunData], labels: list[str]) -> None:
    """One line where consecutive runs summed different datatypes: their reductions' changes
    are not judged."""
    unlike = [f"{labels[i]} ({a.settings.sums_name}) to {labels[i + 1]} "
              f"({b.settings.sums_name}): {', '.join(benches)}"
              for i, (a, b) in enumerate(itertools.pairwise(runs))
              if (benches := summed_differently(a, b))]
    if unlike:
        err.print(f"warn: sums of different datatypes are not compared (the datatype changes "
                  f"the figure): {'; '.join(unlike)}", soft_wrap=True, markup=False)


def _follow(follows: tuple[str, ...]) -> dict[str, str]:
    """--follow OLD=NEW (repeatable) as NEW -> OLD."""
    out = {}
    for text in follows:
        old, sep, new = text.partition("=")
        if not (old and sep and new):
            raise ArenaError(f"--follow '{text}': give OLD=NEW, e.g. --follow "
                             "mpich-4.0.2=mpich-5.0.2")
        out[new] = old
    return out
