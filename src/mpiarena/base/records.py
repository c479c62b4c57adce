"""What the store takes and returns: one frozen record per row, its JSON columns decoded and
its status an enum of status.py; and the cell request every layer from the plan to the store
carries.

A cell and a job are each one record: the row a writer gives (CellRow, JobRow) and the record
read back (CellRecord, JobRecord: the row, numbered by the store, with what a job records as it
ends). Fields follow the tables' columns in order (a job's shape, which it starts with, before
how it ended), so `dataclasses.asdict` gives a row as exported. Records of more than six fields
are keyword-only.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import KW_ONLY, asdict, dataclass, field, fields
from enum import StrEnum
from functools import cache
from typing import Any, NamedTuple, Self

from .status import CellStatus, JobStatus, LaunchShape, RunStatus

MODULE_PREFIX = "module:"  # the ids of implementations offered as environment modules
LOCAL = "local"  # the topology of a run on this machine alone (cluster.topology.Local)
IMPORTED = "imported"  # an imported run's topology, and its implementations' origin


def impl_of(variant: str) -> str:
    """The implementation id a variant id starts with: 'mpich-4.0.2:eager' -> 'mpich-4.0.2';
    a module's id holds a colon of its own: 'module:mpich/5.0.2:eager' -> 'module:mpich/5.0.2'."""
    head = MODULE_PREFIX if variant.startswith(MODULE_PREFIX) else ""
    return head + variant.removeprefix(head).split(":")[0]


@cache
def _names(cls: type) -> tuple[str, ...]:
    """A record's field names, found once per class (a report reads tens of thousands of rows)."""
    return tuple(f.name for f in fields(cls))


class _Record:
    """A row as a record: the columns named in JSON hold JSON text in the store."""

    JSON: tuple[str, ...] = ()
    STATUS: type[StrEnum] | None = None  # the enum its status column holds the words of

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> Self:
        values = {name: row[name] for name in _names(cls)}  # type: ignore[arg-type]  # a class hashes
        for name in cls.JSON:
            if values[name] is not None:
                values[name] = json.loads(values[name])
        if cls.STATUS is not None:
            values["status"] = cls.STATUS(values["status"])
        return cls(**values)


class Datatype(StrEnum):
    """The element type of a run's sums (reduce, allreduce, scan, ireduce, accumulate...):
    `run --datatype`, the core's ARENA_DATATYPE; an imported suite's as it ran (OSU 7: MPI_CHAR
    unless -T, IMB: MPI_FLOAT unless -red_data_type). Sizes stay bytes."""

    INT = "int"
    CHAR = "char"
    FLOAT = "float"
    DOUBLE = "double"

    @property
    def mpi(self) -> str:
        """MPI's name: MPI_INT..."""
        return f"MPI_{self.name}"

    @property
    def size(self) -> int:
        """Bytes of one element."""
        return {"int": 4, "char": 1, "float": 4, "double": 8}[self.value]

    @classmethod
    def of_mpi(cls, name: str) -> Datatype | None:
        """'MPI_CHAR' (any case, a trailing dot) -> CHAR; None for a type not among these."""
        key = name.strip().rstrip(".").upper().removeprefix("MPI_")
        return next((t for t in cls if t.name == key), None)


class Cell(NamedTuple):
    """What a cell measures: a benchmark at a message size (a thread count, for some) and a
    rank count; what the store, the analysis and the reports key a cell's figures by."""

    bench: str
    size: int
    np: int


class Timing(StrEnum):
    """How a cell's calls are timed (plan.timing): a loop divided by its iterations, each call
    between barriers, or in windows opened at one instant on every rank. A cell imported from
    another suite keeps that suite's word instead (imports.records.TIMING)."""

    LOOP = "loop"
    BARRIER = "barrier"
    WINDOW = "window"


@dataclass(frozen=True)
class CellRequest:
    """One cell as a variant's launches ask the core for it, built once in the plan from the
    suite and the run's settings: the job sends it as the core's cell command, the store keeps
    its cell and timing in the cell's row (CellResult.row)."""

    cell: Cell
    _: KW_ONLY  # how the cell is asked, by name
    timing: str = Timing.LOOP  # how its calls are timed (plan.timing)
    observations: int = 0  # observations in each launch
    target_time: float = 0.0  # seconds an observation's timed calls aim at
    max_time: float = 0.0  # seconds the cell may spend taking observations
    window: int = 64  # messages a burst keeps in flight (bibw, message rate)
    hold_time: float = 1.0  # seconds the cpu benchmark holds per observation
    offcache: bool = False  # rotate buffers so caches do not flatter sizes
    validate: bool = False  # check received data after the cell


