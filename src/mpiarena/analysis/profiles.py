"""A profile summed over ranks: calls and seconds per MPI function and per group of them."""

from __future__ import annotations

from dataclasses import dataclass

from ..model.profiled import COLLECTIVES, ORDER, POINT_TO_POINT, TOTALS, Profile


@dataclass(frozen=True)
class Totals:
    calls: int  # summed over ranks
    seconds: float  # summed over ranks
    slowest: float  # the slowest rank's seconds


def totals(prof: Profile) -> dict[str, Totals]:
    """function -> its totals over ranks; plus the rows 'point-to-point total' and
    'collectives total'."""
    names = sorted({n for per in prof.values() for n in per},
                   key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))
    rows: dict[str, Totals] = {}
    for name in names:
        cells = [per[name] for per in prof.values() if name in per]
        rows[name] = Totals(sum(c.calls for c in cells), sum(c.seconds for c in cells),
                            max(c.seconds for c in cells))
    for label, group in zip(TOTALS, (POINT_TO_POINT, COLLECTIVES), strict=True):
        per_rank = [sum(per[n].seconds for n in group if n in per) for per in prof.values()]
        rows[label] = Totals(sum(rows[n].calls for n in group if n in rows), sum(per_rank),
                             max(per_rank, default=0.0))
    return rows
