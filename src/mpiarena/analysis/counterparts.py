"""MPI beyond MPI-1 against its counterpart in the same library and cell: a persistent
collective against the blocking call, a non-blocking one against the blocking one, a derived
datatype against a contiguous buffer of the same payload, a vector collective against the even
one, a neighbourhood collective against the same exchange written by hand, collective MPI-IO
against independent. Decided by the verdicts' rule, every comparison of the run one corrected
family."""

from __future__ import annotations

from dataclasses import dataclass

from ..base.records import Cell
from ..store.results import RunData
from .comparison import Compared, Comparison
from .groups import beside, figure, launch_ids
from .stats import ALPHA, THRESHOLD, Pair, judge
from .verdicts import SPEED_OF_B, Speed


@dataclass(frozen=True)
class Counterpart:
    bench: str
    against: str  # the benchmark of the same library, size and ranks it is held against
    question: str  # what the comparison answers


def _pairs() -> tuple[Counterpart, ...]:
    out = [Counterpart(f"{op}_init", op, "does a persistent request save time?")
           for op in ("bcast", "reduce", "allreduce", "alltoall")]
    out += [Counterpart(f"i{op}", op, "what does the non-blocking call cost when waited for "
                        "at once?")
            for op in ("barrier", "bcast", "reduce", "allreduce", "alltoall", "allgather")]
    out += [Counterpart(f"{b}-{t}", b, "what does the datatype engine cost?")
            for b in ("pingpong", "bcast") for t in ("vector", "indexed")]
    out += [Counterpart(f"{op}v{skew}", op, "what do counts and displacements cost?")
            for op in ("allgather", "alltoall", "gather", "scatter") for skew in ("", "-skew")]
    out.append(Counterpart("neighbor_alltoall", "halo", "does the library's neighbourhood "
                           "collective beat the exchange written by hand?"))
    out += [Counterpart(f"io-{rw}-coll{layout}", f"io-{rw}-indep{layout}", "does collective "
                        "I/O beat independent I/O?")
            for rw in ("write", "read") for layout in ("", "-strided")]
    return tuple(out)


COUNTERPARTS = _pairs()


@dataclass(frozen=True)
class CounterpartCheck(Compared):
    """One benchmark against its counterpart for one variant in one cell."""

    counterpart: Counterpart
    variant: str
    key: Cell  # the benchmark's cell; the counterpart's is (counterpart.against, size, np)
    figure: float  # the median of launch medians
    against: float
    comparison: Comparison  # figure over against: below 1, the benchmark ran faster

    @property
    def outcome(self) -> Speed:
        """The benchmark's speed against its counterpart."""
        return SPEED_OF_B[self.comparison.outcome]


def counterpart_checks(data: RunData, alpha: float = ALPHA,
                       threshold: float = THRESHOLD) -> list[CounterpartCheck]:
    """Every benchmark with a counterpart, in every cell and variant that measured both."""
    found = [(c, *pair) for c in COUNTERPARTS for pair in beside(data, c.bench, c.against)]
    judged = judge([Pair(theirs.nested, mine.nested, (launch_ids(theirs), launch_ids(mine)))
                    for *_, mine, theirs in found], alpha, threshold)
    return [CounterpartCheck(c, variant, key, figure(mine), figure(theirs), j)
            for (c, variant, key, mine, theirs), j in zip(found, judged, strict=True)]
