#!/usr/bin/env python3
"""IMB cross-check of the one-sided benchmarks (kernels/mpi_rma.c) against IMB-RMA.

IMB-RMA's single-pair benchmarks at 2 ranks all run the same way: the origin (rank 0) takes
MPI_Win_lock(shared) on the target once, then per iteration issues its operation followed by
MPI_Win_flush (NON-AGGREGATE mode), or issues all of them and flushes once (AGGREGATE mode);
the figure is the origin's time divided by the operations. The window is MPI_Win_create over
IMB's receive buffer. So each maps onto mpiarena's `lockall` synchronisation with
ARENA_RMA_WINDOW=create, which this script sets:

  Unidir_put       NON-AGGREGATE   put-lockall              (MPI_Put + MPI_Win_flush)
  Unidir_get       NON-AGGREGATE   get-lockall
  Accumulate       NON-AGGREGATE   accumulate-lockall       (MPI_FLOAT sums: --datatype float)
  Get_accumulate   NON-AGGREGATE   get_accumulate-lockall
  Unidir_put       AGGREGATE       put-bw-lockall / window  (per operation)
  Unidir_get       AGGREGATE       get-bw-lockall / window
  Fetch_and_op     NON-AGGREGATE   fetch_and_op-lockall     (IMB: one 4-byte float, we 8 bytes)
  Compare_and_swap NON-AGGREGATE   compare_and_swap-lockall (IMB: one 4-byte int, we 8 bytes)

Not mapped: Put_local/Get_local (MPI_Win_flush_local), the *_all and Exchange benchmarks (many
targets), Bidir_* (both ranks origins), Truly_passive_put (overlap with computation).

Known differences, which explain cells outside the band:
- mpiarena's figure is the slower of origin and target per epoch; the target is idle in an MPI
  call (the core's next step), so this is the origin's time plus at most the step's exit.
- AGGREGATE: IMB flushes once per 1000 operations (-iter 1000); mpiarena's window is set to
  1000 too (a suite file of the script's own: `window = 1000`), so both flush alike.
- Open MPI's Accumulate and Get_accumulate from 16 KiB up read 0.73-0.82 (5 rounds, 2026-11-26):
  osc/rdma reduces at the origin (fetch, sum, write back), and a standalone loop of the same
  calls put the gap in two parts: the element type (mpiarena summed MPI_INT then, 6-7% faster
  than IMB's MPI_FLOAT; the script now asks --datatype float) and the buffers (mpiarena's are
  page-aligned, IMB's from malloc: 10-12% slower through btl/vader's single copy). MPICH sums
  at the target from packed messages: in band.
- the atomics are one 4-byte element in IMB and 8 bytes here (not judged: the band starts at
  1 KiB); Open MPI sums a 4-byte float under osc/rdma's lock (about 1 us) but adds a 64-bit
  integer with the btl's atomic (about 0.65 us). Open MPI 4.1.4's 64-bit compare-and-swap is
  n/a here (osc/rdma over btl/vader segfaults, see mpi_rma.c); IMB's 32-bit one runs.
- mpiarena's figure is a median of observations of k iterations after warm-up; IMB's is one
  mean of 1000 iterations after IMB's own warm-up.

Rounds alternate one IMB-RMA launch with one `mpiarena run` (one launch), order rotated, both
through the family's launcher with mpiarena's binding. Ratios mpiarena/IMB: best launch over
best launch (judged, 0.85-1.15 from 1 KiB up) and the median over rounds of the paired ratio.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from common import fmt_t, impl_option
from harness_overhead import clean_up, mpiarena_argv, run_and_load, tagged
from imb_cross_check import (
    BAND,
    FROM,
    IMB_FLAGS,
    NP,
    QUIET_BUSY,
    build_imb,
    launch_imb,
    lengths_file,
    rotated,
)

from mpiarena.base import paths
from mpiarena.base.sizes import format_size, parse_sizes
from mpiarena.impls import Implementation, discover, select

WINDOW = 1000  # mpiarena's operations per epoch of put-bw/get-bw: IMB's -iter
# (IMB benchmark, IMB mode) -> (mpiarena benchmark, operations per mpiarena iteration)
PAIRS = {
    ("Unidir_put", "NON-AGGREGATE"): ("put-lockall", 1),
    ("Unidir_get", "NON-AGGREGATE"): ("get-lockall", 1),
    ("Accumulate", "NON-AGGREGATE"): ("accumulate-lockall", 1),
    ("Get_accumulate", "NON-AGGREGATE"): ("get_accumulate-lockall", 1),
    ("Unidir_put", "AGGREGATE"): ("put-bw-lockall", WINDOW),
    ("Unidir_get", "AGGREGATE"): ("get-bw-lockall", WINDOW),
    ("Fetch_and_op", "NON-AGGREGATE"): ("fetch_and_op-lockall", 1),
    ("Compare_and_swap", "NON-AGGREGATE"): ("compare_and_swap-lockall", 1),
}
ATOMIC = {"Fetch_and_op", "Compare_and_swap"}  # one element whatever the size
IMB_BENCHES = sorted({name for name, _ in PAIRS})
ENV = {"ARENA_RMA_WINDOW": "create"}  # IMB's window: MPI_Win_create over its buffer
Key = tuple[str, str, int]  # IMB benchmark, mode, size (atomics: 8)


def parse_imb_rma(out: str) -> dict[Key, float]:
    """Seconds per operation by (benchmark, mode, size); the atomics' one row keyed at 8 B."""
    got: dict[Key, float] = {}
    bench = mode = None
    for line in out.splitlines():
        words = line.split()
        if line.startswith("# Benchmarking "):
            bench = words[2]
        elif "MODE:" in line:
            mode = words[-1]
        elif bench and mode and len(words) >= 3 and words[0].isdigit():
            got[bench, mode, 8 if bench in ATOMIC else int(words[0])] = float(words[2]) * 1e-6
    return got


