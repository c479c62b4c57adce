"""What each benchmark of the measurement core means: who times it, and how many bytes it moves.

The core reports every rank's time per iteration of its loop, and extra figures per rank
(CPU seconds per wall second, resident memory, overlap and progress timings); an observation
is reduced here, by one rule the runner's budget and the store's figures both take
(Benchmark.timed): point-to-point benchmarks take the ranks of the pair, collectives the
slowest rank, a rank without a figure (NaN) left out; cost benchmarks the figure they exist for
(CPU %, memory overhead, overlap %...); application kernels (kernels/apps.c) the wall time of
one run of the slowest rank, their size the problem size (trapezoids, matrix order, range end,
particles, grid edge).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from ..base.records import Datatype, RunSettings
from ..base.sizes import format_size
from .guidelines import GUIDELINES


class Kind(StrEnum):
    """What a benchmark measures: the library's clock, point-to-point, a collective, start-up or
    shut-down, a cost (CPU, memory, overlap, progress), or an application kernel."""

    TIMER = "timer"
    P2P = "p2p"
    COLL = "coll"
    STARTUP = "startup"
    COST = "cost"
    APP = "app"


Extras = dict[str, list[float]]
NAN = float("nan")
OVERLAP_OPS = {"exchange": "", "iallreduce": "_iallreduce", "ialltoall": "_ialltoall"}


def overlap_percent(pure: float, compute: float, overlapped: float) -> float:
    """Overlap: the share of the shorter of communication and computation hidden,
    100 * (pure + compute - overlapped) / min(pure, compute), clipped to 0-100 (IMB-NBC divides
    by the longer, max(pure, compute)). The core makes the compute as long as the pure
    communication, where all three agree with OSU's 100 * (1 - (overlapped - compute) / pure)."""
    shorter = min(pure, compute)
    if not shorter > 0:
        return NAN
    return 100 * min(1.0, max(0.0, (pure + compute - overlapped) / shorter))


def overlap_of(extras: Extras, op: str = "exchange") -> float:
    """Overlap % of one operation, the mean of ranks 0 and 1."""
    tag = OVERLAP_OPS[op]
    names = [f"pure{tag}", f"compute{tag}", f"overlapped{tag}"]
    if not all(n in extras for n in names):
        return NAN
    pure, comp, ovl = (extras[n] for n in names)
    return sum(overlap_percent(pure[r], comp[r], ovl[r]) for r in (0, 1)) / 2


def progress_percent(extras: Extras) -> float:
    """How far the receiver's message moved while nobody called the library: 100 * (1 - the
    wait after the compute / the transfer time alone), clipped to 0-100; rank 1."""
    if "after" not in extras or "transfer" not in extras or not extras["transfer"][1] > 0:
        return NAN
    return 100 * min(1.0, max(0.0, 1 - extras["after"][1] / extras["transfer"][1]))


def progress_verdict(percent: float) -> str:
    """yes: the wait after the compute took under 20% of the transfer; no: over 80%."""
    return "yes" if percent >= 80 else "no" if percent <= 20 else "partial"


def loggp_gap(extras: Extras) -> float:
    """LogGP's gap g(s) of one observation: (PRTT(n,0,s) - PRTT(1,0,s)) / (n - 1), rank 0's
    round trips (Netgauge's loggp pattern; kernels/bench_loggp.c). NaN (the observation is
    dropped) where it is not positive: a burst cannot be quicker than one message."""
    if not all(n in extras for n in ("prtt1", "prttn", "prtt_n")) or extras["prtt_n"][0] < 2:
        return NAN
    gap = (extras["prttn"][0] - extras["prtt1"][0]) / (extras["prtt_n"][0] - 1)
    return gap if gap > 0 else NAN


def _loggp(per_rank: list[float], extras: Extras) -> float:
    return loggp_gap(extras)


def _cpu(per_rank: list[float], extras: Extras) -> float:
    return 100 * extras["cpu"][1] if "cpu" in extras else NAN


def _memory(per_rank: list[float], extras: Extras) -> float:
    if "peak" not in extras or "base_peak" not in extras:
        return NAN
    return max(p - b for p, b in zip(extras["peak"], extras["base_peak"], strict=True))


def _overlap(per_rank: list[float], extras: Extras) -> float:
    return overlap_of(extras)


