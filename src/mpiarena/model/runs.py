"""One run protocol: the settings record each kind of run stores (written by `stored`, read
back by `read` as the same class), what starts a run (RunStart, which Store.new_run records
through one lifecycle), and the kind an older store's run was, derived from what it holds."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from ..base import machine
from ..base.records import LOCAL, Datatype, RunKind, RunRecord, RunSettings
from .programs import BuiltProgram, Metric

APP_SUITE = "app"  # the suite column of a program's runs
SIMULATED_SUITE = "simulate"  # the suite column of a simulated run
IMPORTED_PREFIX = "imported "  # an imported run's suite column: "imported osu"


def _given(cls: type, stored: Mapping[str, Any]) -> dict[str, Any]:
    """The stored values of the record's fields (a key missing or null: the default)."""
    return {f.name: stored[f.name] for f in fields(cls) if stored.get(f.name) is not None}


@dataclass(frozen=True)
class ImportedFrom:
    """Where an imported run's figures came from: the suite, the figure read, what one launch
    was (a run of the suite or a file), and each implementation's files."""

    suite: str = ""
    figure: str | None = None
    launch: str = "run of the suite"
    files: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class ImportedSettings(RunSettings):
    """An imported run's settings: a suite's cells as the files held them, and their source."""

    imported: ImportedFrom = field(default_factory=ImportedFrom)

    @property
    def sums(self) -> Datatype | None:
        """The element type the suite's sums added up, as its output said (None: it does not
        say, ReproMPI's)."""
        return self.datatype

    @classmethod
    def read(cls, stored: dict[str, Any]) -> ImportedSettings:
        base = super().read(stored)
        assert isinstance(base, ImportedSettings)
        return replace(base, imported=ImportedFrom(**_given(ImportedFrom,
                                                            stored.get("imported") or {})))


@dataclass(frozen=True, kw_only=True)
class SimulatedSettings(RunSettings):
    """A simulated run's settings: the cells, and what SMPI modelled them on."""

    simgrid: str = "?"
    link: str = ""
    factors: tuple[str, ...] = ()
    ranks_per_node: int = 1
    computation: bool = False
    models: dict[str, str] = field(default_factory=dict)  # variant -> the model in words

    @classmethod
    def read(cls, stored: dict[str, Any]) -> SimulatedSettings:
        base = super().read(stored)
        assert isinstance(base, SimulatedSettings)
        return replace(base, factors=tuple(base.factors))


@dataclass(frozen=True, kw_only=True)
class ReleasesSettings(RunSettings):
    """A run of `mpiarena releases`: the cells, and the series' releases it measured side by
    side (a bisection's step, or a pair under the build's levers)."""

    releases: tuple[str, ...] = ()  # the series' members, by name
    series: tuple[str, ...] = ()  # every member, oldest first ("4.2.3", "4.0.2 (debian)")
    bisection_step: int | None = None  # from 1 (None: a build-or-release separation)
    build_levers: tuple[str, ...] = ()  # the levers the second of a separated pair ran under

    @classmethod
    def read(cls, stored: dict[str, Any]) -> ReleasesSettings:
        base = super().read(stored)
        assert isinstance(base, ReleasesSettings)
        return replace(base, releases=tuple(base.releases), series=tuple(base.series),
                       build_levers=tuple(base.build_levers))


@dataclass(frozen=True)
class ProgramTuning:
    """What a `program --tune` run could spend and search (a key an older store lacks: the
    default)."""

    budget: float | None = None  # seconds of launches (None: not recorded, an older store)
    verify_launches: int = 0
    search: tuple[str, ...] = ()
    eliminate: bool = True
    output: str | None = None

    @classmethod
    def read(cls, stored: Mapping[str, Any]) -> ProgramTuning:
        given = _given(cls, stored)
        if "search" in given:
            given["search"] = tuple(given["search"])
        return cls(**given)


@dataclass(frozen=True, kw_only=True)
class ProgramSettings:
    """A program's run (`mpiarena program`, with --tune: `tune`): how it was launched, what was
    read of it, and the program each library ran."""

    np: int = 0
    launches: int = 0
    warmup: int = 0
    timeout: float = 600.0
    profile: bool = True
    metrics: tuple[Metric, ...] = ()
    topology: str = LOCAL
    ranks_run_as: str = "self"
    programs: dict[str, BuiltProgram] = field(default_factory=dict)  # implementation -> it
    program: tuple[str, ...] = ()  # as given on the command line
    build: str = ""
    src: str = ""
    tune: ProgramTuning | None = None  # a tuning run's budget and search
    spaces: tuple[dict[str, Any], ...] = ()  # a tuning run's spaces, once profiled

    @classmethod
    def read(cls, stored: Mapping[str, Any]) -> ProgramSettings:
        given = _given(cls, stored)
        given["metrics"] = tuple(Metric(**m) for m in given.get("metrics", ()))
        given["programs"] = {k: BuiltProgram(**p) for k, p in given.get("programs", {}).items()}
        for name in ("program", "spaces"):
            given[name] = tuple(given.get(name, ()))
        if "tune" in given:
            given["tune"] = ProgramTuning.read(given["tune"])
        return cls(**given)

    def stored(self) -> dict[str, Any]:
        """The record as its `settings` column holds it (JSON's types)."""
        return asdict(self)


StoredSettings = RunSettings | ProgramSettings  # every kind's record (the first's subclasses)

SETTINGS: dict[RunKind, type[RunSettings] | type[ProgramSettings]] = {
    RunKind.BENCHMARK: RunSettings, RunKind.REPRODUCED: RunSettings, RunKind.TUNE: RunSettings,
    RunKind.PROGRAM: ProgramSettings, RunKind.PROGRAM_TUNING: ProgramSettings,
    RunKind.SIMULATED: SimulatedSettings, RunKind.IMPORTED: ImportedSettings,
    RunKind.RELEASES: ReleasesSettings}


def settings_of(run: RunRecord) -> StoredSettings:
    """The run's settings as its kind's record."""
    return SETTINGS[run.kind].read(run.settings)


def cells_settings(run: RunRecord) -> RunSettings:
    """A run's settings as its kind's record of a suite's cells (a program run's read as one:
    its defaults)."""
    kind = SETTINGS[run.kind]
    return (kind if issubclass(kind, RunSettings) else RunSettings).read(run.settings)


def program_settings(run: RunRecord) -> ProgramSettings:
    """A program run's settings (any other run's read as one: its defaults)."""
    return ProgramSettings.read(run.settings)


def kind_of(suite: str, settings: Mapping[str, Any]) -> RunKind:
    """The kind of a run stored before runs recorded theirs, from its suite and settings."""
    if suite == APP_SUITE:
        return RunKind.PROGRAM_TUNING if "tune" in settings else RunKind.PROGRAM
    if suite == SIMULATED_SUITE:
        return RunKind.SIMULATED
    if suite.startswith(IMPORTED_PREFIX):
        return RunKind.IMPORTED
    if settings.get("releases"):
        return RunKind.RELEASES
    if settings.get("study"):
        return RunKind.REPRODUCED
    if settings.get("tuning") or settings.get("tuning_verify"):
        return RunKind.TUNE
    return RunKind.BENCHMARK


@dataclass(frozen=True)
class RunStart:
    """What starts a run in the store: its kind, its suite, the command line, its settings
    record, the seed of its order, and the machine it runs on."""

    kind: RunKind
    suite: str
    command: str
    settings: StoredSettings
    seed: int = 0
    machine: Mapping[str, object] = field(default_factory=machine.describe)