def run_imb(impl: Implementation, binary: Path, sizes: list[int], env: dict[str, str]
            ) -> dict[Key, float]:
    """One IMB-RMA launch, started as mpiarena starts its core (launcher, binding, user)."""
    lengths = lengths_file(binary.parent, sizes)
    return parse_imb_rma(launch_imb(impl, binary, [*IMB_BENCHES, "-msglen", str(lengths),
                                                   "-npmin", str(NP), *IMB_FLAGS], env))


def run_arena(impl: Implementation, sizes: list[int], nobs: int, db: Path, env: dict[str, str]
              ) -> tuple[dict[Key, float], dict[str, str]]:
    """One `mpiarena run` of one launch: each mapped cell's median per operation, and why a
    benchmark is n/a."""
    benches = sorted({b for b, _ in PAIRS.values()})
    suite = db.with_suffix(".toml")
    suite.write_text(f'description = "IMB-RMA cross-check"\nbenchmarks = {benches!r}\n'
                     f'sizes = "{",".join(map(str, sorted({*sizes, 8})))}"\nnp = [{NP}]\n'
                     f"observations = {nobs}\nlaunches = 1\nwindow = {WINDOW}\n"
                     .replace("'", '"'))
    argv = [*mpiarena_argv(), "run", "--impl", impl.id, "--suite", str(suite), "--datatype",
            "float", "--db", str(db)]
    data = run_and_load(argv, env | ENV, 900, db)
    got: dict[Key, float] = {}
    na: dict[str, str] = {}
    for (name, mode), (bench, ops) in PAIRS.items():
        for size in [8] if name in ATOMIC else sizes:
            group = data.cells[bench, size, NP][impl.id]
            if group.status == "na":
                na[bench] = group.reason or "n/a"
            elif group.status != "ok" or not group.values:
                raise SystemExit(f"error: mpiarena's {impl.id} {bench} {size} B cell is "
                                 f"{group.status}: {group.reason}")
            else:
                got[name, mode, size] = float(np.median(group.array)) / ops
    return got, na