def _progress(per_rank: list[float], extras: Extras) -> float:
    return progress_percent(extras)


@dataclass(frozen=True)
class Benchmark:
    name: str
    kind: Kind
    doc: str
    scale: float = 1.0  # applied to the time per iteration (pingpong: half the round trip)
    sized: bool = True
    directions: int = 1  # bytes counted per iteration = directions * size (* window)
    pair: bool = False  # only ranks 0 and 1 take part (point-to-point), so run at 2 ranks
    min_ranks: int = 1  # fewest ranks it can run at (bcast-ack: a root and a leaf)
    unit: str = "s"  # of an observation: s, % or B (overlap, progress: higher is better)
    sizes: tuple[int, ...] | None = None  # fixed sizes, whatever the suite says
    figure: Callable[[list[float], Extras], float] | None = None  # the value, if not time
    windowed: bool = False  # an iteration is a window of operations (bibw, put-bw-*)
    group: str = ""  # MPI beyond MPI-1 (kernels/ext.h): one-sided, nbc, vector...
    sums: bool = False  # adds up elements of the run's datatype (RunSettings.sums)

    def size_text(self, size: int) -> str:
        """A size as the tables show it: bytes, or an application kernel's problem size."""
        return f"{size:,}" if self.kind == Kind.APP else format_size(size)

    @property
    def min_np(self) -> int:
        return max(self.min_ranks, 2 if self.pair else 1)

    def observation(self, per_rank: list[float], extras: Extras | None = None) -> float:
        """One observation from every rank's seconds per iteration (and extra figures)."""
        if self.figure is not None:
            value = self.figure(per_rank, extras or {})
            return value if math.isfinite(value) else NAN
        return float(self.timed(np.array([per_rank], dtype=float))[0])

    def timed(self, seconds: np.ndarray) -> np.ndarray:
        """Each observation of a timed benchmark (a row of every rank's seconds per iteration,
        NaN for a rank without a figure) reduced over its ranks: the slowest rank that gave a
        figure (point-to-point: of ranks 0 and 1), scaled; NaN where no rank gave one or the
        result is not finite."""
        ranks = seconds[:, :2] if self.pair else seconds
        if ranks.shape[1] == 0:
            return np.full(len(ranks), NAN)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # an observation with no figure
            figures: np.ndarray = np.nanmax(ranks, axis=1) * self.scale
        figures[~np.isfinite(figures)] = NAN
        return figures

    def bandwidth(self, size: int, seconds: float, window: int) -> float | None:
        """Bytes per second over the reported time (an observation, not a loop iteration), for
        point-to-point benchmarks: pingpong moves size bytes in half a round trip, as NetPIPE."""
        if self.kind != Kind.P2P or seconds <= 0:
            return None
        per_iter = self.directions * size * (window if self.windowed else 1)
        return per_iter / seconds


def _nbc_overlap(per_rank: list[float], extras: Extras) -> float:
    """Overlap % of a non-blocking collective, the mean over every rank (OSU's)."""
    if not all(n in extras for n in ("pure", "compute", "overlapped")):
        return NAN
    shares = [overlap_percent(p, c, o) for p, c, o in
              zip(extras["pure"], extras["compute"], extras["overlapped"], strict=True)]
    return sum(shares) / len(shares)


# what a sum adds up: the run's datatype (run --datatype), each title naming it
SUM = "sum of size bytes of the run's datatype"
RMA_OPS = {"put": "MPI_Put", "get": "MPI_Get",
           "accumulate": f"MPI_Accumulate ({SUM})",
           "get_accumulate": f"MPI_Get_accumulate ({SUM})",
           "fetch_and_op": "MPI_Fetch_and_op (sum)",
           "compare_and_swap": "MPI_Compare_and_swap"}
RMA_SYNCS = {"fence": "between two MPI_Win_fence (one per iteration, both ranks)",
             "lock": "in an exclusive MPI_Win_lock/unlock epoch, the target passive",
             "lockall": "then MPI_Win_flush, inside one MPI_Win_lock_all (as IMB-RMA)",
             "pscw": "in a post-start-complete-wait epoch"}
