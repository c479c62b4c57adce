"""The environment the measurement core reads: the contract between Python and kernels/*.c,
defined once. A test checks that every ARENA_* name the C sources read is here and nothing
else is, so neither side can rename one alone."""

from __future__ import annotations

import re

T0 = "ARENA_T0"  # the launch's start (seconds since the epoch), shared by its ranks
NP = "ARENA_NP"  # ranks of a forking family's job (PVM, raw TCP): rank 0 starts the others
BIND = "ARENA_BIND"  # core: rank r binds itself to the r-th allowed CPU; none: unbound
THREAD_LEVEL = "ARENA_THREAD_LEVEL"  # single|funneled|serialized|multiple: MPI_Init_thread
PVM_ROUTE = "ARENA_PVM_ROUTE"  # direct: PvmRouteDirect task-to-task links
PVM_ENCODING = "ARENA_PVM_ENCODING"  # xdr|raw|inplace packing
PVM_HOSTS = "ARENA_PVM_HOSTS"  # task r is spawned on the r-th host of this list
TCP_BIND = "ARENA_TCP_BIND"  # the address rank 0 listens on (a cluster node's)
TCP_PEER = "ARENA_TCP_PEER"  # the node rank 1 is started on, through TCP_RSH
TCP_RSH = "ARENA_TCP_RSH"  # the remote shell that reaches TCP_PEER
TCP_CONNECT = "ARENA_TCP_CONNECT"  # set by rank 0 for rank 1: HOST:PORT to connect to
PROFILE_DIR = "ARENA_PROFILE_DIR"  # where the per-call profiler writes rank-R.tsv
# allocate|create|dynamic: the one-sided benchmarks' window (MPI_Win_allocate, MPI_Win_create
# over the core's receive buffers, MPI_Win_create_dynamic with them attached)
RMA_WINDOW = "ARENA_RMA_WINDOW"
IO_DIR = "ARENA_IO_DIR"  # where the MPI-IO benchmarks make their files: the run's, rank 0's
# int|char|float|double: the element type of every sum (reduce, allreduce, scan, ireduce,
# accumulate...) and of the datatype benchmarks' blocks; unset: int sums, MPI_BYTE blocks
DATATYPE = "ARENA_DATATYPE"
# test-only: faults and effects planted so tests can see them found
FAULT = "ARENA_FAULT"  # crash:BENCH kills the last rank at BENCH; wrong answers for checkers
PLANT_SLOW = "ARENA_PLANT_SLOW"  # F: a random half of the launches read F times slower
PLANT_SLOW_BENCH = "ARENA_PLANT_SLOW_BENCH"  # BENCH:SIZE:F: that cell reads F times slower
LATE_RANK = "ARENA_LATE_RANK"  # R: rank R reaches every 5th window half a window late
PLANT_COLD = "ARENA_PLANT_COLD"  # F: every cell's first step (its warm-up) reads F times slower

SETTINGS = (T0, NP, BIND, THREAD_LEVEL, PVM_ROUTE, PVM_ENCODING, PVM_HOSTS, TCP_BIND, TCP_PEER,
            TCP_RSH, TCP_CONNECT, PROFILE_DIR, RMA_WINDOW, IO_DIR, DATATYPE, FAULT, PLANT_SLOW,
            PLANT_SLOW_BENCH, LATE_RANK, PLANT_COLD)


def unescape(text: str) -> str:
    """A field of the core's output as driver.c's escape_put wrote it: \\n a newline, \\\\ a
    backslash (one pass: a backslash followed by n is not a newline)."""
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), text)
