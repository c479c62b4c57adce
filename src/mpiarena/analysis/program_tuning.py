"""An `program --tune` run read back from the store: the space each library's profile implied, how
each configuration's race went, the verification's verdicts, and each winner's settings as the
library takes them (an environment file to source, the launcher's line, the library's own
selection file where it has one: Open MPI's coll/tuned rules; MPICH's CVARs and Intel MPI's
I_MPI_ADJUST_<COLL> are environment variables)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from ..base.records import RunKind, RunRecord
from ..base.status import LaunchStatus
from ..impls.base import SelectionFile, slug
from ..impls.registry import family_named
from ..model.programs import LaunchKind, Role, TunedConfig
from ..model.runs import ProgramTuning, program_settings
from ..store import Store
from .program_tuning_space import Space, space_of
from .race import Verified, verification_pairs, verify


@dataclass(frozen=True)
class ReadyToUse:
    """A configuration's settings as its library takes them."""

    variant: str
    impl_id: str
    forced: dict[str, str]  # the environment its launches ran with
    binding: str  # as stored: auto (mpiarena's choice), core or none
    launch: str  # the launcher's line of one of its launches
    selection: SelectionFile | None  # the library's own file for its algorithms, if it has one

    @property
    def env_name(self) -> str:
        return f"{slug(self.impl_id)}.env"

    def env(self, directory: str | None) -> dict[str, str]:
        """What to set: with the selection file written in directory, the variables that load
        it in place of those it replaces; without, the environment as launched."""
        if self.selection is None or directory is None:
            return dict(self.forced)
        return self.selection.env(self.forced, f"{directory}/{self.selection.name}")

    def env_file(self, directory: str | None) -> str:
        """A file to source before the launch (`set -a; . FILE; set +a`), the launch after."""
        head = (f"# {self.variant}: settings found by mpiarena program --tune; source this file, "
                f"then launch:\n#   {self.launch}\n")
        return head + "".join(f"export {k}={shlex.quote(v)}\n"
                              for k, v in self.env(directory).items())

    def command(self, directory: str | None) -> str:
        env = self.env(directory)
        shown = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        return f"env {shown} {self.launch}" if env else self.launch


@dataclass(frozen=True)
class TuneResult:
    run: RunRecord
    budget: float | None  # seconds (None: not recorded, an older store)
    spaces: list[Space]
    configs: list[TunedConfig]
    race: dict[str, list[float]]  # configuration -> wall seconds of its race launches that ended
    spent: dict[str, int]  # configuration -> race launches, failed ones too
    verified: list[Verified]
    ready: dict[str, ReadyToUse]  # each winner's, by configuration
    failed_profiles: dict[str, str]  # library -> why its profiled launch failed
    directory: str | None = None  # where `program --tune -o DIR` wrote the winners' files

    @property
    def winners(self) -> dict[str, str]:
        """library -> its winning configuration."""
        return {c.impl_id: c.variant for c in self.configs if c.role}

    @property
    def overall(self) -> str | None:
        return next((c.variant for c in self.configs if c.role == Role.OVERALL), None)

    @property
    def launches(self) -> int:
        return sum(self.spent.values())


def is_tune_run(run: RunRecord) -> bool:
    return run.kind == RunKind.PROGRAM_TUNING


def tune_result(store: Store, run_id: int) -> TuneResult:
    run = store.run(run_id)
    configs = store.program_configs(run_id)
    launches = store.program_launches(run_id)
    race: dict[str, list[float]] = {c.variant: [] for c in configs}
    spent = dict.fromkeys(race, 0)
    fresh: dict[str, list[float]] = {}
    for x in launches:
        if x.kind == LaunchKind.RACE:
            spent[x.variant] = spent.get(x.variant, 0) + 1
            if x.status == LaunchStatus.OK:
                race.setdefault(x.variant, []).append(x.wall)
        elif x.kind == LaunchKind.VERIFY and x.status == LaunchStatus.OK:
            fresh.setdefault(x.variant, []).append(x.wall)
    settings = program_settings(run)
    tuning = settings.tune or ProgramTuning()
    result = TuneResult(run, tuning.budget,
                        [space_of(s) for s in settings.spaces], configs, race,
                        spent, [], {}, {x.variant: x.reason for x in launches
                                        if x.kind == LaunchKind.PROFILED
                                        and x.status != LaunchStatus.OK})
    winners = result.winners
    pairs = verification_pairs(winners, result.overall, {impl: impl for impl in winners})
    variants = {v.variant: v for v in store.variants(run_id)}
    families = {i.impl_id: family_named(i.family) for i in store.implementations(run_id)}
    ready = {}
    for variant in winners.values():
        v = variants[variant]
        command = next((x.command for x in reversed(launches)
                        if x.variant == variant and x.status == LaunchStatus.OK), "")
        ready[variant] = ReadyToUse(variant, v.impl_id, dict(v.env), v.binding, command,
                                    families[v.impl_id].selection_file(slug(v.impl_id), v.env))
    return TuneResult(run, result.budget, result.spaces, configs, race, spent,
                      verify(fresh, pairs), ready, result.failed_profiles,
                      tuning.output)