NBC_OPS = {"ibarrier": "MPI_Ibarrier", "ibcast": "MPI_Ibcast from rank 0",
           "ireduce": f"MPI_Ireduce, {SUM}, to rank 0",
           "iallreduce": f"MPI_Iallreduce, {SUM}",
           "ialltoall": "MPI_Ialltoall, size bytes per pair of ranks",
           "iallgather": "MPI_Iallgather, size bytes per rank"}
VECTOR_OPS = {"allgatherv": "MPI_Allgatherv", "alltoallv": "MPI_Alltoallv",
              "gatherv": "MPI_Gatherv to rank 0", "scatterv": "MPI_Scatterv from rank 0"}
VECTOR_COUNTS = {"allgatherv": "rank i contributes c(i) bytes", "gatherv": "rank i sends c(i) "
                 "bytes", "scatterv": "rank i receives c(i) bytes",
                 "alltoallv": "rank i sends c(i) bytes to every rank"}
PERSISTENT_OPS = {"bcast": "MPI_Bcast_init from rank 0",
                  "reduce": f"MPI_Reduce_init, {SUM}, to rank 0",
                  "allreduce": f"MPI_Allreduce_init, {SUM}",
                  "alltoall": "MPI_Alltoall_init, size bytes per pair of ranks"}
WINDOW_VARIANTS = ("window from MPI_Win_allocate spanning the receive slots "
                   "(ARENA_RMA_WINDOW=create or dynamic: the others)")


def _beyond_mpi1() -> list[Benchmark]:
    """MPI beyond MPI-1's point-to-point and collectives (kernels/ext.h, one C file per group),
    in ext.h's order; a synchronisation mode or a layout is part of the name."""
    rma = [Benchmark(f"{op}-{sync}", Kind.P2P, f"{call} from rank 0 to rank 1 {how}, one per "
                     "epoch; time per epoch, the slower of the two ranks (one way: OSU's fence and "
                     f"pscw latencies halve a put there and back); {WINDOW_VARIANTS}", pair=True,
                     group="one-sided", sums=op in ("accumulate", "get_accumulate"),
                     sizes=(8,) if op in ("fetch_and_op", "compare_and_swap") else None)
           for op, call in RMA_OPS.items() for sync, how in RMA_SYNCS.items()]
    rma += [Benchmark(f"{op}-bw-{sync}", Kind.P2P, f"a window of {RMA_OPS[op]} from rank 0 "
                      f"to rank 1 {how}; time per window; {WINDOW_VARIANTS}", pair=True,
                      windowed=True, group="one-sided")
            for op in ("put", "get") for sync, how in RMA_SYNCS.items()]
    nbc = []
    for op, call in NBC_OPS.items():
        nbc += [
            Benchmark(op, Kind.COLL, f"{call} then MPI_Wait", sized=op != "ibarrier",
                      group="non-blocking", sums=op in ("ireduce", "iallreduce")),
            Benchmark(f"{op}-overlap", Kind.COST, f"share of {call} hidden by computation of its "
                      "own length, no MPI call in between (the library's own progress; OSU)",
                      sized=op != "ibarrier", unit="%", figure=_nbc_overlap, group="non-blocking",
                      sums=op in ("ireduce", "iallreduce")),
            Benchmark(f"{op}-overlap-test", Kind.COST, f"share of {call} hidden by computation of "
                      "its own length with MPI_Test after each sixteenth of it (progress driven "
                      "by the program; OSU's -t 16)", sized=op != "ibarrier", unit="%",
                      figure=_nbc_overlap, group="non-blocking",
                      sums=op in ("ireduce", "iallreduce")),
        ]
    vector = [Benchmark(f"{op}{skew}", Kind.COLL, f"{call} of MPI_BYTE, displacements packed; "
                        + VECTOR_COUNTS[op] + ("; skewed: c(i) = floor(2 size (i+1) / (np+1)), "
                                               "about size on average" if skew
                                               else "; even: c(i) = size"),
                        group="vector")
              for op, call in VECTOR_OPS.items() for skew in ("", "-skew")]
    neighbor = [
        Benchmark("neighbor_allgather", Kind.COLL, "MPI_Neighbor_allgather on a 2-D periodic "
                  "Cartesian grid, size bytes per rank", group="neighbourhood"),
        Benchmark("neighbor_alltoall", Kind.COLL, "MPI_Neighbor_alltoall on a 2-D periodic "
                  "Cartesian grid, size bytes per neighbour", group="neighbourhood"),
        Benchmark("halo", Kind.COLL, "the same exchange as neighbor_alltoall written by hand: "
                  "MPI_Isend/MPI_Irecv with the 4 neighbours, MPI_Waitall (IMB-HALO)",
                  group="neighbourhood"),
    ]
    persistent = [Benchmark(f"{op}_init", Kind.COLL, f"{call}, then MPI_Start and MPI_Wait per "
                            f"call (MPI 4.0; Open MPI 4.1.4: MPIX_{op.capitalize()}_init, Open "
                            f"MPI's extension), beside the blocking {op}; one request per buffer "
                            "slot", group="persistent", sums=op in ("reduce", "allreduce"))
                  for op, call in PERSISTENT_OPS.items()]
    dtype = [Benchmark(f"{b}-{t}", Kind.P2P if b == "pingpong" else Kind.COLL,
                       f"{'half round trip' if b == 'pingpong' else 'MPI_Bcast from rank 0'} "
                       f"of size bytes as {how}, beside {b} of a contiguous buffer",
                       scale=0.5 if b == "pingpong" else 1.0, pair=b == "pingpong",
                       group="datatypes")
             for b in ("pingpong", "bcast")
             for t, how in (("vector", "an MPI_Type_vector of 8-byte blocks, stride 16"),
                            ("indexed", "an MPI_Type_indexed of 8-byte blocks at irregular "
                             "offsets"))]
    io = [Benchmark(f"io-{rw}-{mode}{layout}", Kind.COLL, f"{call} of size bytes per rank "
                    f"{'to' if rw == 'write' else 'from'} a shared file on a local file system, "
                    + ("each rank's bytes in min(4 KiB, size) pieces interleaved with the "
                       "others' (a file view of an MPI_Type_vector)" if layout
                       else "each rank's bytes one contiguous block at rank*size")
                    + "; the same bytes each call (--off-cache: each buffer slot its own region "
                    "of the file), so the page cache's; no MPI_File_sync timed",
                    group="MPI-IO")
          for rw in ("write", "read") for layout in ("", "-strided") for mode, call in (
              ("coll", f"MPI_File_{rw}_at_all"), ("indep", f"MPI_File_{rw}_at"))]
    return [*rma, *nbc, *vector, *neighbor, *persistent, *dtype, *io]


