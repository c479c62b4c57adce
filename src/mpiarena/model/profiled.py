"""What the per-call profiler measures: calls and seconds per MPI function, per rank."""

from __future__ import annotations

from dataclasses import dataclass

POINT_TO_POINT = ("MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Irecv", "MPI_Wait", "MPI_Waitall",
                  "MPI_Sendrecv", "MPI_Probe", "MPI_Iprobe")
COLLECTIVES = ("MPI_Barrier", "MPI_Bcast", "MPI_Scatter", "MPI_Gather", "MPI_Reduce",
               "MPI_Allreduce", "MPI_Allgather", "MPI_Alltoall")
ORDER = ("MPI_Init", "MPI_Init_thread", *POINT_TO_POINT, *COLLECTIVES, "MPI_Comm_split",
         "MPI_Comm_free", "MPI_Finalize")
TOTALS = ("point-to-point total", "collectives total")


@dataclass(frozen=True)
class Calls:
    calls: int
    seconds: float


Profile = dict[int, dict[str, Calls]]  # rank -> function -> its calls and time


@dataclass(frozen=True)
class Profiled:
    """The implementation a profiled variant ran, and its family."""

    impl_id: str
    family: str


@dataclass
class ProfileRun:
    """Profiles of one program side by side: seconds per function summed over ranks (and the
    point-to-point and collective totals), per variant."""

    implementations: list[Profiled]  # each variant's implementation
    variants: list[str]
    seconds: dict[str, dict[str, float]]
