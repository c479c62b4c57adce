"""Collectives predicted from a library's point-to-point time, and which algorithm shape fits.

A shape is the textbook schedule of an algorithm (Thakur, Rabenseifner and Gropp 2005; Bruck
et al. 1997; van de Geijn's scatter+allgather): a sequence of rounds, each one or more messages
of a size derived from the collective's `size` (benchmarks.py: bytes per rank for scatter,
gather and allgather, per pair for alltoall, the buffer for bcast, the reductions and scans, the
whole vector of ceil(size/4) ints padded to the ranks for reduce_scatter_block) and the rank
count p. Given T(m), the seconds of one message of m bytes between two ranks (pingpong's half
round trip), a round costs k T(m): m its largest message, k the messages one rank sends or
receives one after another in it (the root of a linear algorithm: p - 1); the messages of
different ranks go in parallel. A round where every rank sends and receives at once (recursive
doubling, a ring step, a pairwise swap, Bruck) costs X(m), the time of a simultaneous exchange
from the sendrecv benchmark's model where the run measured it, else T(m). What the model leaves
out: the reductions' arithmetic, local copies, contention between the round's messages (on 2
cores, ranks beyond 2 share them), and overlap of a rank's sends. Rank counts that are not a
power of two take the extra rounds the usual algorithms do (the extra ranks fold in first and
get the result last).

A cell's best shape is the one closest to the measured figure in log ratio; its error is that
prediction over the measurement, less one. Where ranks outnumber cores the cell is marked
oversubscribed: a polling library then measures the scheduler rather than its messages.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..base.records import Cell
from ..store.results import RunData
from .fingerprint import tuned_of
from .library_tuning import usable
from .models import P2pModel, fit_models
from .stats import center

P2p = Callable[[float], float]  # seconds of one message of that many bytes
TARGET = 0.30  # the target: the best shape within 30% of the measurement
SAME = 1e-9  # relative difference below which two shapes predict the same time


@dataclass(frozen=True)
class MessageRound:
    """One round of a shape: `count` messages of `message` bytes, one after another, at the
    busiest rank (1: every rank sends or receives one message, all in parallel); `exchange`:
    each rank sends and receives at once (recursive doubling, a ring step, a pairwise swap)."""

    message: float
    count: int = 1
    exchange: bool = False


@dataclass(frozen=True)
class Shape:
    """An algorithm's schedule at one rank count and size."""

    name: str
    rounds: tuple[MessageRound, ...]

    def cost(self, t: P2p, x: P2p | None = None) -> float:
        """Seconds under T for one-way rounds and X (T if none) for exchanges."""
        return sum(r.count * (x if r.exchange and x is not None else t)(r.message)
                   for r in self.rounds)


@dataclass(frozen=True)
class ShapeCost:
    """A shape's predicted seconds and how many rounds it takes."""

    shape: str
    seconds: float
    rounds: int


@dataclass(frozen=True)
class CellFit:
    """One collective cell of one variant against every shape's prediction."""

    bench: str
    size: int
    np: int
    variant: str
    measured: float  # seconds, the median of the cell's launch medians
    predictions: tuple[ShapeCost, ...]
    best: str | None  # the shape closest in log ratio (None: no shape predicts a positive time)
    error: float  # best's prediction / measured - 1 (NaN without a best)
    alike: tuple[str, ...]  # other shapes predicting exactly best's time (the model cannot tell)
    oversubscribed: bool  # more ranks than cores
    forced: str | None  # the algorithm the variant forces, in the library's name (None: default)
    agrees: bool | None  # the forced algorithm's shape fits as well as the best (None: unknown)

    @property
    def within(self) -> bool:
        return abs(self.error) <= TARGET


@dataclass(frozen=True)
class Share:
    """At one rank count, how many cells' best shape lies within TARGET of the measurement."""

    np: int
    cells: int
    within: int
    oversubscribed: bool

    @property
    def share(self) -> float:
        return self.within / self.cells if self.cells else math.nan


def _levels(p: int) -> int:
    """ceil(log2 p): the rounds of a binomial tree or a dissemination."""
    return (p - 1).bit_length()


def _pow2(p: int) -> int:
    """The largest power of two not above p."""
    return 1 << (p.bit_length() - 1)


def _same(m: float, n: int) -> tuple[MessageRound, ...]:
    return (MessageRound(m),) * n


