#!/usr/bin/env python3
"""Do the variants that are not measuring cost the one that is?

In a session every variant's job is alive while one of them measures, and the daemons of LAM
(lamd) and PVM (pvmd) live for a whole round. The script answers twice:

1. directly: for each implementation it starts the daemons and one idle 2-rank job exactly as
   the runner does, then reads from /proc the CPU that the daemons and the job's processes
   (launcher, ranks waiting for their next cell) take over --idle seconds;
2. by effect: it runs `mpiarena run --bench pingpong` of --impl-measured alone and beside the
   other implementations' idle jobs and daemons (one session per launch), rounds alternated,
   and compares the measured implementation's launch medians, with what ran beside each run's
   launches (others' share of the machine) as a check that the comparison was quiet.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mpiarena import paths, users
from mpiarena.analysis.interference import finding
from mpiarena.build import build_core
from mpiarena.impls import Implementation, discover, select
from mpiarena.plan import Variant
from mpiarena.results import load
from mpiarena.runner.cleanup import kill_tagged, tagged_pids
from mpiarena.runner.launch import Daemons, job_for
from mpiarena.store import Store
from mpiarena.tags import RUN_VAR, TOKEN_VAR

HZ = os.sysconf("SC_CLK_TCK")
DEFAULT_IMPLS = ("mpich-4.0.2", "openmpi-4.1.4", "mpich-5.0.2", "lam-7.1.4", "pvm-3.4.6",
                 "tcp")
NP = 2


@dataclass(frozen=True)
class IdleCost:
    """CPU seconds an implementation's daemons and idle job took over `seconds`."""

    impl: str
    seconds: float
    daemons_s: float
    job_s: float
    processes: int


def _family(roots: set[int]) -> set[int]:
    """roots and every live descendant of them (PVM's pvmd starts ranks without our tags)."""
    parent = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent[int(entry.name)] = int(
                    (entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
    found = set(roots)
    grew = True
    while grew:
        more = {p for p, pp in parent.items() if pp in found} - found
        found |= more
        grew = bool(more)
    return found


def _cpu(pids: set[int]) -> dict[int, float]:
    """Each live pid's CPU seconds, its reaped children's included."""
    out = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[pid] = sum(int(f) for f in fields[11:15]) / HZ
    return out


def idle_cost(impl: Implementation, seconds: float, workdir: Path) -> IdleCost:
    """Start the daemons and one idle job of impl as the runner does; measure them idle."""
    run_token = uuid.uuid4().hex
    user = users.for_ranks()
    binary = build_core(impl).binary
    daemons = Daemons(workdir, user, run_token)
    variant = Variant(impl.id, impl)
    job, _ = job_for(variant, NP, binary, workdir, user, workdir / f"{impl.id}.err", daemons)
    try:
        job.start(60)
        time.sleep(1.0)  # past start-up
        ours = _family(set(tagged_pids(run_token, RUN_VAR)))
        in_job = _family(set(tagged_pids(job.token, TOKEN_VAR)))
        before = _cpu(ours)
        time.sleep(seconds)
        after = _cpu(ours)
        delta = {p: after[p] - before[p] for p in after if p in before}
        job.quit(60)
    finally:
        job.kill()
        daemons.stop_all()
        kill_tagged(run_token, var=RUN_VAR)
    return IdleCost(impl.id, seconds, sum(v for p, v in delta.items() if p not in in_job),
                    sum(v for p, v in delta.items() if p in in_job), len(ours))


@dataclass(frozen=True)
class Effect:
    """The measured implementation's pingpong launch medians (seconds) of one run, and the
    largest share of the machine others took during a launch of it."""

    medians: list[float]
    worst_share: float


def pingpong(impls: list[str], measured: str, size: int, launches: int, db: Path) -> Effect:
    argv = [sys.executable, "-c", "from mpiarena.commands import main; main()", "run",
            "--bench", "pingpong", "--sizes", str(size), "--launches", str(launches),
            "--observations", "5", "--db", str(db)]
    for impl in impls:
        argv += ["--impl", impl]
    done = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          check=False)
    if done.returncode != 0:
        raise SystemExit(f"mpiarena run failed: {done.stderr[-2000:]}")
    store = Store(db)
    run = store.resolve("latest")
    group = load(store, run).cells["pingpong", size, NP][measured]
    shares = [x.share for x in finding(store.jobs(run)).launches]
    return Effect([float(np.median(x)) for x in group.nested], max(shares, default=0.0))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--impl", action="append",
                        help=f"implementations (default: {', '.join(DEFAULT_IMPLS)})")
    parser.add_argument("--idle", type=float, default=10.0, help="seconds measured idle")
    parser.add_argument("--measured", default="mpich-4.0.2", help="the measuring variant")
    parser.add_argument("--size", type=int, default=8, help="pingpong size (default 8 B)")
    parser.add_argument("--launches", type=int, default=5, help="launches per run")
    parser.add_argument("--rounds", type=int, default=2, help="alone/beside alternations")
    args = parser.parse_args()
    wanted = list(args.impl or DEFAULT_IMPLS)
    impls = select(discover({}, paths.impls_dir()), wanted)
    workdir = Path(tempfile.mkdtemp(prefix="mpiarena-idle-", dir=paths.scratch_dir()))
    workdir.chmod(0o755)
    try:
        print(f"1. idle for {args.idle:g} s, 2 ranks each (CPU seconds; % of one core)")
        for impl in impls:
            c = idle_cost(impl, args.idle, workdir)
            print(f"  {c.impl:15} daemons {c.daemons_s:6.2f} s ({c.daemons_s / c.seconds:6.1%})"
                  f"   idle job {c.job_s:6.2f} s ({c.job_s / c.seconds:6.1%})"
                  f"   {c.processes} processes")
        others = [i.id for i in impls if i.id != args.measured]
        print(f"\n2. {args.measured} pingpong {args.size} B: alone, and beside idle jobs of "
              f"{', '.join(others)} ({args.rounds} rounds x {args.launches} launches)")
        alone: list[float] = []
        beside: list[float] = []
        for r in range(args.rounds):
            sides = [("alone", [args.measured], alone), ("beside", [i.id for i in impls], beside)]
            for name, chosen, into in sides if r % 2 == 0 else sides[::-1]:
                e = pingpong(chosen, args.measured, args.size, args.launches,
                             workdir / f"{name}.db")
                into += e.medians
                print(f"  round {r} {name:6}: launch medians "
                      f"{', '.join(f'{m * 1e6:.3g}' for m in e.medians)} us; others took up to "
                      f"{e.worst_share:.0%} of the machine during a launch")
        a, b = float(np.median(alone)), float(np.median(beside))
        print(f"  median of launch medians: alone {a * 1e6:.3g} us, beside {b * 1e6:.3g} us, "
              f"beside/alone {b / a:.2f}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
