"""Parsed output of another suite into the store as one run, written as `mpiarena run` writes
its own: the implementation, one variant, one job per launch and rank count, one cell per
benchmark, size and rank count of each launch holding its observations. Each run of the suite
found in the files is one launch (or each file, with `per_file`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from ..base.errors import ArenaError
from ..base.records import (
    IMPORTED,
    CellRow,
    Datatype,
    ImplementationRecord,
    JobRow,
    RunKind,
    VariantRecord,
)
from ..base.status import CellStatus, JobStatus
from ..model.benchmarks import BENCHMARKS
from ..model.runs import ImportedFrom, ImportedSettings, RunStart
from ..model.whatran import WhatRan
from ..store import Obs, Store
from .osu import WINDOW
from .records import SUITE_PREFIX, Figure, Parsed


@dataclass(frozen=True)
class ImportedLaunch:
    """The figures of one launch: a run of the suite, or a whole file."""

    source: str  # the file, and which run in it
    figures: tuple[Figure, ...]


@dataclass(frozen=True)
class Imported:
    run_id: int
    launches: int
    cells: int
    dropped: int  # figures of 0 (below what the suite prints) or NaN (a missed window)


def launches(parsed: Sequence[Parsed], per_file: bool) -> list[ImportedLaunch]:
    """The launches the files hold, in the order given."""
    out: list[ImportedLaunch] = []
    for p in parsed:
        if per_file:
            out.append(ImportedLaunch(str(p.path), tuple(f for r in p.runs for f in r.figures)))
        else:
            out += [ImportedLaunch(str(p.path) if len(p.runs) == 1 else f"{p.path} (run {i + 1})",
                                   r.figures) for i, r in enumerate(p.runs) if r.figures]
    return out


def check(parsed: Sequence[Parsed], per_file: bool) -> None:
    """Refuse files that measured a cell by two methods, before any store is opened."""
    _one_method_a_cell(launches(parsed, per_file), {})


def _one_method_a_cell(held: Sequence[ImportedLaunch],
                       stored: dict[tuple[str, int, int], str]) -> None:
    """Every launch of a cell timed by one method (and the method of the run it joins): two
    methods give two figures, which no statistic may pool."""
    seen = {key: (method, "the run it joins") for key, method in stored.items()}
    for launch in held:
        for f in launch.figures:
            here = f"{launch.source}, line {f.line} ({f.source})"
            method, where = seen.setdefault((f.bench, f.size, f.np), (f.timing, here))
            if method != f.timing:
                raise ArenaError(f"{here} measured {f.bench} {f.size} B at {f.np} ranks by "
                                 f"{f.timing}, {where} by {method}: different methods give "
                                 "different figures; import them as separate runs")


def _settings(asked: ImportAsk, held: list[ImportedLaunch],
              before: ImportedSettings | None) -> ImportedSettings:
    """The run's settings: the cells the files hold (and those of the run they join)."""
    figures = [f for launch in held for f in launch.figures]
    per_launch: dict[tuple[int, str, int, int], int] = {}
    for i, launch in enumerate(held):
        for f in launch.figures:
            key = (i, f.bench, f.size, f.np)
            per_launch[key] = per_launch.get(key, 0) + 1
    counts: dict[tuple[str, int, int], int] = {}  # cell -> the launches holding it
    for _, bench, size, n in per_launch:
        counts[bench, size, n] = counts.get((bench, size, n), 0) + 1
    old = before or ImportedSettings(observations=0, launches=0, window=WINDOW)
    windows = {p.window for p in asked.parsed if p.window is not None}
    datatype = _datatype(asked.parsed, old.datatype.value if old.datatype else None)
    files = {**old.imported.files,
             asked.impl.impl_id: [str(p.path.resolve()) for p in asked.parsed]}
    return replace(
        old,
        benchmarks=tuple(sorted({*old.benchmarks, *(f.bench for f in figures)},
                                key=list(BENCHMARKS).index)),
        sizes=tuple(sorted({*old.sizes, *(f.size for f in figures)})),
        nps=tuple(sorted({*old.nps, *(f.np for f in figures)})),
        observations=max([old.observations, *per_launch.values()]),
        launches=max([old.launches, *counts.values()]),
        window=windows.pop() if windows else old.window,
        topology=IMPORTED, ranks_run_as="-",
        datatype=Datatype(datatype) if datatype else None,
        imported=ImportedFrom(asked.suite, asked.figure,
                              "file" if asked.per_file else "run of the suite", files))