def _swaps(m: float, n: int) -> tuple[MessageRound, ...]:
    """n exchange rounds of m bytes each way."""
    return (MessageRound(m, exchange=True),) * n


def _binomial_blocks(block: float, p: int) -> tuple[MessageRound, ...]:
    """A binomial scatter of p blocks from the root (a gather is the same rounds reversed, at
    the same cost): in the round of distance 2^j the root hands a subtree of up to 2^j blocks."""
    return tuple(MessageRound(block * min(1 << j, p - (1 << j)))
                 for j in reversed(range(_levels(p))))


def _doubling_blocks(block: float, p: int) -> tuple[MessageRound, ...]:
    """Recursive doubling of one block per rank until every rank holds all p; the p - q ranks
    beyond the largest power of two q hand their block in first and get the whole last."""
    q = _pow2(p)
    held = block * p / q
    core = tuple(MessageRound(held * (1 << k), exchange=True) for k in range(_levels(q)))
    return core if q == p else (MessageRound(block), *core, MessageRound(block * p))


def _halving(n: float, q: int) -> tuple[MessageRound, ...]:
    """Recursive halving of an n-byte vector over q (a power of two) ranks: n/2, n/4 ... n/q."""
    return tuple(MessageRound(n / (2 << k), exchange=True) for k in range(_levels(q)))


def _fold(p: int, n: float, rounds: tuple[MessageRound, ...],
          back: bool) -> tuple[MessageRound, ...]:
    """An algorithm for a power of two run on p ranks: the extra ranks send their n bytes in
    first and, if `back`, get n bytes back last."""
    if _pow2(p) == p:
        return rounds
    return (MessageRound(n), *rounds, *((MessageRound(n),) if back else ()))


SEGMENTS = (8 << 10, 32 << 10, 128 << 10)  # segment sizes libraries pipeline large bcasts in


def _chains(n: float, p: int) -> list[Shape]:
    """A pipelined chain in k segments, k = 1, 2, 4 ... 256: p - 1 + k - 1 rounds of n/k bytes
    (predict keeps the cheapest k); and the chain in the fixed segments a library cuts a large
    message into (Open MPI's coll_tuned: 8-128 KiB), which no segment count chosen for speed
    explains: at 2 ranks each segment is one more message."""
    ks = [1 << i for i in range(9) if n >= 1 << i] or [1]
    fixed = [Shape(f"chain_{seg >> 10}KiB", _same(seg, p - 1 + math.ceil(n / seg) - 1))
             for seg in SEGMENTS if n > seg]
    return [*(Shape("chain", _same(n / k, p - 1 + k - 1)) for k in ks), *fixed]


def _bcast(n: float, p: int) -> list[Shape]:
    piece = n / p
    return [Shape("binomial", _same(n, _levels(p))),
            Shape("linear", (MessageRound(n, p - 1),)),
            Shape("scatter_rd_allgather",
                  _binomial_blocks(piece, p) + _doubling_blocks(piece, p)),
            Shape("scatter_ring_allgather", _binomial_blocks(piece, p) + _swaps(piece, p - 1)),
            *_chains(n, p)]


def _reduce(n: float, p: int) -> list[Shape]:
    q = _pow2(p)
    rs = _halving(n, q)
    return [Shape("binomial", _same(n, _levels(p))),
            Shape("linear", (MessageRound(n, p - 1),)),
            Shape("rabenseifner", _fold(p, n, rs + tuple(reversed(rs)), back=False))]


def _allreduce(n: float, p: int) -> list[Shape]:
    q = _pow2(p)
    rs = _halving(n, q)
    return [Shape("recursive_doubling", _fold(p, n, _swaps(n, _levels(q)), back=True)),
            Shape("rabenseifner", _fold(p, n, rs + tuple(reversed(rs)), back=True)),
            Shape("ring", _swaps(n / p, 2 * (p - 1))),
            Shape("reduce_bcast", _same(n, 2 * _levels(p)))]


def _allgather(n: float, p: int) -> list[Shape]:
    return [Shape("ring", _swaps(n, p - 1)),
            Shape("recursive_doubling", _doubling_blocks(n, p)),
            Shape("bruck", tuple(MessageRound(n * min(1 << k, p - (1 << k)), exchange=True)
                                 for k in range(_levels(p))))]


