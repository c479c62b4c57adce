"""A study's published figures beside the measured ones, and its conclusions checked.

Measured figures are medians (or means, where the study reported means) of the cells of the
runs a reproduction made; see claims.py for how a conclusion is decided. The numbers only:
report/reproduction_text.py puts them into words.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..store.results import RunData
from ..studies import PublishedFigure, Study
from .claims import ClaimRow, check
from .quantities import Measured, spread, value, variants_of
from .verdicts import ClaimResult

SCALE = {"s": 1.0, "ms": 1e3, "us": 1e6, "Mbit/s": 8e-6, "MB": 1e-6, "%": 1.0, "x": 1.0}


@dataclass(frozen=True)
class StandIn:
    """What one measured stand-in for the study's library gave: a value in the row's unit,
    or why there is none."""

    variant: str  # "" when no variant stands for the library
    value: float | None = None
    sd: float | None = None  # the observations' standard deviation, where the study gave one
    missing: str = ""


@dataclass(frozen=True)
class FigureRow:
    what: str
    source: str
    library: str  # as the study ran it
    unit: str  # of the measured values: "x" for a figure relative to another library's
    published_text: str  # the digits as the study printed them
    published_ratio: float | None  # the published figure over its reference, if relative
    measured: list[StandIn]
    note: str = ""


@dataclass
class Evaluation:
    study: Study
    figures: list[FigureRow] = field(default_factory=list)
    claims: list[ClaimRow] = field(default_factory=list)

    def count(self, result: ClaimResult) -> int:
        return sum(c.result == result for c in self.claims)


def _stand_in(data: Measured, fig: PublishedFigure, variant: str, ref: float | None,
              with_sd: bool) -> StandIn:
    assert fig.quantity is not None
    scale = SCALE[fig.unit]
    x = value(data, fig.quantity, variant)
    if x is None:
        return StandIn(variant, missing="not measured")
    if fig.relative_to:
        return StandIn(variant, x / ref if ref else None)
    if fig.minus:
        return StandIn(variant, (x - ref) * scale if ref is not None else None)
    sd = spread(data, fig.quantity, variant) if with_sd and isinstance(data, RunData) else None
    return StandIn(variant, x * scale, sd * scale if sd is not None else None)


def _figure_rows(fig: PublishedFigure, runs: dict[str, Measured], study: Study) -> list[FigureRow]:
    unit = "x" if fig.relative_to else fig.unit
    if fig.quantity is None:
        return [FigureRow(fig.what, fig.source, study.libraries[impl].name, fig.unit, pub.text,
                          None,
                          [StandIn("", missing=f"cannot be measured: {fig.why}")], fig.note)
                for impl, pub in fig.published.items()]
    data = runs.get(fig.quantity.experiment)
    ref_key = fig.relative_to or fig.minus
    ref = None
    if data is not None and ref_key:
        ref_variants = variants_of(data, study.libraries[ref_key].measured)
        ref = value(data, fig.quantity, ref_variants[0]) if ref_variants else None
    rows = []
    for impl, pub in fig.published.items():
        library = study.libraries[impl]
        ratio = pub.value / fig.published[fig.relative_to].value if fig.relative_to else None
        measured = [_stand_in(data, fig, v, ref, pub.spread is not None)
                    for v in variants_of(data, library.measured)] if data is not None else []
        if not measured:
            why = library.note or "no implementation standing for it was measured"
            measured.append(StandIn("", missing=f"not measured: {why}"))
        name = f"{library.name} minus {study.libraries[fig.minus].name}" if fig.minus \
            else library.name
        rows.append(FigureRow(fig.what, fig.source, name, unit, pub.text, ratio, measured,
                              fig.note))
    return rows


def evaluate(study: Study, runs: dict[str, Measured], skipped: dict[str, str]) -> Evaluation:
    out = Evaluation(study)
    for fig in study.figures:
        out.figures += _figure_rows(fig, runs, study)
    out.claims = [check(c, study, runs, skipped) for c in study.claims]
    return out
