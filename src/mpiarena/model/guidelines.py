"""Self-consistent performance guidelines (Träff, Gropp and Thakur, IEEE TPDS 2010; Hunold et
al., PGMPI): a library's collective should be no slower than a mock-up of it built from the same
library's other calls. Each mock-up is a benchmark of its own (kernels/bench_coll.c, `mockup_call`),
measured on the same buffers and sizes and timed by the same method as the collective it stands
in for; this is the one list of which mock-up stands in for which collective.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Guideline:
    collective: str  # the benchmark that should be no slower...
    parts: tuple[str, ...]  # ...than these calls of the same library, one after the other
    doc: str  # what the mock-up does, in the size convention of `collective`

    @property
    def mockup(self) -> str:
        """The mock-up's benchmark name, e.g. allreduce=reduce+bcast."""
        return f"{self.collective}={'+'.join(self.parts)}"

    @property
    def text(self) -> str:
        """MPI_Allreduce <= MPI_Reduce + MPI_Bcast."""
        return f"{_mpi(self.collective)} <= {' + '.join(map(_mpi, self.parts))}"


def _mpi(name: str) -> str:
    return "MPI_" + name.capitalize()


GUIDELINES = (
    Guideline("allreduce", ("reduce", "bcast"), "MPI_Reduce to rank 0, then MPI_Bcast of the "
              "result"),
    Guideline("allreduce", ("reduce_scatter_block", "allgather"), "MPI_Reduce_scatter_block, "
              "then MPI_Allgather of the blocks (the vector padded to a multiple of the ranks)"),
    Guideline("bcast", ("scatter", "allgather"), "MPI_Scatter of size/ranks bytes (rounded up), "
              "then MPI_Allgather of the pieces"),
    Guideline("allgather", ("gather", "bcast"), "MPI_Gather to rank 0, then MPI_Bcast of all "
              "ranks' blocks"),
    Guideline("allgather", ("alltoall",), "MPI_Alltoall of ranks copies of each rank's block"),
    Guideline("gather", ("allgather",), "MPI_Allgather"),
    Guideline("scatter", ("bcast",), "MPI_Bcast of the root's whole send buffer, each rank "
              "keeping its block"),
    Guideline("reduce", ("allreduce",), "MPI_Allreduce"),
    Guideline("reduce_scatter_block", ("reduce", "scatter"), "MPI_Reduce to rank 0, then "
              "MPI_Scatter of the blocks"),
    Guideline("scan", ("exscan", "reduce_local"), "MPI_Exscan, then MPI_Reduce_local with the "
              "rank's own vector (rank 0 copies it)"),
)
BY_MOCKUP = {g.mockup: g for g in GUIDELINES}
COLLECTIVES = tuple(dict.fromkeys(g.collective for g in GUIDELINES))
GROUP = "guidelines"  # --bench guidelines, or in a suite's list: every collective and mock-up
BENCHES = (*COLLECTIVES, *BY_MOCKUP)


def expand(names: tuple[str, ...]) -> tuple[str, ...]:
    """Benchmark names with `guidelines` replaced by its collectives and mock-ups."""
    out: list[str] = []
    for name in names:
        out += BENCHES if name == GROUP else [name]
    return tuple(dict.fromkeys(out))
