#!/usr/bin/env python3
"""What the per-call profiler costs a communication-heavy program (issue 26: <= 5%).

bench/app_program.c, built per library by `mpiarena app`'s own build, runs ROUNDS rounds of a
small MPI_Sendrecv around the ring and an MPI_Allreduce of one double, no computation (about
1-2 s: ROUNDS is chosen from one launch to last --seconds). It is launched bare (`mpiexec -n 2`,
as the rank user when root) without and with the PMPI library preloaded as `mpiarena app`'s
profiled launch preloads it (build.build_pmpi, core_env.PROFILE_DIR), the two alternating,
--launches each. Per library: both medians with their spread, the overhead of the medians in %
with a bootstrap 95% interval, the calls the profile counted and the overhead per call; PASS
when the overhead is <= --target %. Exit status 1 if any library misses.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
from app_common import NP, bare, built, implementations, load_line, median, scratch, spread, verdict

from mpiarena import core_env
from mpiarena.build import build_pmpi
from mpiarena.impls import Implementation
from mpiarena.runner.program_launch import read_profile


def rounds_for(impl: Implementation, seconds: float, work: Path) -> int:
    """ROUNDS that make one bare launch's ring last about `seconds`: from a 200000-round launch
    less a 0-round one (the launch's start and end)."""
    probe = 200_000
    empty, full = (built([impl], [str(n)])[impl.id].argv for n in (0, probe))
    bare(impl, full, work)  # the first launch after a build is slow: not the one measured
    ring = bare(impl, full, work) - bare(impl, empty, work)
    return max(probe, int(probe * seconds / max(ring, 1e-3)))


def compare(impl: Implementation, args: argparse.Namespace, work: Path,
            rng: np.random.Generator) -> bool:
    rounds = rounds_for(impl, args.seconds, work)
    argv = built([impl], [str(rounds)])[impl.id].argv
    pmpi = build_pmpi(impl)
    plain: list[float] = []
    profiled: list[float] = []
    calls = 0
    for i in range(args.launches):
        for side in ("plain", "profiled") if i % 2 else ("profiled", "plain"):
            if side == "plain":
                plain.append(bare(impl, argv, work, {core_env.PROFILE_DIR: ""}))
                continue
            out = Path(tempfile.mkdtemp(dir=work))
            out.chmod(0o777)
            profiled.append(bare(impl, argv, work, {"LD_PRELOAD": str(pmpi),
                                                     core_env.PROFILE_DIR: str(out)}))
            prof = read_profile(impl.id, out, NP)  # the interposition happened
            calls = sum(c.calls for c in prof[0].values())
    a, b = np.array(profiled), np.array(plain)
    over = 100 * (median(profiled) / median(plain) - 1)
    boot = [np.median(rng.choice(a, len(a))) / np.median(rng.choice(b, len(b)))
            for _ in range(5000)]
    lo, hi = (100 * (x - 1) for x in np.percentile(boot, [2.5, 97.5]))
    per_call = (median(profiled) - median(plain)) / calls if calls else float("nan")
    ok = bool(over <= args.target)
    print(f"\n{impl.id}: app_program {rounds} rounds (Sendrecv + Allreduce of 8 B each)")
    print(f"  without profiler median {median(plain) * 1e3:8.1f} ms ({spread(plain)}, "
          f"n={len(plain)})")
    print(f"  with profiler    median {median(profiled) * 1e3:8.1f} ms ({spread(profiled)}, "
          f"n={len(profiled)})")
    print(f"  overhead {over:+.2f}% [95% CI {lo:+.2f}% .. {hi:+.2f}%]: {verdict(ok)} "
          f"(target <= {args.target:g}%); {calls} profiled calls per rank, "
          f"{per_call * 1e9:+.0f} ns per call")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", action="append", help="implementation id (repeatable)")
    parser.add_argument("--launches", type=int, default=10, help="per side and library")
    parser.add_argument("--seconds", type=float, default=1.5, help="one launch's ring, about")
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
