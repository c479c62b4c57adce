"""`mpiarena releases --html`: one self-contained page, each changed cell's figure over the
releases with its interval and the step marked (as asv draws a benchmark over commits), the
words of the terminal above them."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

from .. import __version__
from ..analysis.bisection import Placed, ReleaseChange
from ..analysis.groups import measured
from ..analysis.stats import CONFIDENCE, center, center_ci
from ..analysis.verdicts import Judgement
from ..base import units
from ..base.records import Cell
from ..runner.releases import INDEX, BisectedSeries, replayed
from ..store import Store
from . import drawing
from .html import png_image, template_env
from .plots import FigureKind, Maker, Plot, _axes, _figure, _set_title, _time_axis
from .releases import ChangedRange, lines

TEMPLATE = "releases.html.j2"
LEVEL = f"{CONFIDENCE:.0%}"
CAPTION = (f"Each release's figure (median of launch medians) with its {LEVEL} interval, from "
           "the last step that measured it; the shaded band spans the two releases the change "
           "lies between (red: slower after it, green: faster). Releases measured in different "
           "steps are different runs: the verdicts come from the steps, not from this picture.")


@dataclass(frozen=True)
class ReleaseFigure:
    """One release's figure of a cell: the release, the figure, its interval."""

    member: int
    figure: float
    low: float
    high: float


def figures(series: BisectedSeries, key: Cell) -> list[ReleaseFigure]:
    """The cell's figure for every release some step measured, from the last such step."""
    last: dict[int, ReleaseFigure] = {}
    for data, variants in zip(series.runs, series.variant_of, strict=True):
        if data is None or key not in data.cells:
            continue
        for i, v in variants.items():
            group = data.cells[key].get(v)
            if measured(group):
                low, high = center_ci(group.nested)
                last[i] = ReleaseFigure(i, center(group.nested), low, high)
    return [last[i] for i in sorted(last)]


def change_plot(series: BisectedSeries, change: ReleaseChange, number: int) -> Plot | None:
    points = figures(series, change.key)
    if len(points) < 2:
        return None
    fig = _figure((6.4, 3.2))
    ax = _axes(fig)
    xs = [p.member for p in points]
    ys = [p.figure for p in points]
    ax.errorbar(xs, ys, yerr=[[p.figure - p.low for p in points],
                              [p.high - p.figure for p in points]],
                color="#1f77b4", marker="o", markersize=4, linewidth=1, capsize=3)
    slower = change.direction == Judgement.ABOVE
    ax.axvspan(change.before, change.after, color="#b42318" if slower else "#1d7a3a",
               alpha=0.12 if change.where == Placed.LOCATED else 0.06)
    ax.set_xticks(range(len(series.members)), [m.name for m in series.members],
                  rotation=30 if len(series.members) > 6 else 0)
    ax.set_xlabel("release")
    ax.set_ylabel("time")
    top = max((p.high for p in points if math.isfinite(p.high)), default=max(ys))
    ax.set_ylim(bottom=0, top=top * 1.1)
    _time_axis(ax)
    title = ChangedRange((change,)).label
    _set_title(ax, title, loc="left")
    return Plot(f"release-{number}", FigureKind.RELEASES, change.key.bench, change.key.np, title,
                CAPTION, fig)


@dataclass(frozen=True)
class ReleaseRow:
    release: str
    figure: str
    interval: str


def render_html(series: BisectedSeries, words: list[str], dpi: int = 100) -> str:
    """The page: the words, then per changed cell its figure over the releases and a table."""
    changes = series.bisection.changes
    drawable = [i for i, c in enumerate(changes) if len(figures(series, c.key)) >= 2]
    makers: list[Maker] = [partial(change_plot, series, changes[i], i) for i in drawable]
    images = dict(zip(drawable, drawing.drawn(makers, partial(png_image, dpi=dpi)),
                      strict=True))
    cells = []
    for number, c in enumerate(changes):
        image = images.get(number)
        rows = [ReleaseRow(series.members[p.member].name, units.seconds(p.figure),
                    f"{units.seconds(p.low)}-{units.seconds(p.high)}")
                for p in figures(series, c.key)]
        cells.append({"title": ChangedRange((c,)).label, "image": image, "rows": rows})
    return template_env().get_template(TEMPLATE).render(
        version=__version__, words=words, cells=cells, level=LEVEL,
        runs=[(r.run_id, r.run.started, r.run.command) for r in series.runs if r is not None])


def stored_page(store: Store, run_id: int) -> str | None:
    """`mpiarena report` of a stored bisection step: the page of its whole series, the
    bisection replayed from the stored steps; None for any other run."""
    series = replayed(store, run_id)
    if series is None:
        return None
    index = [m.release for m in series.members if m.origin == INDEX and m.release is not None]
    return render_html(series, lines(series, index))
