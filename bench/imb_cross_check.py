#!/usr/bin/env python3
"""IMB cross-check: mpiarena's three timing methods against the Intel MPI Benchmarks.

For each MPI implementation found (mpich, openmpi, impi families; one that cannot build IMB is
skipped with the compiler's reason), the script copies shared/imb to a scratch directory, builds
IMB-MPI1 with the implementation's own C++ wrapper, then alternates, round by round, one
IMB-MPI1 launch (PingPong, Allreduce, Bcast, Reduce, Alltoall at 2 ranks, -msglen the sizes)
with three `mpiarena run`s of the same benchmarks and sizes, one per timing method (--sync
loop, barrier, window), each a single launch as IMB's side is, in an order rotated every
round. Both sides start through the family's launcher with mpiarena's binding (one core per
rank: -bind-to core / --bind-to core), as the rank user when run as root.

What is compared, per benchmark and size:
- PingPong: IMB's t (half the round trip, a loop of 1000 ping-pongs) against
  mpiarena's pingpong median (max of ranks 0 and 1, halved). Point-to-point is timed as a loop
  whatever --sync says, so the three mpiarena runs are pooled.
- Collectives: IMB's t_max (the largest over ranks of each rank's mean per call, the calls
  separated by IMB's barrier) against mpiarena's median observation (the slowest rank's time
  per call) under loop, barrier and window. Both sum MPI_FLOAT: IMB's default, mpiarena's with
  --datatype float.
Two ratios mpiarena/IMB: best, each side's least disturbed launch over the other's (the level
of a figure here is set at launch and differs 2-3x between launches, see the field notes; other
jobs only ever add time), which is judged; and paired, the median over rounds of the ratio
within a round, with its range. The window column also gives the share of calls it dropped.
IMB runs 1000 calls at every size (-iter 1000 -iter_policy off), its default barrier
(MPI_Barrier) between calls. Before each launch the script waits (up to --quiet-wait) for no
other MPI job and idle CPUs, and counts the launches where that did not happen.
Target: barrier and window within 0.85-1.15 from 1 KiB up; exit status 1 if one is outside.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from common import fmt_t, impl_option
from harness_overhead import (
    Scratch,
    clean_up,
    foreign_mpi,
    mpiarena_argv,
    run,
    run_and_load,
    tagged,
)
from netpipe_reference import busy_elsewhere

from mpiarena.base import paths, users
from mpiarena.base.sizes import format_size, parse_sizes
from mpiarena.impls import Implementation, discover, family_of, select
from mpiarena.platform.plan import Variant
from mpiarena.platform.program_build import wrappers

IMB_SOURCE = Path(os.environ.get("MPIARENA_SHARED",
                              Path(__file__).resolve().parents[1].parent / "shared")) / "imb"
BENCHES = {"pingpong": "PingPong", "allreduce": "Allreduce", "bcast": "Bcast",
           "reduce": "Reduce", "alltoall": "Alltoall"}
METHODS = ("loop", "barrier", "window")
MPI_FAMILIES = ("mpich", "openmpi", "impi")
NOT_IMB = {"lam": "LAM/MPI 7.1.4 implements MPI 1.2, and its C++ bindings do not compile "
                  "IMB-MPI1 (-Werror=deprecated-copy in mpi2cxx/request.h)"}
NP = 2
IMB_FLAGS = ("-iter", "1000", "-iter_policy", "off", "-time", "10")  # 1000 calls at every size
BAND = (0.85, 1.15)
QUIET_BUSY = 0.10  # CPU busy fraction (of both cores) below which the machine counts as quiet
FROM = 1024  # the band applies from this size up
Key = tuple[str, int]  # bench, size


@dataclass
class Rounds:
    """Per (bench, size): IMB's figure and each method's median, one entry per round."""

    imb: dict[Key, list[float]] = field(default_factory=dict)
    arena: dict[tuple[str, Key], list[float]] = field(default_factory=dict)  # (method, key)
    late: dict[Key, list[float]] = field(default_factory=dict)  # window: share dropped


def build_imb(impl: Implementation, workdir: Path, target: str = "IMB-MPI1"
              ) -> tuple[Path | None, str]:
    """IMB's `target` (IMB-MPI1, IMB-RMA, IMB-NBC, IMB-EXT, IMB-IO, IMB-MPI4) built with impl's
    wrappers in a copy of shared/imb, or None and why not."""
    cxx = wrappers(impl).get("MPICXX")
    if cxx is None:
        return None, f"no C++ wrapper beside {impl.wrapper} ({target} is C++)"
    tree = workdir / f"imb-{impl.id}"
    if not tree.exists():
        shutil.copytree(IMB_SOURCE, tree)
    # Open MPI 4.1's C++ bindings cast between function types, which IMB's -Wextra -Werror stops
    done = subprocess.run(["make", target, f"CC={impl.wrapper}", f"CXX={cxx}",
                           "CPPFLAGS=-Wno-cast-function-type", "-j2"], cwd=tree,
                          env=impl.environ(), capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=900)
    if done.returncode != 0:
        said = [ln for ln in (done.stderr + done.stdout).splitlines() if "error" in ln.lower()]
        return None, f"building {target} with {cxx.name} failed: {(said or ['?'])[0][:160]}"
    tree.chmod(0o755)
    return tree / target, f"{target} built with {cxx.name}"


def parse_imb(out: str) -> dict[Key, float]:
    """Seconds per (bench, size): PingPong's t, the collectives' t_max."""
    names = {v: k for k, v in BENCHES.items()}
    got: dict[Key, float] = {}
    bench = None
    for line in out.splitlines():
        words = line.split()
        if line.startswith("# Benchmarking "):
            bench = names.get(words[2])
        elif bench and len(words) >= 3 and words[0].isdigit():
            column = 2 if bench == "pingpong" else 3  # t[usec]; t_max[usec]
            got[bench, int(words[0])] = float(words[column]) * 1e-6
    return got


def launch_imb(impl: Implementation, binary: Path, args: list[str], env: dict[str, str],
               cwd: Path | None = None) -> str:
    """One launch of an IMB binary with args, started as mpiarena starts its core (the family's
    launcher, mpiarena's binding, the rank user when run as root), in cwd (binary's directory by
    default); its output."""
    user = users.for_ranks()
    launch = family_of(impl).launch(impl, NP, Variant(impl.id, impl).binding_for(NP),
                                    os.geteuid() == 0 and user is None)
    full = impl.environ(env) | launch.env
    kw: dict[str, object] = {"cwd": cwd or binary.parent}
    if user is not None:
        full.update(HOME=user.home, USER=user.name, LOGNAME=user.name)
        kw.update(user=user.uid, group=user.gid, extra_groups=[])
    return run([*launch.argv, str(binary), *args], full, 600, **kw)


def lengths_file(where: Path, sizes: list[int]) -> Path:
    """IMB's -msglen file: one message length a line, readable by the rank user."""
    lengths = where / "lengths"
    lengths.write_text("".join(f"{s}\n" for s in sizes))
    lengths.chmod(0o644)
    return lengths