class RunKind(StrEnum):
    """What a run measured, and so which settings record its `settings` column holds
    (runs.SETTINGS) and how each command renders it."""

    BENCHMARK = "benchmark"  # `mpiarena run`: a suite's cells on the libraries
    REPRODUCED = "reproduced"  # `mpiarena reproduce`: a study's experiment
    TUNE = "tune"  # `mpiarena tune`: collective algorithms as variants
    PROGRAM = "program"  # `mpiarena program`: the user's program
    PROGRAM_TUNING = "program tuning"  # `mpiarena program --tune`: its configurations raced
    SIMULATED = "simulated"  # `mpiarena simulate`: SMPI's models
    IMPORTED = "imported"  # `mpiarena import`: another suite's output
    RELEASES = "releases"  # `mpiarena releases`: a step of a series' bisection

    @property
    def runs_a_program(self) -> bool:
        """Its run holds a program's launches rather than a suite's cells."""
        return self in (RunKind.PROGRAM, RunKind.PROGRAM_TUNING)


@dataclass(frozen=True, kw_only=True)
class RunRecord(_Record):
    """A run: when, what, where; `status` as stored (see Store.status for a dead owner)."""

    JSON = ("machine", "settings", "harness")
    STATUS = RunStatus
    id: int
    started: str
    finished: str | None
    status: RunStatus
    suite: str
    command: str
    seed: int
    version: str
    machine: dict[str, Any]
    settings: dict[str, Any]
    pid: int
    host: str
    note: str | None
    # where the measuring time went: {"wall": seconds, "variants": {id: HarnessTime}};
    # None: an older run, or one that measured nothing yet
    harness: dict[str, Any] | None = None
    kind: RunKind = RunKind.BENCHMARK

    def __post_init__(self) -> None:
        if isinstance(self.kind, str):  # the store's word
            object.__setattr__(self, "kind", RunKind(self.kind))


@dataclass(kw_only=True)
class HarnessTime:
    """Where a variant's measuring time went, in seconds (the runner adds as it goes): starting
    launches (the launcher to the core's hello, daemons included), reading what a library runs
    with (its first launch), quitting them (finalize and exit), cells as the harness saw them
    (a command sent to its done line), of which rank 0 spent in warm-up and calibration, in
    observation steps, and in the observations' timed calls, and storing what was measured."""

    launches: int = 0
    cells: int = 0
    launching: float = 0.0
    configuring: float = 0.0
    quitting: float = 0.0
    cell_wall: float = 0.0
    calibrating: float = 0.0
    observing: float = 0.0
    timed: float = 0.0
    storing: float = 0.0


@dataclass(frozen=True, kw_only=True)
class RunSettings:
    """What a run of a suite's cells was asked to do, as its `settings` column holds it
    (`stored` writes it, `read` reads it back): a key an older store lacks reads as the
    default here."""

    benchmarks: tuple[str, ...] = ()
    sizes: tuple[int, ...] = ()
    nps: tuple[int, ...] = ()
    observations: int = 0  # per cell in each launch
    launches: int = 1  # of each variant per rank count, before any added
    budget: float = 0.0
    target_time: float = 0.0
    max_cell_time: float | None = None
    window: int = 64
    hold_time: float | None = None
    sync: str | None = None
    offcache: bool = False
    validate: bool = False
    timeout: float | None = None
    topology: str = LOCAL
    precision: float | None = None  # adaptive sampling's target, if asked
    max_time: float | None = None
    wait_quiet: float = 0.0
    ranks_run_as: str = "-"
    tuning: dict[str, dict[str, str]] = field(default_factory=dict)  # a tuning run's variants
    tuning_verify: dict[str, str] = field(default_factory=dict)  # a check's tuned files
    study: str | None = None  # a reproduction's study and experiment
    experiment: str | None = None
    quick: bool = False
    # the sums' element type as asked (run --datatype) or as an imported suite ran; None: not
    # asked, MPI_INT sums and MPI_BYTE blocks in the datatype benchmarks (every older store)
    datatype: Datatype | None = None

    @classmethod
    def read(cls, stored: dict[str, Any]) -> RunSettings:
        given = {f.name: stored[f.name] for f in fields(cls) if stored.get(f.name) is not None}
        for name in ("benchmarks", "sizes", "nps"):
            if name in given:
                given[name] = tuple(given[name])
        if "datatype" in given:
            given["datatype"] = Datatype(given["datatype"])
        return cls(**given)

    def stored(self) -> dict[str, Any]:
        """The record as its `settings` column holds it (JSON's types)."""
        return asdict(self)

    @property
    def sums(self) -> Datatype | None:
        """The element type the run's sums added up (an imported run's: as its suite's output
        said, ImportedSettings.sums)."""
        return self.datatype or Datatype.INT

    @property
    def sums_name(self) -> str:
        """The sums' datatype in words: MPI's name, or that the suite's output did not say."""
        return self.sums.mpi if self.sums else "a datatype its suite's output does not say"

    @property
    def blocks(self) -> str:
        """What the datatype benchmarks' 8-byte blocks were made of (MPI's name)."""
        return self.datatype.mpi if self.datatype else "MPI_BYTE"