def _datatype(parsed: Sequence[Parsed], joined: str | None) -> str | None:
    """The datatype the files' sums added up (and the run they join), or one line where two
    differ: their figures are not the same measurement."""
    used = {p.datatype.value: str(p.path) for p in parsed if p.datatype is not None}
    if joined is not None:
        used.setdefault(joined, "the run it joins")
    if len(used) > 1:
        raise ArenaError("sums of different datatypes: " + ", ".join(
            f"{Datatype(t).mpi} in {where}" for t, where in used.items()) +
            "; import them as separate runs")
    return next(iter(used), None)


@dataclass(frozen=True)
class ImportAsk:
    """What to import: the suite, its files as parsed, the implementation they ran, whether
    each file is one launch, and the figure read where the suite prints several."""

    suite: str
    parsed: Sequence[Parsed]
    impl: ImplementationRecord
    per_file: bool = False
    figure: str | None = None


def ingest(store: Store, asked: ImportAsk, command: str, machine: Mapping[str, object],
           into: int | None = None) -> Imported:
    """Store the files' figures as a new run (or into imported run `into`, as another
    variant, the run reopened while they are written); every file was parsed before anything
    is written."""
    suite, impl = asked.suite, asked.impl
    held = launches(asked.parsed, asked.per_file)
    _one_method_a_cell(held, {} if into is None else
                       {(c.bench, c.size, c.np): c.timing for c in store.cells(into)})
    if into is None:
        start = RunStart(RunKind.IMPORTED, SUITE_PREFIX + suite, command,
                         _settings(asked, held, None), machine=machine)
        with store.new_run(start) as run:
            return _write(store, run.id, asked, held)
    run_record = store.run(into)
    if run_record.suite != SUITE_PREFIX + suite:
        raise ArenaError(f"run {into} is not an imported {suite} run ({run_record.suite}); "
                         "import into a new run (leave out --into)")
    if impl.impl_id in {v.variant for v in store.variants(into)}:
        raise ArenaError(f"run {into} holds {impl.impl_id} already; import it into a new "
                         "run, or give another --impl id")
    with store.reopened(into) as run:
        store.update_settings(run.id, _settings(asked, held,
                                                ImportedSettings.read(run_record.settings)))
        return _write(store, run.id, asked, held)


def _write(store: Store, run_id: int, asked: ImportAsk,
           held: list[ImportedLaunch]) -> Imported:
    """The implementation, its variant, a job per launch and rank count, their cells."""
    suite, impl = asked.suite, asked.impl
    variant = impl.impl_id
    store.add_implementation(replace(impl, run_id=run_id))
    store.add_variant(VariantRecord(run_id=run_id, variant=variant, impl_id=impl.impl_id,
                                    name=impl.impl_id, env={}, args=[], binding="-"))
    seq = len(store.cells(run_id))
    launch_of: dict[int, int] = {}  # rank count -> launches so far
    cells = dropped = 0
    for launch in held:
        by_cell: dict[tuple[str, int, int], list[Figure]] = {}
        for f in launch.figures:
            by_cell.setdefault((f.bench, f.size, f.np), []).append(f)
        for np_ in sorted({k[2] for k in by_cell}):
            index = launch_of.get(np_, 0)
            launch_of[np_] = index + 1
            job = store.add_job(JobRow(run_id=run_id, variant=variant, np=np_,
                                       topology=IMPORTED, binding="-",
                                       command=[suite, launch.source]))
            store.update_job(job, status=JobStatus.OK)
            store.add_what_ran(job, WhatRan(None, f"imported {suite} output: the suite does not "
                                            "report them", "unknown",
                                            f"not in {suite}'s output"))
            for (bench, size, n), figs in by_cell.items():
                if n != np_:
                    continue
                kept = [f for f in figs if f.value > 0 and math.isfinite(f.value)]
                dropped += len(figs) - len(kept)
                if not kept:
                    continue
                scale = BENCHMARKS[bench].scale
                store.add_cell(CellRow(run_id=run_id, job_id=job, variant=variant,
                                       bench=bench, size=size, np=n, status=CellStatus.OK,
                                       seq=seq, launch=index, timing=kept[0].timing),
                               [Obs(i, [f.value / scale]) for i, f in enumerate(kept)])
                seq += 1
                cells += 1
    return Imported(run_id, len(held), cells, dropped)