def run_imb(impl: Implementation, binary: Path, sizes: list[int], env: dict[str, str]
            ) -> dict[Key, float]:
    """One IMB-MPI1 launch of BENCHES at sizes."""
    lengths = lengths_file(binary.parent, sizes)
    return parse_imb(launch_imb(impl, binary, [*BENCHES.values(), "-msglen", str(lengths),
                                               "-npmin", str(NP), *IMB_FLAGS], env))


def run_arena(impl: Implementation, method: str, sizes: list[int], nobs: int, db: Path,
              env: dict[str, str]) -> tuple[dict[Key, float], dict[Key, float]]:
    """One `mpiarena run --sync METHOD` of one launch, as IMB's side is one launch: each cell's
    median, and (window) its share dropped."""
    argv = [*mpiarena_argv(), "run", "--impl", impl.id, "--bench", ",".join(BENCHES),
            "--sizes", ",".join(map(str, sizes)), "--observations", str(nobs), "--sync", method,
            "--launches", "1", "--datatype", "float", "--db", str(db)]
    data = run_and_load(argv, env, 900, db)
    medians, late = {}, {}
    for bench in BENCHES:
        for size in sizes:
            group = data.cells[bench, size, NP][impl.id]
            if group.status != "ok" or not group.values:
                raise SystemExit(f"error: mpiarena's {impl.id} {bench} {size} B cell is "
                                 f"{group.status}: {group.reason}")
            medians[bench, size] = float(np.median(group.array))
            if group.late:
                late[bench, size] = float(np.mean(group.late))
    return medians, late


def quiet(token: str, wait: float) -> bool:
    """Wait (up to `wait` seconds) until no other MPI job runs and the CPUs are idle."""
    began = time.monotonic()
    while not (calm := foreign_mpi(token) == 0 and busy_elsewhere(0.3) < QUIET_BUSY):
        if time.monotonic() - began > wait:
            break
        time.sleep(1)
    return calm


def rotated(rounds: int, sides: list[str], token: str, wait: float
            ) -> Iterator[tuple[str, bool]]:
    """Each round's sides, their order rotated round by round (two sides: swapped), each after
    waiting (up to `wait` seconds) for a quiet machine: (side, whether it was quiet); a line on
    stderr as each round ends."""
    for rnd in range(rounds):
        for side in sides[rnd % len(sides):] + sides[:rnd % len(sides)]:
            yield side, quiet(token, wait)
        print(f"  round {rnd + 1}/{rounds} done", file=sys.stderr)


def measure(impl: Implementation, binary: Path, sizes: list[int], args: argparse.Namespace,
            scratch: Scratch) -> tuple[Rounds, int]:
    """args.rounds rounds of IMB and the three methods, order rotated; launches disturbed."""
    db, env, token = scratch.db, scratch.env, scratch.token
    got = Rounds()
    disturbed = 0
    for side, calm in rotated(args.rounds, ["imb", *METHODS], token, args.quiet_wait):
        disturbed += not calm
        if side == "imb":
            for key, t in run_imb(impl, binary, sizes, env).items():
                got.imb.setdefault(key, []).append(t)
            continue
        medians, late = run_arena(impl, side, sizes, args.observations, db, env)
        for key, t in medians.items():
            got.arena.setdefault((side, key), []).append(t)
        for key, share in late.items():
            got.late.setdefault(key, []).append(share)
    return got, disturbed


