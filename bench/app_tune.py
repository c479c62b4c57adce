#!/usr/bin/env python3
"""`mpiarena program --tune`'s race against a full grid judged by the same rule (issue 41).

The planted case: tests/programs/allreduce_heavy.c (STEPS allreduces of 256 KiB), built per
library as `mpiarena program` builds a source file, run on MPICH with a slow allreduce algorithm
(smp, handed from ch4's shared memory to MPIR) forced through its environment as the library's
"default". The same search space is run twice, each a whole `program --tune` run into one store:
the race (a configuration dropped once the rule calls it slower than its library's leader or
unable to beat it by more than 5%, and the slower half of the undecided after rounds 2, 4, 8,
16) and the grid (every configuration launched every round until the same rule has decided
every one against the leader, or 20 rounds). Per run: the launches the search spent (the race
launches; the profiled launch and the verification's fresh launches are counted apart, the same
for both), rounds, its winner, the verification's verdict and its wall time; for the grid also
the round at which the race's own stop (every comparison decided, the same or beyond reach)
would have ended it, replayed from its launches. The target: the race reaches its verified
answer with at most a third of the grid's launches. Exit status 1 if it does not, or if either
run's verification does not back a gain.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from common import one_impl_option
from rich.console import Console

from mpiarena.analysis.program_tuning import tune_result
from mpiarena.analysis.race import Race
from mpiarena.base import paths, users
from mpiarena.cluster.topology import Where, opened
from mpiarena.impls import discover, select
from mpiarena.platform.build import build_core
from mpiarena.platform.plan import Variant
from mpiarena.platform.program_build import BuildRequest, build_programs
from mpiarena.report.program_tuning import verdict_line
from mpiarena.runner.program import ProgramMeasure, ProgramRun
from mpiarena.runner.program_tuning import Said, TuneSettings, tune_program
from mpiarena.runner.session import RunContext
from mpiarena.store import Store

PROGRAM = Path(__file__).resolve().parent.parent / "tests" / "programs" / "allreduce_heavy.c"
PLANTED = {"MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": "smp",
           "MPIR_CVAR_ALLREDUCE_POSIX_INTRA_ALGORITHM": "mpir"}


@dataclass(frozen=True)
class Searched:
    name: str
    search_launches: int
    other_launches: int  # profiled and verification
    rounds: int
    winner: str
    verdict: str
    gain: bool
    wall: float
    settled_round: int  # the grid: the first round every comparison was settled (0: never)


def search(name: str, eliminate: bool, args: argparse.Namespace, store: Store) -> Searched:
    impls = select(discover({}, paths.impls_dir()), [args.impl])
    programs = build_programs(impls, BuildRequest([str(PROGRAM), str(args.steps), "256"]),
                              lambda line: print(f"warning: {line}", file=sys.stderr))
    variants = [Variant(i.id, i) for i in impls]
    builds = {i.id: build_core(i) for i in impls}
    only = frozenset(args.search.split(","))
    began = time.monotonic()
    with opened(Where()) as topology:
        said = Said(lambda _: None, lambda line: print(f"  {name}: {line}", file=sys.stderr))
        context = RunContext(store, users.for_ranks(), f"bench/app_tune.py {name}",
                             Console(stderr=True), said.progress)
        measured = ProgramRun(variants, programs, builds, ProgramMeasure(2, args.launches))
        outcome = tune_program(measured,
                           TuneSettings(args.budget, args.launches, only, eliminate=eliminate),
                           context, topology, said,
                           {"program": [str(PROGRAM)], "build": "", "src": ""})
    wall = time.monotonic() - began
    r = tune_result(store, outcome.run_id)
    verdicts = [v for v in r.verified if v.library == args.impl]
    return Searched(name, r.launches, len(store.program_launches(outcome.run_id)) - r.launches,
                    max(map(len, r.race.values()), default=0), r.winners.get(args.impl, "-"),
                    verdict_line(verdicts[0]) if verdicts else "the default led the race",
                    any(v.gain for v in verdicts), wall,
                    0 if eliminate else settled_round(r.race))


def settled_round(walls: dict[str, list[float]]) -> int:
    """The grid's launches replayed round by round: the first round after which every
    comparison with the leader was settled (decided, the same, or beyond reach), 0 if none."""
    replay = Race({"lib": list(walls)}, eliminate=False)
    for k in range(min(map(len, walls.values()))):
        for c, seen in walls.items():
            replay.record(c, seen[k])
        replay.close_round()
        if set(replay.alive()) - {replay.leader("lib")} <= replay.settled:
            return k + 1
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    one_impl_option(parser, "mpich-4.0.2")
    parser.add_argument("--search", default="allreduce,binding",
                        help="the dimensions searched (as program --tune --search)")
    parser.add_argument("--steps", type=int, default=200, help="allreduces per launch")
    parser.add_argument("--launches", type=int, default=8, help="verification launches a side")
    parser.add_argument("--budget", type=float, default=600.0, help="seconds per search")
    args = parser.parse_args()
    os.environ.update(PLANTED)
    with tempfile.TemporaryDirectory(prefix="mpiarena-bench-tune-") as d:
        store = Store(Path(d) / "bench.db")
        done = [search("race", True, args, store), search("grid", False, args, store)]
    for s in done:
        print(f"{s.name}: {s.search_launches} launches in {s.rounds} rounds (+{s.other_launches} "
              f"profiled and verification), {s.wall:.0f} s; winner {s.winner}")
        if s.name == "grid":
            print(f"  the race's own stop (every comparison decided, the same or beyond reach) "
                  f"would have ended the grid after round {s.settled_round or '-'}: "
                  f"{s.settled_round * (s.search_launches // max(s.rounds, 1))} launches")
        print(f"  {s.verdict}")
    race, grid = done
    share = race.search_launches / grid.search_launches
    ok = share <= 1 / 3 and race.gain and grid.gain
    print(f"race/grid launches: {race.search_launches}/{grid.search_launches} = {share:.2f} "
          f"(target <= 0.33): {'PASS' if ok else 'MISS'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
