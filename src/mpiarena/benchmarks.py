"""What each benchmark of the measurement core means: who times it, and how many bytes it moves.

The core reports every rank's time per iteration of its loop; an observation is reduced
here: point-to-point benchmarks take the ranks of the pair, collectives the slowest rank.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["timer", "p2p", "coll", "startup"]


@dataclass(frozen=True)
class Benchmark:
    name: str
    kind: Kind
    doc: str
    scale: float = 1.0  # applied to the time per iteration (pingpong: half the round trip)
    sized: bool = True
    directions: int = 1  # bytes counted per iteration = directions * size (* window)

    @property
    def min_np(self) -> int:
        return 2 if self.kind == "p2p" else 1

    def observation(self, per_rank: list[float]) -> float:
        """One observation from every rank's seconds per iteration."""
        timed = per_rank[:2] if self.kind == "p2p" else per_rank
        return max(timed) * self.scale

    def bandwidth(self, size: int, seconds: float, window: int) -> float | None:
        """Bytes per second over the reported time (an observation, not a loop iteration), for
        point-to-point benchmarks: pingpong moves size bytes in half a round trip, as NetPIPE."""
        if self.kind != "p2p" or seconds <= 0:
            return None
        per_iter = self.directions * size * (window if self.name == "bibw" else 1)
        return per_iter / seconds


_ALL = [
    Benchmark("wtime", "timer", "cost of one call of the library's clock (MPI_Wtime)", sized=False),
    Benchmark("init", "startup", "launch to the end of MPI_Init, slowest rank", sized=False),
    Benchmark("finalize", "startup", "time inside MPI_Finalize, slowest rank", sized=False),
    Benchmark("pingpong", "p2p", "half round trip between ranks 0 and 1", scale=0.5),
    Benchmark("ping", "p2p", "rank 0 streams sends, rank 1 receives; time per message"),
    Benchmark("sendrecv", "p2p", "simultaneous exchange between ranks 0 and 1", directions=2),
    Benchmark("bibw", "p2p", "a window of non-blocking sends both ways; time per window",
              directions=2),
    Benchmark("barrier", "coll", "MPI_Barrier", sized=False),
    Benchmark("bcast", "coll", "MPI_Bcast from rank 0"),
    Benchmark("scatter", "coll", "MPI_Scatter from rank 0, size bytes per rank"),
    Benchmark("gather", "coll", "MPI_Gather to rank 0, size bytes per rank"),
    Benchmark("reduce", "coll", "MPI_Reduce of ceil(size/4) MPI_INT, sum, to rank 0"),
    Benchmark("allreduce", "coll", "MPI_Allreduce of ceil(size/4) MPI_INT, sum"),
    Benchmark("allgather", "coll", "MPI_Allgather, size bytes per rank"),
    Benchmark("alltoall", "coll", "MPI_Alltoall, size bytes per pair of ranks"),
]
BENCHMARKS: dict[str, Benchmark] = {b.name: b for b in _ALL}


def get(name: str) -> Benchmark:
    return BENCHMARKS[name]