def ratio(arena: list[float], imb: list[float]) -> tuple[float, float, float, float]:
    """Best launch over best launch (each side's least disturbed round), then the median over
    rounds of the per-round ratio and its range."""
    r = np.asarray(arena) / np.asarray(imb)
    return min(arena) / min(imb), float(np.median(r)), float(r.min()), float(r.max())



def report(got: Rounds, sizes: list[int]) -> bool:
    """The table of ratios; True if barrier and window are in the band from FROM up."""
    ok_all = True
    print(f"  {'bench':<10}{'size':>8}{'IMB best':>10}  " +
          "".join(f"{m + ': best, paired [range]':>30}" for m in METHODS) + "  window late")
    for bench in BENCHES:
        for size in sizes:
            key = (bench, size)
            imb = got.imb.get(key, [])
            if len(imb) != len(got.arena.get(("loop", key), [])):
                print(f"  {bench:<10}{format_size(size):>8}  IMB gave no figure in some rounds")
                ok_all = False
                continue
            cols = []
            for method in METHODS:
                if bench == "pingpong" and method != "loop":
                    cols.append(f"{'(loop)':>30}")
                    continue
                values = got.arena[method, key]
                if bench == "pingpong":  # the three runs time it alike: pool them
                    values = [float(np.median([got.arena[m, key][i] for m in METHODS]))
                              for i in range(len(imb))]
                best, r, lo, hi = ratio(values, imb)
                inside = BAND[0] <= best <= BAND[1]
                judged = method != "loop" and size >= FROM and bench != "pingpong"
                ok_all &= inside or not judged
                mark = "" if not judged else " ok" if inside else " !!"
                cols.append(f"{best:.2f}{mark:>3}, {r:.2f} [{lo:.2f}-{hi:.2f}]".rjust(30))
            late = got.late.get(key)
            tail = f"  {np.mean(late):.1%}" if late else ""
            print(f"  {bench:<10}{format_size(size):>8}{fmt_t(min(imb)):>10}  "
                  + "".join(cols) + tail)
    return ok_all


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    impl_option(parser, what="every MPICH, Open MPI and Intel MPI found")
    parser.add_argument("--rounds", type=int, default=5, help="rounds (default 5)")
    parser.add_argument("--observations", type=int, default=15, help="mpiarena, per cell")
    parser.add_argument("--sizes", default="8,1K,64K,1M", help="message sizes")
    parser.add_argument("--quiet-wait", type=float, default=5.0,
                        help="seconds to wait before each launch for other MPI jobs to end and "
                        "the CPUs to idle (default 5; 0: do not wait)")
    args = parser.parse_args()

    sizes = parse_sizes(args.sizes)
    found = discover({}, paths.impls_dir())
    impls = select(found, args.impl) if args.impl else \
        [f.impl for f in found if f.impl is not None and f.impl.family in MPI_FAMILIES]
    for f in found:
        if f.impl is not None and f.impl not in impls and not args.impl:
            print(f"{f.impl.id}: skipped: {NOT_IMB.get(f.impl.family, 'not MPI')}")
    tag = tagged("mpiarena-imb-")
    token, env, workdir = tag.token, tag.env, tag.workdir
    failed = False
    try:
        print(f"{args.rounds} rounds per implementation, each one IMB-MPI1 launch and three "
              f"mpiarena runs ({args.observations} observations per cell), order rotated; "
              f"2 ranks bound one per core on both sides; ratios mpiarena/IMB: best launch "
              f"over best launch, then paired by round: median [range]; 'ok'/'!!': best of "
              f"barrier and window within "
              f"{BAND[0]:.2f}-{BAND[1]:.2f} from {format_size(FROM)} up")
        for impl in impls:
            binary, how = build_imb(impl, workdir)
            if binary is None:
                print(f"\n{impl.id}: skipped: {how}")
                continue
            got, disturbed = measure(impl, binary, sizes, args,
                                     Scratch(workdir / f"{impl.id}.db", env, token))
            print(f"\n{impl.id} ({how}; {impl.launcher.name})")
            if disturbed:
                print(f"  warning: other MPI jobs were running, or the CPUs were >= "
                      f"{QUIET_BUSY:.0%} busy, at {disturbed} of {4 * args.rounds} launches: "
                      "their load disturbs these figures")
            failed |= not report(got, sizes)
    finally:
        clean_up(token, workdir)
    print(f"\n{'FAIL' if failed else 'PASS'}: barrier and window "
          f"{'not all' if failed else 'all'} within {BAND[0]:.2f}-{BAND[1]:.2f} of IMB from "
          f"{format_size(FROM)} up")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
