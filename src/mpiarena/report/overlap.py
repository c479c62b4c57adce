"""The section "non-blocking collectives: what computation hides": a table of overlap % per
collective and size, each variant's figure without and with MPI_Test, and per variant where it
progresses in the background. analysis.overlap decides; this module only words it."""

from __future__ import annotations

from dataclasses import dataclass

from ..analysis.overlap import NO, YES, Hidden, OverlapRow, overlap_rows
from ..analysis.stats import CONFIDENCE
from ..analysis.verdicts import Progress
from ..base.sizes import format_size
from ..store.results import RunData

LEAD = (f"The share of a non-blocking collective that a computation of its own length hides "
        f"(OSU's overlap), as 'without MPI_Test / with MPI_Test through the computation': "
        f"without, only the library's own progress can hide it. Each is the median of launch "
        f"medians; 'yes' when the whole {CONFIDENCE:.0%} interval lies at or above {YES:.0f}%, "
        f"'no' at or below {NO:.0f}%, 'partial' within, else undecided.")


@dataclass(frozen=True)
class OverlapText:
    lead: str
    header: list[str]
    rows: list[list[str]]
    background: list[str]  # per variant: where it progresses without MPI_Test


def hidden_text(h: Hidden | None) -> str:
    return "-" if h is None else f"{h.summary.median:.0f}%"


def interval_text(h: Hidden) -> str:
    return f"{h.summary.median:.0f}% ({h.summary.ci_low:.0f}-{h.summary.ci_high:.0f})"


def _cell(rows: list[OverlapRow]) -> str:
    return f"{rows[0].collective} {format_size(rows[0].size)}, {rows[0].np} ranks"


def _background(variant: str, rows: list[OverlapRow]) -> str:
    mine = [r for r in rows if r.variant == variant and r.background]
    said = {w: [f"{_cell([r])} {interval_text(r.background)}" for r in mine
                if r.background and r.background.word == w]
            for w in (Progress.YES, Progress.PARTIAL, Progress.UNDECIDED)}
    no = sum(1 for r in mine if r.background and r.background.word == Progress.NO)
    if not any(said.values()):
        return f"{variant}: progresses none in the background (no at every cell measured)"
    parts = [f"{w} at {'; '.join(cells)}" for w, cells in said.items() if cells]
    return (f"{variant}: in the background, " + "; ".join(parts)
            + (f"; no at the {no} other cells" if no else ""))


def overlap_text(data: RunData) -> OverlapText | None:
    """The section, or None when the run measured no overlap of a non-blocking collective."""
    rows = overlap_rows(data)
    if not rows:
        return None
    variants = [v for v in data.variants if any(r.variant == v for r in rows)]
    keyed = {(r.collective, r.size, r.np, r.variant): r for r in rows}
    cells = list(dict.fromkeys((r.collective, r.size, r.np) for r in rows))
    table = []
    for coll, size, np_ in cells:
        line = [coll, format_size(size), str(np_)]
        for v in variants:
            r = keyed.get((coll, size, np_, v))
            line.append("-" if r is None else
                        f"{hidden_text(r.background)} / {hidden_text(r.tested)}")
        table.append(line)
    return OverlapText(LEAD, ["collective", "size", "ranks", *variants], table,
                       [_background(v, rows) for v in variants])