_ALL = [
    Benchmark("wtime", Kind.TIMER, "cost of one call of the library's clock (MPI_Wtime)",
              sized=False),
    Benchmark("init", Kind.STARTUP, "launch to the end of MPI_Init, slowest rank", sized=False),
    Benchmark("finalize", Kind.STARTUP, "time inside MPI_Finalize, slowest rank", sized=False),
    Benchmark("pingpong", Kind.P2P, "half round trip between ranks 0 and 1", scale=0.5, pair=True),
    Benchmark("ping", Kind.P2P, "rank 0 streams sends, rank 1 receives; time per message",
              pair=True),
    Benchmark("sendrecv", Kind.P2P, "simultaneous exchange between ranks 0 and 1", directions=2,
              pair=True),
    Benchmark("bibw", Kind.P2P, "a window of non-blocking sends both ways; time per window",
              directions=2, pair=True, windowed=True),
    Benchmark("loggp", Kind.P2P, "LogGP's gap g(s) per message of a burst from rank 0 to rank 1, "
              "from Netgauge's round trips PRTT(1,0,s), PRTT(n,0,s), PRTT(n,d,s) and the "
              "overheads (extras; analysis/loggp.py)", pair=True, figure=_loggp),
    Benchmark("barrier", Kind.COLL, "MPI_Barrier", sized=False),
    Benchmark("bcast", Kind.COLL, "MPI_Bcast from rank 0"),
    Benchmark("bcast-ack", Kind.COLL, "MPI_Bcast then a 0-byte ack from one leaf to the root, "
              "timed at the root, slowest leaf (Nevin 1996)", min_ranks=2),
    Benchmark("scatter", Kind.COLL, "MPI_Scatter from rank 0, size bytes per rank"),
    Benchmark("gather", Kind.COLL, "MPI_Gather to rank 0, size bytes per rank"),
    Benchmark("reduce", Kind.COLL, f"MPI_Reduce, {SUM}, to rank 0", sums=True),
    Benchmark("allreduce", Kind.COLL, f"MPI_Allreduce, {SUM}", sums=True),
    Benchmark("allgather", Kind.COLL, "MPI_Allgather, size bytes per rank"),
    Benchmark("alltoall", Kind.COLL, "MPI_Alltoall, size bytes per pair of ranks"),
    Benchmark("reduce_scatter_block", Kind.COLL, f"MPI_Reduce_scatter_block, {SUM} (padded to a "
              "multiple of the ranks); each rank gets its block", sums=True),
    Benchmark("scan", Kind.COLL, f"MPI_Scan, {SUM}", sums=True),
    Benchmark("exscan", Kind.COLL, f"MPI_Exscan, {SUM}", sums=True),
    Benchmark("cpu", Kind.COST, "CPU % of rank 1 blocked in a receive for the hold time",
              sized=False, pair=True, unit="%", figure=_cpu),
    Benchmark("memory", Kind.COST, "peak resident memory during alltoall beyond a baseline "
              "process without the library, worst rank", unit="B", figure=_memory),
    Benchmark("overlap", Kind.COST, "share of a non-blocking exchange hidden by computation",
              unit="%", figure=_overlap),
    Benchmark("progress", Kind.COST, "share of a 4 MiB message moved while no rank calls the "
              "library", pair=True, unit="%", sizes=(4 << 20,),
              figure=_progress),
    Benchmark("threads", Kind.COST, "time per 8-byte message with N threads per rank "
              "(MPI_THREAD_MULTIPLE); size = N", pair=True, sizes=(1, 2, 4)),
    Benchmark("msgrate", Kind.COST, "time per message in windows of 8-byte non-blocking sends",
              pair=True, sizes=(8,)),
]
_ALL += [
    Benchmark("app-pi", Kind.APP, "pi by the trapezoid rule, summed by reduce; size = trapezoids",
              sizes=(100_000, 1_000_000, 10_000_000)),
    Benchmark("app-matvec", Kind.APP, "matrix-vector product by scatter and reduce; size = order",
              sizes=(200, 400, 800)),
    Benchmark("app-matmul", Kind.APP, "matrix product by scatter and reduce; size = order",
              sizes=(50, 100, 200)),
    Benchmark("app-rowmm", Kind.APP, "row-block matrix product, rank 0 sends and collects rows; "
              "size = order", sizes=(50, 100, 200)),
    Benchmark("app-primes", Kind.APP, "primes up to size by trial division, range split in blocks",
              sizes=(10_000, 100_000, 1_000_000)),
    Benchmark("app-md", Kind.APP, "Lennard-Jones dynamics, 100 steps, halo columns exchanged with "
              "neighbours; size = particles", sizes=(256, 1024, 4096)),
    Benchmark("app-stencil", Kind.APP, "2-D Jacobi stencil, 50 sweeps, halo rows exchanged; "
              "size = grid edge", sizes=(64, 256, 1024)),
]
_ALL += [Benchmark(g.mockup, Kind.COLL, f"mock-up of {g.collective}: {g.doc}",
                   sums="reduce" in g.mockup or "scan" in g.mockup) for g in GUIDELINES]
_ALL += _beyond_mpi1()
BENCHMARKS: dict[str, Benchmark] = {b.name: b for b in _ALL}
APP_CALLS = ("send", "recv", "sendrecv", "scatter", "reduce")  # extras t_send, t_recv...
APP_CHECKS = {"pi_error": "pi error", "checksum_error": "checksum rel. error",
              "primes": "primes", "energy_drift": "energy drift"}


def get(name: str) -> Benchmark:
    return BENCHMARKS[name]


def element_type(bench: str, settings: RunSettings) -> str | None:
    """MPI's name of what a benchmark's figures are made of, where that matters: the run's
    sums' datatype, the datatype benchmarks' blocks' (None: bytes, nothing to say)."""
    if BENCHMARKS[bench].sums:
        return settings.sums_name
    return settings.blocks if BENCHMARKS[bench].group == "datatypes" else None


def rounded_up(sizes: tuple[int, ...], datatype: Datatype) -> list[int]:
    """The sizes a sum of this type rounds up to whole elements (the core sums ceil(size /
    element) of them)."""
    return [s for s in sizes if s % datatype.size]