def _alltoall(n: float, p: int) -> list[Shape]:
    return [Shape("pairwise", _swaps(n, p - 1)),
            Shape("bruck", tuple(MessageRound(n * sum(i >> k & 1 for i in range(p)), exchange=True)
                                 for k in range(_levels(p)))),
            Shape("linear", (MessageRound(n, p - 1, exchange=True),))]


def _rooted(n: float, p: int) -> list[Shape]:
    """Scatter and gather: n bytes per rank."""
    return [Shape("binomial", _binomial_blocks(n, p)), Shape("linear", (MessageRound(n, p - 1),))]


def _barrier(n: float, p: int) -> list[Shape]:
    return [Shape("dissemination", _swaps(0, _levels(p))),
            Shape("tree", _same(0, 2 * _levels(p)))]


def _reduce_scatter(n: float, p: int) -> list[Shape]:
    """n is the whole vector, padded to p blocks."""
    block = n / p
    return [Shape("recursive_halving", _fold(p, n, _halving(n, _pow2(p)), back=False)
                  + ((MessageRound(block),) if _pow2(p) != p else ())),
            Shape("pairwise", _swaps(block, p - 1))]


def _scan(n: float, p: int) -> list[Shape]:
    return [Shape("recursive_doubling", _swaps(n, _levels(p))),
            Shape("linear", _same(n, p - 1))]


def _ints(size: int) -> int:
    return (size + 3) // 4 * 4