def report(imb: dict[Key, list[float]], arena: dict[Key, list[float]], na: dict[str, str]
           ) -> bool:
    """The table of ratios; True if every judged cell is in the band."""
    ok_all = True
    print(f"  {'IMB-RMA':<17} {'mode':<13} {'mpiarena':<24} {'size':>7} {'IMB':>9} "
          f"{'mpiarena':>9} {'best':>6}  paired [range]")
    for key in sorted(imb, key=lambda k: (k[0], k[1], k[2])):
        name, mode, size = key
        if (name, mode) not in PAIRS:
            continue
        bench = PAIRS[name, mode][0]
        head = f"  {name:<17} {mode:<13} {bench:<24} {format_size(size):>7} " \
               f"{fmt_t(min(imb[key])):>9}"
        if key not in arena:
            print(f"{head} {'n/a':>9}  ({na.get(bench, 'not measured')})")
            continue
        a, i = np.asarray(arena[key]), np.asarray(imb[key][:len(arena[key])])
        best, paired = a.min() / i.min(), a / i
        judged = size >= FROM and name not in ATOMIC
        inside = BAND[0] <= best <= BAND[1]
        ok_all &= inside or not judged
        mark = ("ok" if inside else "!!") if judged else "--"
        print(f"{head} {fmt_t(a.min()):>9} {best:6.2f}  {np.median(paired):.2f} "
              f"[{paired.min():.2f}-{paired.max():.2f}] {mark}")
    return ok_all


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    impl_option(parser, ("mpich-4.0.2", "openmpi-4.1.4"))
    parser.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
    parser.add_argument("--observations", type=int, default=9, help="mpiarena, per cell")
    parser.add_argument("--sizes", default="1K,16K,256K", help="message sizes")
    parser.add_argument("--quiet-wait", type=float, default=5.0,
                        help="seconds to wait before each launch for other MPI jobs to end and "
                        "the CPUs to idle (default 5; 0: do not wait)")
    args = parser.parse_args()
    sizes = parse_sizes(args.sizes)
    impls = select(discover({}, paths.impls_dir()), args.impl or ["mpich-4.0.2", "openmpi-4.1.4"])
    tag = tagged("mpiarena-imb-rma-")
    token, env, workdir = tag.token, tag.env, tag.workdir
    failed = False
    print(f"{args.rounds} rounds per implementation, each one IMB-RMA launch (-iter 1000) and "
          f"one mpiarena run ({args.observations} observations per cell, "
          f"ARENA_RMA_WINDOW=create), order rotated; ratios mpiarena/IMB per operation: best "
          f"launch over best launch, then paired by round: median [range]; 'ok'/'!!': within "
          f"{BAND[0]:.2f}-{BAND[1]:.2f} or not, from {format_size(FROM)} up; '--' not judged")
    try:
        for impl in impls:
            binary, how = build_imb(impl, workdir, "IMB-RMA")
            if binary is None:
                print(f"\n{impl.id}: skipped: {how}")
                continue
            imb: dict[Key, list[float]] = {}
            arena: dict[Key, list[float]] = {}
            na: dict[str, str] = {}
            disturbed = 0
            for side, calm in rotated(args.rounds, ["imb", "arena"], token, args.quiet_wait):
                disturbed += not calm
                if side == "imb":
                    for key, t in run_imb(impl, binary, sizes, env).items():
                        imb.setdefault(key, []).append(t)
                    continue
                got, na = run_arena(impl, sizes, args.observations,
                                    workdir / f"{impl.id}.db", env)
                for key, t in got.items():
                    arena.setdefault(key, []).append(t)
            print(f"\n{impl.id} ({how}; {impl.launcher.name})")
            if disturbed:
                print(f"  warning: other MPI jobs were running, or the CPUs were >= "
                      f"{QUIET_BUSY:.0%} busy, at {disturbed} of {2 * args.rounds} launches: "
                      "their load disturbs these figures")
            failed |= not report(imb, arena, na)
    finally:
        clean_up(token, workdir)
    print(f"\n{'FAIL' if failed else 'PASS'}: {'not all' if failed else 'all'} judged cells "
          f"within {BAND[0]:.2f}-{BAND[1]:.2f} of IMB-RMA from {format_size(FROM)} up")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
