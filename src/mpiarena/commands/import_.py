"""`mpiarena import`: another suite's output (OSU, IMB, NetPIPE, ReproMPI) into a run."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import click

from ..base import paths
from ..base.errors import ArenaError
from ..base.machine import cores as here_cores
from ..base.records import IMPORTED, ImplementationRecord
from ..impls import discover
from ..imports import PARSERS, read
from ..imports.ingest import ImportAsk, check, ingest
from ..imports.records import Choices
from ..report.renderers import Format, RenderOptions, render
from ..report.source import RunSource
from . import stores
from .consoles import console, err
from .stores import db_option
from .suite_options import ONE_RANK_COUNT

ID = re.compile(r"^[A-Za-z][\w.+]*(?:-[\w.+]+)*$")


def _implementation(impl_id: str) -> ImplementationRecord:
    """The library the files measured: one `mpiarena impls` finds (its family and version), or
    any other id, named family-version (mvapich2-2.3.7)."""
    if not ID.match(impl_id):
        raise ArenaError(f"--impl '{impl_id}' is not an id; use e.g. mpich-4.0.2 or "
                         "mvapich2-2.3.7 (letters, digits, '.', '-')")
    known = {f.impl.id: f.impl for f in discover({}, paths.impls_dir()) if f.impl is not None}
    if impl_id in known:
        i = known[impl_id]
        return ImplementationRecord(
            run_id=0, impl_id=i.id, family=i.family, version=i.version,
            version_string=f"{i.family} {i.version}, as installed here (the files do not say "
            "which build ran)", origin=IMPORTED, prefix=str(i.prefix or ""),
            wrapper=str(i.wrapper), launcher=str(i.launcher), wrapper_flags="", cflags="")
    named = re.match(r"^(.+?)-(\d[\w.+]*)$", impl_id)
    family, version = (named.group(1), named.group(2)) if named else (impl_id, "?")
    return ImplementationRecord(
        run_id=0, impl_id=impl_id, family=family, version=version,
        version_string=f"{impl_id} (not installed here; named by --impl)",
        origin=IMPORTED, prefix=None, wrapper="", launcher="", wrapper_flags="",
        cflags="")


@click.command("import")
@click.argument("suite", type=click.Choice(sorted(PARSERS)))
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--impl", "impl_id", required=True, help="the library that ran them: an id "
              "'mpiarena impls' lists, or any other (e.g. mvapich2-2.3.7)")
@click.option("--launch-per-file", is_flag=True, help="each file is one launch, the runs of "
              "the suite inside it its observations (default: each run of the suite found in "
              "the files is one launch)")
@click.option("--figure", help="which figure: imb t_max (default), t_avg or t_min; osu "
              "collectives run with -f: avg (default), max or min")
@click.option("--np", "np_", type=ONE_RANK_COUNT, help="ranks, where the files do not say "
              "(OSU's collectives): one rank count, as the files hold one run each")
@click.option("--cores", type=click.IntRange(min=1), help="cores of the machine the files "
              "came from (default: this machine's)")
@click.option("--into", help="an imported run of the same suite to add this library to, so "
              "'show' sets the two side by side")
@db_option
def import_cmd(suite: str, files: tuple[str, ...], impl_id: str, launch_per_file: bool,
               figure: str | None, np_: tuple[int, ...] | None, cores: int | None, into: str | None,
               db: str) -> None:
    """Read SUITE's output FILES (osu, imb, netpipe or repro) into a run of the store: what the
    suite measured is each cell's timing method, each run of the suite (or file) one launch,
    so show, report and compare judge them as mpiarena's own runs."""
    choices = Choices(figure, np_[0] if np_ else None)
    parsed = [read(suite, Path(f), choices) for f in files]
    check(parsed, launch_per_file)
    impl = _implementation(impl_id)
    store = stores.store(db)
    into_id = store.resolve(into) if into is not None else None
    machine = {"hostname": f"unknown (imported {suite} output)", "cpu_model": "unknown",
               "cores": cores or here_cores(), "memory_bytes": 0, "kernel": "unknown",
               "governor": "unknown",
               "cores_from": "--cores" if cores else "this machine's (the files do not say)"}
    done = ingest(store, ImportAsk(suite, parsed, impl, launch_per_file, figure),
                  shlex.join(["mpiarena", *sys.argv[1:]]), machine, into_id)
    for p in parsed:
        if p.unmapped:
            err.print(f"note: {p.path}: no counterpart in mpiarena, not imported: "
                      f"{', '.join(p.unmapped)}", soft_wrap=True, markup=False)
    if done.dropped:
        err.print(f"note: {done.dropped} figures left out (printed as 0, below the suite's "
                  "precision, or a ReproMPI repetition that missed its window)", markup=False)
    err.print(f"imported {len(files)} files of {suite} output ({done.launches} launches, "
              f"{done.cells} cells) as {impl_id} in run {done.run_id}", markup=False)

    sys.stdout.write(render(RunSource(store, done.run_id), Format.TERMINAL,
                            RenderOptions(console)))
    stores.say_stored(db, [done.run_id])
