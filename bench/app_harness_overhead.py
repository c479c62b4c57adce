#!/usr/bin/env python3
"""What `mpiarena program` adds to each launch, against a bare `mpiexec -n 2 BINARY` (issue 26).

bench/app_program.c, built per library by `mpiarena program`'s own build, a short launch (ROUNDS
ring exchanges, no computation), is launched by `mpiarena program`'s runner (AppRunner: the
launcher's command, load snapshots, the launch, its clean-up, the store) and by a bare
`mpiexec -n 2 BINARY` (as the rank user when root, like the runner, output to files), the two
one after the other for every launch, in alternating order, the libraries interleaved as the
runner interleaves them. Per library: the bare launch's median wall time, the median time one
`mpiarena program` launch takes end to end and the median wall time it stores, and the difference
of medians end to end against bare in ms and as % of bare: PASS when <= --ms ms or <= --pct %.
Where the time goes inside one `mpiarena program` launch is printed as medians per step.
Exit status 1 if any library misses.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app_common import (
    DEFAULT_IMPLS,
    NP,
    bare,
    built,
    implementations,
    load_line,
    median,
    scratch,
    spread,
    verdict,
)
from common import impl_option

from mpiarena.base import users
from mpiarena.base.records import RunKind, VariantRecord
from mpiarena.cluster.topology import Local
from mpiarena.model.runs import APP_SUITE, RunStart
from mpiarena.platform.plan import Variant
from mpiarena.runner import presence, program_launch
from mpiarena.runner import program as app
from mpiarena.runner.program import ProgramMeasure, ProgramRun, ProgramRunner
from mpiarena.store import Store
from mpiarena.system import machine_load

# the steps of one launch timed, as (module, attribute) of what the runner calls
STEPS = {"load snapshots": (machine_load, "snapshot"), "load since": (machine_load, "since"),
         "others measuring": (presence, "others_measuring"),
         "launcher command": (app, "command_for"), "launch (incl. clean-up)": (app, "launch"),
         "clean-up /proc scan": (program_launch, "kill_tagged"), "store": (ProgramRunner, "_store")}


class Steps:
    """Seconds spent in each step during the current launch; a step inside another timed one
    (snapshot inside since) counts to the outer one only."""

    def __init__(self) -> None:
        self.now: dict[str, float] = defaultdict(float)
        self.depth = 0
        self.saved: list[tuple[Any, str, Any]] = []

    def wrap(self) -> None:
        for step, (owner, name) in STEPS.items():
            self.saved.append((owner, name, getattr(owner, name)))
            setattr(owner, name, self._timed(step, getattr(owner, name)))

    def restore(self) -> None:
        for owner, name, fn in self.saved:
            setattr(owner, name, fn)

    def _timed(self, step: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kw: Any) -> Any:
            self.depth += 1
            began = time.monotonic()
            try:
                return fn(*args, **kw)
            finally:
                self.depth -= 1
                if self.depth == 0 or step == "clean-up /proc scan":
                    self.now[step] += time.monotonic() - began
        return timed

    def take(self) -> dict[str, float]:
        got, self.now = dict(self.now), defaultdict(float)
        return got


class Timed(ProgramRunner):
    """The runner, each timed launch followed or preceded by a bare one of the same binary."""

    def __init__(self, *a: Any, work: Path, steps: Steps, **kw: Any):
        super().__init__(*a, **kw)
        self.bench_work, self.steps = work, steps
        self.arena: dict[str, list[float]] = defaultdict(list)
        self.bare: dict[str, list[float]] = defaultdict(list)
        self.split: dict[str, list[dict[str, float]]] = defaultdict(list)
        self.turn = 0

    def _launch(self, variant: Variant, kind: str) -> None:
        self.turn += 1
        argv = self.programs[variant.impl.id].argv
        if kind == "timed" and self.turn % 2:
            self.bare[variant.id].append(bare(variant.impl, argv, self.bench_work))
        self.steps.take()
        began = time.monotonic()
        super()._launch(variant, kind)
        took = time.monotonic() - began
        if kind == "timed":
            self.arena[variant.id].append(took)
            self.split[variant.id].append(self.steps.take())
            if not self.turn % 2:
                self.bare[variant.id].append(bare(variant.impl, argv, self.bench_work))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    impl_option(parser, DEFAULT_IMPLS)
    parser.add_argument("--launches", type=int, default=20, help="per side and library")
    parser.add_argument("--warmup", type=int, default=2, help="runner launches not counted")
    parser.add_argument("--rounds", default="100", help="app_program's ROUNDS (default 100)")
    parser.add_argument("--ms", type=float, default=50.0, help="target: added ms per launch")
    parser.add_argument("--pct", type=float, default=2.0, help="target: added %% per launch")
    args = parser.parse_args()

    impls = implementations(args.impl)
    programs = built(impls, [args.rounds])
    variants = [Variant(i.id, i) for i in impls if i.id in programs]
    user = users.for_ranks()
    print(f"app_program {args.rounds} rounds on {NP} ranks, {args.launches} launches per side "
          f"after {args.warmup} warm-up; ranks run as {user.name if user else 'self'} both "
          f"sides; {load_line()}")
    steps = Steps()
    failed = False
    with scratch() as work, tempfile.TemporaryDirectory(dir=work) as db_dir:
        store = Store(Path(db_dir) / "app.db")
        measured = ProgramRun(variants, programs, {},
                          ProgramMeasure(NP, args.launches, args.warmup, profile=False))
        start = RunStart(RunKind.PROGRAM, APP_SUITE, "app_harness_overhead",
                         measured.recorded(Local(), user, {}))
        with store.new_run(start) as run:
            run_id = run.id
            for v in variants:
                store.add_variant(VariantRecord(run_id=run_id, variant=v.id, impl_id=v.impl.id,
                                                name=v.name, env={}, args=[], binding="auto"))
            runner = Timed(measured, store, run_id, Local(), user, lambda _: None, work=work,
                           steps=steps)
            steps.wrap()
            try:
                runner.run()
            finally:
                steps.restore()
        stored = defaultdict(list)
        for launch in store.program_launches(run_id):
            if launch.kind == "timed" and launch.status == "ok":
                stored[launch.variant].append(launch.wall)
            elif launch.kind == "timed":
                raise SystemExit(f"error: {launch.variant} launch failed: {launch.reason}")
        store.close()
    for v in variants:
        b, a, s = runner.bare[v.id], runner.arena[v.id], stored[v.id]
        added = median(a) - median(b)
        pct = 100 * added / median(b)
        ok = added * 1e3 <= args.ms or pct <= args.pct
        failed |= not ok
        print(f"\n{v.id} ({v.impl.launcher}):")
        print(f"  bare mpiexec            median {median(b) * 1e3:7.1f} ms ({spread(b)}, "
              f"n={len(b)})")
        print(f"  mpiarena program launch median {median(a) * 1e3:7.1f} ms ({spread(a)}, "
              f"n={len(a)}) end to end")
        print(f"  its stored wall         median {median(s) * 1e3:7.1f} ms ({spread(s)}): "
              f"{(median(s) - median(b)) * 1e3:+.1f} ms against bare")
        print(f"  added per launch {added * 1e3:+.1f} ms = {pct:+.1f}% of bare: {verdict(ok)} "
              f"(target <= {args.ms:g} ms or <= {args.pct:g}%)")
        split = runner.split[v.id]
        parts = {step: median([s.get(step, 0.0) for s in split]) for step in STEPS}
        print("  inside one launch (medians): " + ", ".join(
            f"{step} {t * 1e3:.1f} ms" for step, t in parts.items()))
    print(f"\n{load_line()} at the end")
    print(f"{'MISS' if failed else 'PASS'}: mpiarena program's added time per launch")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
