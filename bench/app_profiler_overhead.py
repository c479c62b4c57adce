#!/usr/bin/env python3
"""What the per-call profiler costs a communication-heavy program (issue 26: <= 5%).

bench/app_program.c, built per library by `mpiarena program`'s own build, runs ROUNDS rounds of a
small MPI_Sendrecv around the ring and an MPI_Allreduce of one double, no computation (about
1-2 s: ROUNDS is chosen from one launch to last --seconds). It is launched bare (`mpiexec -n 2`,
as the rank user when root) without and with the PMPI library preloaded as `mpiarena program`'s
profiled launch preloads it (build.build_pmpi, core_env.PROFILE_DIR), the two alternating,
--launches each. Per library: both medians with their spread, the overhead of the medians in %
with a bootstrap 95% interval (and that of the lower quartiles, which other load on the machine
disturbs less); PASS when the overhead of the medians is <= --target %. Then the profiler's cost
per call, timed the same way with one rank alone (no partner rank to be descheduled), against
the time of one call at 2 ranks: the overhead to expect on a quiet machine. Exit status 1 if
any library misses.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
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

from mpiarena.base import core_env
from mpiarena.impls import Implementation
from mpiarena.platform.build import build_pmpi
from mpiarena.runner.program_launch import read_profile


def rounds_for(impl: Implementation, seconds: float, work: Path) -> int:
    """ROUNDS that make one bare launch's ring last about `seconds`: from a 200000-round launch
    less a 0-round one (the launch's start and end)."""
    probe = 200_000
    empty, full = (built([impl], [str(n)])[impl.id].argv for n in (0, probe))
    bare(impl, full, work)  # the first launch after a build is slow: not the one measured
    ring = bare(impl, full, work) - bare(impl, empty, work)
    return max(probe, int(probe * seconds / max(ring, 1e-3)))


def pair(impl: Implementation, argv: list[str], np_: int, launches: int, work: Path
         ) -> tuple[list[float], list[float], int]:
    """Launches without and with the profiler, alternating; and the calls rank 0 made."""
    pmpi = build_pmpi(impl)
    plain: list[float] = []
    profiled: list[float] = []
    calls = 0
    for i in range(launches):
        for side in ("plain", "profiled") if i % 2 else ("profiled", "plain"):
            if side == "plain":
                plain.append(bare(impl, argv, work, {core_env.PROFILE_DIR: ""}, np_))
                continue
            out = Path(tempfile.mkdtemp(dir=work))
            out.chmod(0o777)
            profiled.append(bare(impl, argv, work, {"LD_PRELOAD": str(pmpi),
                                                     core_env.PROFILE_DIR: str(out)}, np_))
            prof = read_profile(impl.id, out, np_)  # the interposition happened
            calls = sum(c.calls for c in prof[0].values())
    return plain, profiled, calls


def overhead(plain: list[float], profiled: list[float], rng: np.random.Generator
             ) -> tuple[float, float, float, float]:
    """Overhead of the medians in %, its bootstrap 95% interval, and that of lower quartiles."""
    a, b = np.array(profiled), np.array(plain)
    boot = [np.median(rng.choice(a, len(a))) / np.median(rng.choice(b, len(b)))
            for _ in range(5000)]
    lo, hi = (100 * (x - 1) for x in np.percentile(boot, [2.5, 97.5]))
    low = 100 * (np.percentile(a, 25) / np.percentile(b, 25) - 1)
    return 100 * (median(profiled) / median(plain) - 1), float(lo), float(hi), float(low)


def compare(impl: Implementation, args: argparse.Namespace, work: Path,
            rng: np.random.Generator) -> bool:
    rounds = rounds_for(impl, args.seconds, work)
    argv = built([impl], [str(rounds)])[impl.id].argv
    plain, profiled, calls = pair(impl, argv, NP, args.launches, work)
    over, lo, hi, low = overhead(plain, profiled, rng)
    ok = bool(over <= args.target)
    noisy = " (the machine is too noisy to tell: the interval is wider than the target)" \
        if hi - lo > 2 * args.target else ""
    print(f"\n{impl.id}: app_program {rounds} rounds on {NP} ranks (8 B Sendrecv + Allreduce)")
    print(f"  without profiler median {median(plain) * 1e3:8.1f} ms ({spread(plain)}, "
          f"n={len(plain)})")
    print(f"  with profiler    median {median(profiled) * 1e3:8.1f} ms ({spread(profiled)}, "
          f"n={len(profiled)})")
    print(f"  overhead {over:+.2f}% [95% CI {lo:+.2f}% .. {hi:+.2f}%], of the lower quartiles "
          f"{low:+.2f}%: {verdict(ok)} (target <= {args.target:g}%){noisy}")
    # the profiler's cost per call, from one rank alone (no partner to be descheduled)
    solo = built([impl], [str(args.solo_rounds)])[impl.id].argv
    s_plain, s_prof, s_calls = pair(impl, solo, 1, args.launches, work)
    per_call = (median(s_prof) - median(s_plain)) / s_calls
    call = (min(plain) - startup(impl, work)) / calls  # the least disturbed launches
    print(f"  per call, one rank alone ({s_calls} calls, {args.launches} launches per side): "
          f"{per_call * 1e9:+.1f} ns with the profiler; a call at {NP} ranks takes "
          f"{call * 1e9:.0f} ns (fastest launch): {100 * per_call / call:+.1f}% expected on a "
          "quiet machine")
    return ok


def startup(impl: Implementation, work: Path) -> float:
    """The fastest of 3 0-round launches: the launcher, MPI_Init and MPI_Finalize."""
    argv = built([impl], ["0"])[impl.id].argv
    return min(bare(impl, argv, work) for _ in range(3))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    impl_option(parser, DEFAULT_IMPLS)
    parser.add_argument("--launches", type=int, default=10, help="per side and library")
    parser.add_argument("--seconds", type=float, default=1.5, help="one launch's ring, about")
    parser.add_argument("--solo-rounds", type=int, default=2_000_000,
                        help="rounds of the one-rank launches that time the cost per call")
    parser.add_argument("--target", type=float, default=5.0, help="allowed overhead in %%")
    parser.add_argument("--seed", type=int, default=1, help="bootstrap seed")
    args = parser.parse_args()

    impls = implementations(args.impl)
    rng = np.random.default_rng(args.seed)
    print(f"{NP} ranks, {args.launches} launches per side, alternating; {load_line()}")
    failed = False
    with scratch() as work:
        for impl in impls:
            failed |= not compare(impl, args, work, rng)
    print(f"\n{load_line()} at the end")
    print(f"{'MISS' if failed else 'PASS'}: the profiler's overhead")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
