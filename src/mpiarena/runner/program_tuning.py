"""`mpiarena program --tune`'s measurement: one profiled launch per library, the search space it
implies, the race of the configurations in interleaved rounds within the budget, and the
verification of the winners in fresh interleaved launches against each library's default;
every launch stored as `app` stores its own (kinds profiled, race, verify)."""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from ..analysis.program_tuning_space import Configuration, Space, configurations, shares, space
from ..analysis.race import DropCause, Race, verification_pairs
from ..base import units
from ..base.errors import ArenaError
from ..base.records import RunKind
from ..base.status import LaunchStatus
from ..cluster.topology import Topology
from ..model.programs import Role, TunedConfig
from ..model.runs import APP_SUITE, ProgramTuning, RunStart, program_settings
from ..platform.plan import Variant
from . import presence
from .program import ProgramRun, ProgramRunner
from .session import Outcome, RunContext, register


@dataclass(frozen=True)
class TuneSettings:
    """What the race may spend and search, and where the winners' files go."""

    budget: float  # seconds of launches, from the first profiled one to the last verification
    verify_launches: int  # fresh launches of each side of a verification
    only: frozenset[str] | None = None  # the dimensions --search names (None: the profile's)
    max_rounds: int = 20
    eliminate: bool = True  # False: the full grid (every configuration every round), a bench's
    output: str | None = None  # -o DIR, recorded with the run (the command writes the files)


@dataclass(frozen=True)
class Said:
    """Where the race speaks: the space before it starts (stdout), progress while it runs."""

    space: Callable[[list[Space]], None]
    progress: Callable[[str], None]