@dataclass(frozen=True, kw_only=True)
class ImplementationRecord(_Record):
    """An implementation a run built its core against."""

    run_id: int
    impl_id: str
    family: str
    version: str
    version_string: str
    origin: str
    prefix: str | None
    wrapper: str
    launcher: str
    wrapper_flags: str
    cflags: str


@dataclass(frozen=True, kw_only=True)
class VariantRecord(_Record):
    """A variant: an implementation with its environment, arguments and binding."""

    JSON = ("env", "args")
    run_id: int
    variant: str
    impl_id: str
    name: str
    env: dict[str, str]
    args: list[str]
    binding: str


@dataclass(frozen=True, kw_only=True)
class _Numbered:
    """The id the store numbers a row by."""

    id: int


@dataclass(frozen=True, kw_only=True)
class JobRow:
    """One launch as it starts (Store.add_job): its run, variant and rank count, where it runs,
    its binding, its command, and whether it measures every cell of its session."""

    run_id: int
    variant: str
    np: int
    topology: str
    binding: str
    command: list[str]
    shape: LaunchShape = LaunchShape.WHOLE  # every cell of the plan, or a budget's open ones


# _Numbered after the row's class: a dataclass takes its bases' fields from the last base
# first, so the id comes first, as in the table.
@dataclass(frozen=True, kw_only=True)
class JobRecord(JobRow, _Numbered, _Record):
    """One launch as stored: its row, how it ended, its clock, where each rank ran, and what
    ran beside it (machine_load.Interference's fields; None in stores older than schema 5)."""

    JSON = ("command", "ranks", "interference")
    STATUS = JobStatus
    status: JobStatus
    reason: str | None  # why it failed: the cause alone, the cell it failed in below
    tick: float | None
    resolution: float | None
    thread_level: str | None
    ranks: list[dict[str, Any]]
    interference: dict[str, Any] | None
    config: str | None  # the hash of what its library reported it ran with (Store.what_ran)
    failed_bench: str | None = None  # the cell it failed in (None: it failed outside a cell)
    failed_size: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", LaunchShape(self.shape))  # the store's word

    @property
    def why(self) -> str:
        """Why it failed as a run shows it: the cell it failed in, then the cause ("": no
        reason stored)."""
        if not self.reason or self.failed_bench is None:
            return self.reason or ""
        size = "" if self.failed_size is None else f" {self.failed_size} B"
        return f"{self.failed_bench}{size}: {self.reason}"


@dataclass(frozen=True, kw_only=True)
class CellRow:
    """A cell measured (or not) for a variant in one launch, as a writer gives it
    (Store.add_cell, with its observations): what was asked, where it ran, how it ended."""

    run_id: int
    job_id: int | None
    variant: str
    bench: str
    size: int
    np: int
    iterations: int | None = None
    status: CellStatus
    reason: str | None = None
    seq: int = 0
    launch: int = 0  # the variant's launches at this rank count, from 0
    timing: str = Timing.LOOP  # as asked (CellRequest.timing), or an imported suite's word


@dataclass(frozen=True, kw_only=True)
class CellRecord(CellRow, _Numbered, _Record):
    """A cell as stored: its row, numbered."""

    STATUS = CellStatus
