"""A study's published figures beside the measured ones, and its conclusions checked.

Measured figures are medians (or means, where the study reported means) of the cells of the
runs a reproduction made; see claims.py for how a conclusion is decided.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..analysis.claims import ClaimRow, check
from ..analysis.quantities import Measured, spread, value, variants_of
from ..results import RunData
from ..studies import Figure, Study

SCALE = {"s": 1.0, "ms": 1e3, "us": 1e6, "Mbit/s": 8e-6, "MB": 1e-6, "%": 1.0, "x": 1.0}


@dataclass
class FigureRow:
    what: str
    source: str
    library: str  # as the study ran it
    published: str
    measured: list[tuple[str, str]]  # (variant, value) of each measured stand-in
    note: str = ""


@dataclass
class Evaluation:
    study: Study
    figures: list[FigureRow] = field(default_factory=list)
    claims: list[ClaimRow] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(c.status == status for c in self.claims)


def _show(v: float | None, unit: str, sd: float | None = None) -> str:
    if v is None or not math.isfinite(v):
        return "-"
    text = f"{v:.3g}"
    if sd is not None:
        text += f" ± {sd:.2g}"
    return f"{text} {unit}" if unit != "x" else f"{text}x"


def _as_published(text: str, unit: str) -> str:
    """A published figure exactly as the study printed it, with its unit."""
    return f"{text} {unit}" if unit != "x" else f"{text}x"


def _figure_rows(fig: Figure, runs: dict[str, Measured], study: Study) -> list[FigureRow]:
    if fig.quantity is None:
        return [FigureRow(fig.what, fig.source, study.libraries[lib].name,
                          _as_published(pub.text, fig.unit),
                          [("", f"cannot be measured: {fig.why}")], fig.note)
                for lib, pub in fig.published.items()]
    data = runs.get(fig.quantity.experiment)
    scale = SCALE[fig.unit]
    ref_key = fig.relative_to or fig.minus
    ref = None
    if data is not None and ref_key:
        ref_variants = variants_of(data, study.libraries[ref_key].measured)
        ref = value(data, fig.quantity, ref_variants[0]) if ref_variants else None
    rows = []
    for lib, pub in fig.published.items():
        library = study.libraries[lib]
        if fig.relative_to:
            published = _show(pub.value / fig.published[fig.relative_to].value, "x")
        else:
            published = _as_published(pub.text, fig.unit)
        measured = []
        for v in variants_of(data, library.measured) if data is not None else []:
            assert data is not None  # the variants come from it
            x = value(data, fig.quantity, v)
            if x is None:
                measured.append((v, "not measured"))
            elif fig.relative_to:
                measured.append((v, _show(x / ref, "x") if ref else "-"))
            elif fig.minus:
                measured.append((v, _show((x - ref) * scale, fig.unit) if ref is not None
                                 else "-"))
            else:
                sd = (spread(data, fig.quantity, v)
                      if pub.spread is not None and isinstance(data, RunData) else None)
                measured.append((v, _show(x * scale, fig.unit,
                                          sd * scale if sd is not None else None)))
        if not measured:
            why = library.note or "no implementation standing for it was measured"
            measured.append(("", f"not measured: {why}"))
        name = f"{library.name} minus {study.libraries[fig.minus].name}" if fig.minus \
            else library.name
        rows.append(FigureRow(fig.what, fig.source, name, published, measured, fig.note))
    return rows


def evaluate(study: Study, runs: dict[str, Measured], skipped: dict[str, str]) -> Evaluation:
    out = Evaluation(study)
    for fig in study.figures:
        out.figures += _figure_rows(fig, runs, study)
    out.claims = [check(c, study, runs, skipped) for c in study.claims]
    return out