class TuneRunner:
    """One tuning run's launches; the AppRunner's session holds what they need."""

    def __init__(self, runner: ProgramRunner, tuning: TuneSettings, said: Said):
        self.runner, self.tuning, self.said = runner, tuning, said
        self.began = time.monotonic()
        self.variants: dict[str, Variant] = {}
        self.typical: dict[str, float] = {}  # library -> its profiled launch's wall

    def left(self) -> float:
        return self.tuning.budget - (time.monotonic() - self.began)

    def run(self) -> list[TunedConfig]:
        r = self.runner
        with r.session():
            spaces = self._profile()
            configs = {s.impl: configurations(s) for s in spaces}
            for cs in configs.values():
                for c in cs:
                    impl = next(v.impl for v in r.variants if v.impl.id == c.impl)
                    self.variants[c.id] = Variant(c.id, impl, _name(c), c.env, (), c.binding)
            register(r.store, r.run_id, {}, [v for k, v in self.variants.items()
                                             if k not in {d.id for d in r.variants}])
            race = Race({impl: [c.id for c in cs] for impl, cs in configs.items()},
                        self.tuning.max_rounds, self.tuning.eliminate)
            self._check_budget(race)
            rng = random.Random(r.settings.seed)
            self._race(race, rng)
            winners = race.winners()
            overall = min(winners.values(), key=lambda c: statistics.median(race.walls[c]),
                          default=None) if len(winners) > 1 else None
            self._verify(winners, overall, rng)
        return [TunedConfig(c.id, c.impl, dict(c.values),
                            race.dropped[c.id].round if c.id in race.dropped else None,
                            race.dropped[c.id].reason if c.id in race.dropped else "",
                            Role.OVERALL if c.id == overall else
                            Role.WINNER if winners.get(c.impl) == c.id else Role.NONE)
                for cs in configs.values() for c in cs]

    def _profile(self) -> list[Space]:
        """Each library's profiled launch, and the space its profile implies."""
        r = self.runner
        profiled = {v.impl.id: r.launch(v, "profiled") for v in r.variants}
        good = {impl: x for impl, x in profiled.items() if x.status == LaunchStatus.OK}
        for impl, x in profiled.items():
            if impl not in good:
                self.said.progress(f"{impl}: left out: the program failed under its default "
                                   f"({x.reason})")
        if not good:
            first = next(iter(profiled.values()))
            raise ArenaError(f"the program failed under every library's default: {first.reason}")
        calls = r.store.program_calls(r.run_id)
        local = r.topology.placement(r.settings.np) is None
        spaces = [space(v.impl, shares(calls.get(good[v.impl.id].id, []), r.settings.np,
                                       good[v.impl.id].wall),
                        v.binding_for(r.settings.np) if local else None, self.tuning.only)
                  for v in r.variants if v.impl.id in good]
        self.typical = {impl: x.wall for impl, x in good.items()}
        r.store.update_settings(r.run_id, replace(program_settings(r.store.run(r.run_id)),
                                                  spaces=tuple(asdict(s) for s in spaces)))
        self.said.space(spaces)
        return spaces

    def _wall(self, race: Race, config: str) -> float:
        """What a launch of config is expected to take: its median so far, else its library's
        profiled launch."""
        seen = race.walls.get(config)
        return statistics.median(seen) if seen else self.typical[self.variants[config].impl.id]

    def _verify_cost(self) -> float:
        return self.tuning.verify_launches * 2 * sum(self.typical.values())

    def _check_budget(self, race: Race) -> None:
        one = sum(self._wall(race, c) for c in race.alive())
        if one + self._verify_cost() > self.left():
            need = time.monotonic() - self.began + 4 * one + self._verify_cost()
            raise ArenaError(f"--budget {units.duration(self.tuning.budget)} is too small for one "
                             f"round: a launch of each of the {len(race.alive())} "
                             f"configurations takes about {units.duration(one)} and the "
                             f"verification about {units.duration(self._verify_cost())}; give "
                             f"--budget {_minutes(need)} or more")

    def _race(self, race: Race, rng: random.Random) -> None:
        r = self.runner
        while not race.finished:
            if sum(self._wall(race, c) for c in race.alive()) + self._verify_cost() > self.left():
                self.said.progress(f"the budget is spent after round {race.rounds}: the leaders "
                                   "so far go to the verification")
                return
            order = race.alive()
            rng.shuffle(order)
            for c in order:
                x = r.launch(self.variants[c], "race")
                race.record(c, x.wall if x.status == LaunchStatus.OK else None, x.reason)
            for d in race.close_round():
                self.said.progress(f"  dropped {d.config}: {d.reason}")
            for c, d in race.dropped.items():
                if d.round == race.rounds and d.cause == DropCause.FAILED:
                    self.said.progress(f"  dropped {c}: {d.reason}")
            self.said.progress(f"round {race.rounds}: {len(race.alive())} configurations left, "
                               f"{race.spent} launches spent, "
                               f"{units.duration(max(self.left(), 0))} of the budget left")

    def _verify(self, winners: dict[str, str], overall: str | None, rng: random.Random) -> None:
        defaults = {impl: impl for impl in winners}
        sides = sorted({c for _, d, s in verification_pairs(winners, overall, defaults)
                        for c in (d, s)})
        if not sides:
            return
        self.said.progress(f"verifying: {', '.join(sides)}, {self.tuning.verify_launches} "
                           "fresh launches each")
        for _ in range(self.tuning.verify_launches):
            order = list(sides)
            rng.shuffle(order)
            for c in order:
                self.runner.launch(self.variants[c], "verify")


def _name(c: Configuration) -> str:
    named = [f"{d}={v}" for d, v in c.values if v != "default"]
    return ",".join(named) or "default"


def _minutes(seconds: float) -> str:
    return f"{max(1, -(-seconds // 60)):.0f}m"


def tune_program(measured: ProgramRun, tuning: TuneSettings, context: RunContext,
                 topology: Topology, said: Said, recorded: Mapping[str, Any]) -> Outcome:
    """The tuning run into a new program run of the store; Ctrl-C ends it as incomplete."""
    measured = replace(measured, settings=replace(measured.settings, profile=True))
    record = replace(measured.recorded(topology, context.rank_user, recorded),
                     launches=tuning.verify_launches, warmup=0,
                     tune=ProgramTuning(tuning.budget, tuning.verify_launches,
                                        tuple(sorted(tuning.only or ())), tuning.eliminate,
                                        tuning.output))
    start = RunStart(RunKind.PROGRAM_TUNING, APP_SUITE, context.command, record,
                     measured.settings.seed)
    store = context.store
    with store.new_run(start) as run:
        register(store, run.id, measured.builds, measured.variants)
        runner = ProgramRunner(measured, store, run.id, topology, context.rank_user, lambda _: None)
        with presence.measuring(context.command, topology.label):
            store.add_program_configs(run.id, TuneRunner(runner, tuning, said).run())
    return Outcome(run.id, run.status)