def _padded(size: int, p: int) -> int:
    """reduce_scatter_block's whole vector: ceil(size/4) ints padded to a multiple of p."""
    return -(-((size + 3) // 4) // p) * p * 4


# collective -> (its shapes from (message bytes, ranks), its message bytes from (size, ranks))
SHAPES: dict[str, tuple[Callable[[float, int], list[Shape]], Callable[[int, int], int]]] = {
    "bcast": (_bcast, lambda s, p: s),
    "reduce": (_reduce, lambda s, p: _ints(s)),
    "allreduce": (_allreduce, lambda s, p: _ints(s)),
    "allgather": (_allgather, lambda s, p: s),
    "alltoall": (_alltoall, lambda s, p: s),
    "gather": (_rooted, lambda s, p: s),
    "scatter": (_rooted, lambda s, p: s),
    "barrier": (_barrier, lambda s, p: 0),
    "reduce_scatter_block": (_reduce_scatter, _padded),
    "scan": (_scan, lambda s, p: _ints(s)),
    "exscan": (_scan, lambda s, p: _ints(s)),
}

# a library's algorithm name (MPICH's MPIR_CVAR_<COLL>_INTRA_ALGORITHM, Open MPI's coll_tuned)
# -> the shape it follows, where that is clear (Open MPI's bcast chain fans out 4 ways, the
# nb/smp/neighbor/two_proc algorithms follow none of these: unknown)
ALGORITHMS: dict[str, dict[str, str]] = {
    "bcast": {"binomial": "binomial", "basic_linear": "linear", "pipeline": "chain",
              "scatter_recursive_doubling_allgather": "scatter_rd_allgather",
              "scatter_allgather": "scatter_rd_allgather",
              "scatter_ring_allgather": "scatter_ring_allgather",
              "scatter_allgather_ring": "scatter_ring_allgather"},
    "reduce": {"binomial": "binomial", "linear": "linear",
               "reduce_scatter_gather": "rabenseifner", "rabenseifner": "rabenseifner"},
    "allreduce": {"recursive_doubling": "recursive_doubling", "ring": "ring",
                  "segmented_ring": "ring", "reduce_scatter_allgather": "rabenseifner",
                  "rabenseifner": "rabenseifner", "nonoverlapping": "reduce_bcast"},
    "allgather": {"ring": "ring", "recursive_doubling": "recursive_doubling",
                  "brucks": "bruck", "bruck": "bruck"},
    "alltoall": {"pairwise": "pairwise", "pairwise_sendrecv_replace": "pairwise",
                 "brucks": "bruck", "modified_bruck": "bruck", "linear": "linear",
                 "linear_sync": "linear", "scattered": "linear"},
}


def shapes(coll: str, p: int, size: int) -> list[Shape]:
    """Every shape of a collective at p ranks and the benchmark's size ([] for an unknown
    collective or a single rank, which sends nothing)."""
    if coll not in SHAPES or p < 2:
        return []
    make, message = SHAPES[coll]
    return make(float(message(size, p)), p)


def predict(coll: str, p: int, size: int, t: P2p, x: P2p | None = None) -> list[ShapeCost]:
    """Each shape's predicted seconds under T (and X for exchange rounds, T if None), in the
    order shapes() lists them (a shape with several schedules, the chain's segment counts, at
    its cheapest)."""
    best: dict[str, ShapeCost] = {}
    for s in shapes(coll, p, size):
        cost = ShapeCost(s.name, s.cost(t, x), len(s.rounds))
        if s.name not in best or cost.seconds < best[s.name].seconds:
            best[s.name] = cost
    return list(best.values())


def _distance(predicted: float, measured: float) -> float:
    return abs(math.log(predicted / measured)) if predicted > 0 else math.inf


@dataclass(frozen=True)
class Against:
    """What a variant's cells are predicted from: its point-to-point time, its simultaneous
    exchange's (None: the point-to-point time's), the machine's cores."""

    time: P2p
    exchange: P2p | None
    cores: int


def fit(key: Cell, variant: str, measured: float, forced: str | None,
        against: Against) -> CellFit:
    """One cell's measured seconds against every shape's prediction."""
    bench, size, np_ = key
    got = predict(bench, np_, size, against.time, against.exchange)
    ranked = sorted(got, key=lambda c: _distance(c.seconds, measured))
    best = ranked[0] if ranked and ranked[0].seconds > 0 else None
    alike = tuple(c.shape for c in got if best is not None and c is not best
                  and abs(c.seconds - best.seconds) <= SAME * best.seconds)
    shape = ALGORITHMS.get(bench, {}).get(forced or "")
    agrees = None
    if shape is not None and best is not None:
        mine = next(c for c in got if c.shape == shape)
        agrees = _distance(mine.seconds, measured) <= _distance(best.seconds, measured) + SAME
    return CellFit(bench, size, np_, variant, measured, tuple(got),
                   best.shape if best else None,
                   best.seconds / measured - 1 if best else math.nan, alike,
                   np_ > against.cores, forced, agrees)


def cell_fits(data: RunData, p2p: Mapping[str, P2p], cores: int,
              exchange: Mapping[str, P2p] | None = None) -> list[CellFit]:
    """Every collective cell (bench, np, size) of every variant with a point-to-point model
    that measured it; a tuning run's forced-algorithm variant takes its library's model.
    `exchange`: each variant's time of a simultaneous exchange, for exchange rounds."""
    swaps = exchange or {}
    tuned = tuned_of(data)
    out = []
    for key in sorted(data.cells):
        if key.bench not in SHAPES or key.np < 2:
            continue
        for variant, group in sorted(data.cells[key].items()):
            forced = tuned.get(variant)
            t = p2p.get(variant) or (p2p.get(forced.impl) if forced else None)
            x = swaps.get(variant) or (swaps.get(forced.impl) if forced else None)
            measured = center(group.nested) if usable(group) else math.nan
            if t is None or not measured > 0:
                continue
            out.append(fit(key, variant, measured, forced.algorithm if forced else None,
                           Against(t, x, cores)))
    return out


def run_predictions(data: RunData, models: dict[str, P2pModel] | None = None) -> list[CellFit]:
    """Every collective cell of the run against its variant's fitted pingpong model
    (analysis/models.py; `models` when the caller fitted them already), exchange rounds against
    its sendrecv model where the run measured sendrecv (else its pingpong model), the machine's
    cores deciding what is oversubscribed."""
    models = fit_models(data) if models is None else models
    if not models:
        return []
    return cell_fits(data, {v: m.time for v, m in models.items()},
                     int(data.machine.get("cores", 1)),
                     {v: m.time for v, m in fit_models(data, "sendrecv", 2).items()})


def summary(fits: Sequence[CellFit]) -> list[Share]:
    """Per rank count, the cells whose best shape lies within TARGET of the measurement."""
    out = []
    for np_ in sorted({f.np for f in fits}):
        mine = [f for f in fits if f.np == np_]
        out.append(Share(np_, len(mine), sum(f.within for f in mine),
                         any(f.oversubscribed for f in mine)))
    return out
