"""Figures of a program run (matplotlib, Agg): each launch's wall time in launch order per library,
and the seconds per rank in each MPI function of the profiled launches, libraries side by side."""

from __future__ import annotations

import numpy as np

from ..analysis.program import ProgramResult, function_seconds
from ..base.status import LaunchStatus
from ..model.programs import LaunchKind
from .plots import FigureKind, Maker, Plot, Styles, _axes, _figure, _legend, _set_title, _time_axis

TOP_FUNCTIONS = 10  # the functions with most seconds in any library; the rest are left out
WALLS_CAPTION = ("Each launch's wall time (launch to exit), x the launch's place in the run's "
                 "interleaved order: filled markers are the timed launches the statistics use, "
                 "hollow ones the warm-up launches; profiled and failed launches are left out.")
CALLS_CAPTION = ("Seconds per rank (the mean over ranks) in each MPI function, from the one "
                 "profiled launch per library; the {n} functions with the most time in any "
                 "library.")


def walls_plot(r: ProgramResult) -> Plot | None:
    """Wall time per launch in run order, a line per library; warm-ups hollow."""
    shown = [(i, x) for i, x in enumerate(r.launches, 1)
             if x.status == LaunchStatus.OK and x.kind in (LaunchKind.TIMED, LaunchKind.WARMUP)]
    if not shown:
        return None
    styles = Styles(r.variants)
    fig = _figure()
    ax = _axes(fig)
    for v in r.variants:
        st = styles(v)
        timed = np.array([(i, x.wall) for i, x in shown
                          if x.variant == v and x.kind == LaunchKind.TIMED],
                         dtype=float).reshape(-1, 2)
        warm = np.array([(i, x.wall) for i, x in shown
                         if x.variant == v and x.kind == LaunchKind.WARMUP],
                        dtype=float).reshape(-1, 2)
        ax.plot(timed[:, 0], timed[:, 1], color=st["color"], marker=st["marker"],
                linestyle=st["linestyle"], markersize=4, linewidth=1, label=v)
        if len(warm):
            ax.plot(warm[:, 0], warm[:, 1], color=st["color"], marker=st["marker"],
                    linestyle="none", markerfacecolor="none", markersize=5,
                    label=f"{v} (warm-up)")
    ax.set_xlabel("launch, in the run's order")
    ax.set_ylabel("wall time per launch")
    ax.set_ylim(bottom=0)
    _time_axis(ax)
    _set_title(ax, f"Wall time of each launch ({r.np} ranks)", loc="left")
    _legend(ax)
    return Plot(f"app-run{r.run.id}-walls", FigureKind.WALLS, None, r.np,
                "Wall time of each launch",
                WALLS_CAPTION, fig)


def calls_plot(r: ProgramResult) -> Plot | None:
    """Horizontal bars per MPI function, one bar per library with a profiled launch."""
    per = {v: function_seconds(r, v) for v in r.variants if r.profiles.get(v)}
    if not per:
        return None
    names = sorted({f for s in per.values() for f in s},
                   key=lambda f: -max(s.get(f, 0.0) for s in per.values()))[:TOP_FUNCTIONS]
    styles = Styles(r.variants)
    fig = _figure((5.5, 1.2 + 0.32 * len(names) * max(1, len(per)) ** 0.5))
    ax = _axes(fig)
    height = 0.8 / len(per)
    y = np.arange(len(names))
    for j, (v, seconds) in enumerate(per.items()):
        ax.barh(y + (j - (len(per) - 1) / 2) * height, [seconds.get(f, 0.0) for f in names],
                height=height, color=styles(v)["color"], label=v)
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    ax.grid(axis="y", visible=False)
    ax.set_xlabel("seconds per rank (profiled launch)")
    _time_axis(ax, "x")
    _set_title(ax, "Time in each MPI function", loc="left")
    _legend(ax)
    return Plot(f"app-run{r.run.id}-calls", FigureKind.CALLS, None, r.np,
                "Time in each MPI function",
                CALLS_CAPTION.format(n=len(names)), fig)


def makers(r: ProgramResult) -> list[Maker]:
    return [lambda: walls_plot(r), lambda: calls_plot(r)]
