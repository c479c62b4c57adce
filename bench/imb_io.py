#!/usr/bin/env python3
"""IMB-IO cross-check: mpiarena's MPI-IO benchmarks against the Intel MPI Benchmarks' IMB-IO.

For mpich-4.0.2 and openmpi-4.1.4 (--impl for others), the script builds IMB-IO in a copy of
shared/imb (imb_cross_check.build_imb) and alternates, round by round in a rotated order, one
IMB-IO launch with three `mpiarena run`s of the io-* benchmarks, one launch each: `cold`
(--sync window --off-cache), `loop` (--sync loop --off-cache) and `hot` (--sync window), 2 ranks
bound one per core on both sides, as the rank user when run as root. Both sides' files are on
the same local ext4 file system (IMB's in the script's scratch directory, removed with it,
mpiarena's in its run's).

The mapping, IMB's figure its t_max (the slowest rank's mean per call), writes in its
AGGREGATE mode (-aggregate_mode aggregate):
  io-write-indep ~ P_Write_Expl     io-write-coll ~ C_Write_Expl   (MPI_File_write_at[_all])
  io-read-indep  ~ P_Read_Expl      io-read-coll  ~ C_Read_Expl    (MPI_File_read_at[_all])
  io-*-strided   ~ P_/C_{Write,Read}_Indv, up to 4 KiB a rank only: IMB's _Indv view gives
                   each rank one block of every message-sized tile, which is our strided
                   layout while a rank's bytes are one piece; above, ours is cut into 4 KiB
                   pieces and IMB has nothing alike.
IMB's message size is the whole file access of all ranks (each rank X/np bytes), ours a rank's:
IMB runs at np times our sizes. S_ (a single rank), _Shared (shared file pointer) and _Priv
(a file per rank) have no counterpart.

What IMB times differently, and what to expect from it:
- the caches: IMB's calls move on through the file (a fresh region each call, over up to
  40 MiB) into one receive buffer, used again and again: the file's pages come from beyond
  the CPU's L2 (this machine's 480 MiB L3 may hold them), the buffer is in L1/L2. mpiarena's
  cold runs (--off-cache) move on through the file too, each buffer slot its own region, but
  rotate the buffers as well (64 MiB of slots); its hot runs move the same bytes each call,
  file pages and buffer both hot. Where a rank's bytes fit in L1 (1-4 KiB) the three should
  agree: judged, cold against IMB, in the 0.85-1.15 band. From 64 KiB up IMB's state lies
  between mpiarena's two: judged as a bracket, IMB's figure within [hot / 1.15, cold / 0.85]
  (hot/IMB <= 1.15 and cold/IMB >= 0.85).
- writes: IMB writes a fresh region of the file at each call and ends each sample with
  MPI_File_sync, MPI_Barrier, MPI_File_sync inside the timed part (in AGGREGATE mode one per
  up to 1000 calls, the cost spread over them): it times allocating new file pages and writing
  them back to the disk. mpiarena never syncs (its figure is the page cache's), and rewrites
  pages it has written before. Writes are therefore far below the band and printed, not
  judged.
- loop: mpiarena's loop method times the calls back to back (the slowest rank's mean), as IMB
  does; printed, not judged: the band judges the window method, mpiarena's default for
  collectives, which times each call alone from a common start and drops late ones.
- IMB sizes its read file for 50 calls of its largest message but reads as many as its
  iteration policy gives (up to 1000, or 40 MiB a size): calls past the end of the file read
  nothing. The script adds a message of 2 MiB (figure unused) so that the file holds every call.
Measured here (2026-11-26, 3 rounds, 2 cores, other helpers' jobs beside them at 2 of 12
launches; best ratios):
- reads, 1-4 KiB, cold: 0.72-1.00 on both libraries; outside the band, all on the fast side:
  io-read-indep 4 KiB (0.72 MPICH, 0.72 Open MPI; loop 0.80-0.82), io-read-indep 1 KiB 0.83 and
  io-read-*-strided 4 KiB 0.82-0.83 (MPICH), io-read-indep-strided 1 KiB 0.84 (Open MPI). The
  loop, IMB's own method, reads 0.80-1.04 there. What IMB adds at 4 KiB is not found: not a
  misaligned receive buffer (IMB's is malloc'ed: pread of 4 KiB into an address 16 bytes off a
  page measured 20 ns slower here), not its file's size (40 MiB against mpiarena's 128 MiB).
- reads, 64 and 512 KiB: hot/IMB 0.26-0.50, cold/IMB 0.84-1.71: IMB between, except Open MPI's
  io-read-indep 64 KiB, cold 0.84, at the bracket's edge.
- writes: mpiarena/IMB 0.03-0.42 (IMB syncs to the disk and allocates fresh pages).
Two ratios mpiarena/IMB: best (each side's fastest launch over the other's; other jobs only
ever add time), judged; and paired, the median over rounds of the ratio within a round, with
its range. Exit status 1 if a judged cell is outside the band or the bracket.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np
from common import fmt_t, impl_option
from harness_overhead import clean_up, mpiarena_argv, run_and_load, tagged
from imb_cross_check import build_imb, launch_imb, lengths_file, ratio, rotated

from mpiarena.base import paths, users
from mpiarena.base.sizes import format_size, parse_sizes
from mpiarena.impls import Implementation, discover, select

NP = 2
DEFAULT_IMPLS = ["mpich-4.0.2", "openmpi-4.1.4"]
# mpiarena's sides: their run options
SIDES = {"cold": ("--sync", "window", "--off-cache"), "loop": ("--sync", "loop", "--off-cache"),
         "hot": ("--sync", "window")}
BRACKET_FROM = 64 << 10  # from here on IMB's cache state lies between cold and hot
BAND = (0.85, 1.15)
FROM = 1024
PIECE = 4096  # up to this size a rank (mpi_io.c's piece) IMB's _Indv is our strided layout
FILE_SIZER = 2 << 20  # an IMB message whose 50 calls make its read file big enough
# our benchmark -> IMB's, its name in IMB's output
IMB = {"io-write-indep": "P_Write_Expl", "io-write-coll": "C_Write_Expl",
       "io-read-indep": "P_Read_Expl", "io-read-coll": "C_Read_Expl",
       "io-write-indep-strided": "P_Write_Indv", "io-write-coll-strided": "C_Write_Indv",
       "io-read-indep-strided": "P_Read_Indv", "io-read-coll-strided": "C_Read_Indv"}
Key = tuple[str, int]  # our bench, our size (bytes per rank)


def compared(bench: str, size: int) -> bool:
    return not bench.endswith("-strided") or size <= PIECE


def parse_imb_io(out: str) -> dict[tuple[str, int], float]:
    """Seconds per (IMB benchmark, IMB message size): t_max, AGGREGATE mode where IMB has two."""
    got: dict[tuple[str, int], float] = {}
    name, mode = "", "AGGREGATE"
    for line in out.splitlines():
        words = line.split()
        if line.startswith("# Benchmarking "):
            name, mode = words[2], "AGGREGATE"
        elif line.startswith("#") and "MODE:" in line:
            mode = words[-1]
        elif name and mode == "AGGREGATE" and len(words) >= 4 and words[0].isdigit():
            got[name, int(words[0])] = float(words[3]) * 1e-6
    return got


def run_imb_io(impl: Implementation, binary: Path, sizes: list[int], work: Path,
               env: dict[str, str]) -> dict[Key, float]:
    """One IMB-IO launch, started as mpiarena starts its core (launcher, binding, user), in
    work (the rank user's: IMB writes its file IMB_out there); figures keyed by our names."""
    lengths = lengths_file(work, [s * NP for s in [*sizes, FILE_SIZER // NP]])
    imb = parse_imb_io(launch_imb(impl, binary, [*dict.fromkeys(IMB.values()), "-msglen",
                                                 str(lengths), "-npmin", str(NP),
                                                 "-aggregate_mode", "aggregate"], env, work))
    (work / "IMB_out").unlink(missing_ok=True)
    return {(b, s): imb[name, s * NP] for b, name in IMB.items() for s in sizes
            if compared(b, s) and (name, s * NP) in imb}


def run_arena(impl: Implementation, side: str, sizes: list[int], nobs: int, db: Path,
              env: dict[str, str]) -> dict[Key, float]:
    """One `mpiarena run` of one launch with the side's options: each cell's median."""
    argv = [*mpiarena_argv(), "run", "--impl", impl.id, "--bench", ",".join(IMB),
            "--sizes", ",".join(map(str, sizes)), "--np", str(NP), "--observations", str(nobs),
            *SIDES[side], "--launches", "1", "--db", str(db)]
    data = run_and_load(argv, env, 900, db)
    medians = {}
    for bench in IMB:
        for size in sizes:
            group = data.cells[bench, size, NP][impl.id]
            if group.status != "ok" or not group.values:
                raise SystemExit(f"error: mpiarena's {impl.id} {bench} {size} B cell is "
                                 f"{group.status}: {group.reason}")
            medians[bench, size] = float(np.median(group.array))
    return medians



def verdict(bench: str, size: int, best: dict[str, float]) -> str:
    """ok, !! (outside) or -- (not judged) for a cell's best ratios per side."""
    if "-read-" not in bench or size < FROM:
        return "--"
    if size < BRACKET_FROM:
        inside = BAND[0] <= best["cold"] <= BAND[1]
    else:
        inside = best["hot"] <= BAND[1] and best["cold"] >= BAND[0]
    return "ok" if inside else "!!"


def report(imb: dict[Key, list[float]], arena: dict[tuple[str, Key], list[float]],
           sizes: list[int]) -> bool:
    """The table of ratios; True if every judged cell is in the band (or the bracket)."""
    ok_all = True
    print(f"  {'bench':<24}{'size':>8}{'IMB':>14}{'IMB best':>10}  "
          + "".join(f"{s + ': best, paired [range]':>28}" for s in SIDES) + "  judged")
    for bench, name in IMB.items():
        for size in sizes:
            key = (bench, size)
            if not compared(bench, size):
                continue
            got = imb.get(key, [])
            if any(len(got) != len(arena.get((s, key), [])) for s in SIDES):
                print(f"  {bench:<24}{format_size(size):>8}  IMB gave no figure in some rounds")
                ok_all = False
                continue
            cols, best = [], {}
            for side in SIDES:
                best[side], r, lo, hi = ratio(arena[side, key], got)
                cols.append(f"{best[side]:.2f}, {r:.2f} [{lo:.2f}-{hi:.2f}]".rjust(28))
            mark = verdict(bench, size, best)
            ok_all &= mark != "!!"
            print(f"  {bench:<24}{format_size(size):>8}{name:>14}{fmt_t(min(got)):>10}  "
                  + "".join(cols) + f"  {mark}")
    return ok_all


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    impl_option(parser, DEFAULT_IMPLS)
    parser.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
    parser.add_argument("--observations", type=int, default=9, help="mpiarena, per cell")
    parser.add_argument("--sizes", default="1K,4K,64K,512K", help="bytes per rank")
    parser.add_argument("--quiet-wait", type=float, default=5.0,
                        help="seconds to wait before each launch for other MPI jobs to end and "
                        "the CPUs to idle (default 5; 0: do not wait)")
    args = parser.parse_args()

    sizes = parse_sizes(args.sizes)
    found = discover({}, paths.impls_dir())
    impls = select(found, args.impl or DEFAULT_IMPLS)
    tag = tagged("mpiarena-imb-io-")
    token, env, workdir = tag.token, tag.env, tag.workdir
    failed = False
    try:
        print(f"{args.rounds} rounds per implementation, each one IMB-IO launch and mpiarena "
              f"runs cold, loop and hot ({args.observations} observations per cell), order "
              f"rotated; {NP} ranks; ratios mpiarena/IMB: best launch over best launch, then "
              f"paired by round: median [range]; 'ok'/'!!': reads, cold within "
              f"{BAND[0]:.2f}-{BAND[1]:.2f} from {format_size(FROM)}, from "
              f"{format_size(BRACKET_FROM)} IMB between hot and cold (with that slack); '--' "
              "not judged (writes: IMB syncs; see the docstring)")
        for impl in impls:
            binary, how = build_imb(impl, workdir, "IMB-IO")
            if binary is None:
                print(f"\n{impl.id}: skipped: {how}")
                continue
            work = workdir / f"files-{impl.id}"
            work.mkdir()
            if (user := users.for_ranks()) is not None:
                os.chown(work, user.uid, user.gid)
            imb: dict[Key, list[float]] = {}
            arena: dict[tuple[str, Key], list[float]] = {}
            disturbed = 0
            sides = ["imb", *SIDES]
            for side, calm in rotated(args.rounds, sides, token, args.quiet_wait):
                disturbed += not calm
                if side == "imb":
                    for key, t in run_imb_io(impl, binary, sizes, work, env).items():
                        imb.setdefault(key, []).append(t)
                    continue
                medians = run_arena(impl, side, sizes, args.observations,
                                    workdir / f"{impl.id}.db", env)
                for key, t in medians.items():
                    arena.setdefault((side, key), []).append(t)
            print(f"\n{impl.id} ({how}; {impl.launcher.name})")
            if disturbed:
                print(f"  warning: other MPI jobs were running, or the CPUs were busy, at "
                      f"{disturbed} of {len(sides) * args.rounds} launches: their load "
                      "disturbs these figures")
            failed |= not report(imb, arena, sizes)
    finally:
        clean_up(token, workdir)
    print(f"\n{'FAIL' if failed else 'PASS'}: reads {'not all' if failed else 'all'} within "
          f"{BAND[0]:.2f}-{BAND[1]:.2f} of IMB-IO (or bracketing it) from {format_size(FROM)} up")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
