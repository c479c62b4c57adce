"""What `mpiarena profile` prints: calls and time per MPI function, implementations side by
side."""

from __future__ import annotations

from rich.table import Table

from ..analysis.profiles import Totals, totals
from ..base import units
from ..model.profiled import ORDER, TOTALS, Profile


def table(results: dict[str, Profile], np: int) -> tuple[str, Table]:
    """A title and one row per MPI function, per implementation its calls (all ranks) and time
    (summed over ranks, and the slowest rank's), then the point-to-point and collective totals."""
    per_impl = {impl_id: totals(prof) for impl_id, prof in results.items()}
    names = [n for n in ORDER if any(n in rows for rows in per_impl.values())]
    names += sorted({n for rows in per_impl.values() for n in rows} - set(names) - set(TOTALS))
    out = Table()
    out.add_column("function", no_wrap=True)
    for impl_id in results:
        out.add_column(f"{impl_id} calls", justify="right")
        out.add_column(f"{impl_id} time", justify="right")
    for name in [*names, *TOTALS]:
        cells = []
        for rows in per_impl.values():
            row = rows.get(name, Totals(0, 0.0, 0.0))
            cells += [str(row.calls), f"{units.seconds(row.seconds)}  "
                      f"({units.seconds(row.slowest)})" if row.calls else "-"]
        out.add_row(f"[bold]{name}[/]" if name in TOTALS else name, *cells,
                    end_section=name == names[-1])
    return (f"time in MPI calls, {np} ranks (calls: all ranks; time: sum over ranks, slowest rank)",
            out)
