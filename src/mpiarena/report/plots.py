"""Figures of one run (matplotlib, Agg, nothing fetched): every function returns a Figure.

Per benchmark and rank count: time vs size (median with the 95% interval of the median as a
band), bandwidth vs size and NetPIPE's signature graph for point-to-point benchmarks, and
performance relative to a baseline variant in percent (Dimitrov and Skjellum's Fig. 3). Per
collective measured at several rank counts: time vs ranks; per collective at many ranks: every
rank's time, rank x observation (mpiGraph's bitmap). For the run: a heatmap of winners. Which
figures a run has, with their titles and captions: `plot_table.py`.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.cm import ScalarMappable
from matplotlib.colors import ListedColormap, LogNorm
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator
from PIL import Image  # matplotlib depends on Pillow

from ..analysis.groups import comparable, figure
from ..analysis.models import RESIDUAL_TARGET, fit_models
from ..analysis.ranks import rank_matrix
from ..analysis.run import Analysis, bandwidth, launch_figures, relative_to_baseline
from ..analysis.stats import CONFIDENCE
from ..analysis.verdicts import Speed
from ..base import units
from ..base.records import Cell, impl_of
from ..base.sizes import format_size
from ..base.status import CellStatus
from ..model.benchmarks import BENCHMARKS
from ..store.results import Group, RunData

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

STYLE: dict[RcKeyType, object] = {
    "font.size": 9, "axes.titlesize": 10, "axes.titleweight": "bold", "axes.labelsize": 9,
    "axes.spines.top": False, "axes.spines.right": False, "axes.grid": True,
    "axes.grid.which": "major", "grid.color": "#d9dde3", "grid.linewidth": 0.6,
    "axes.edgecolor": "#5b6470", "axes.labelcolor": "#2b3038", "xtick.color": "#2b3038",
    "ytick.color": "#2b3038", "legend.fontsize": 8, "legend.frameon": False,
    "figure.facecolor": "white", "axes.facecolor": "white", "svg.hashsalt": "mpiarena",
}
PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
           "#17becf", "#bcbd22", "#7f7f7f"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "h"]
DASHES = ["-", "--", ":", "-."]
SIZE = (5.5, 3.9)
GREY = "#e4e6ea"
LOG_PERCENT = [0.1, 1, 2, 5, 10, 25, 50, 100, 200, 400, 1000, 2500, 10000, 1e5, 1e6]
CAP = 10.0  # the winners' colour scale ends here; larger ratios get its darkest colour
BANDS = 256  # at most this many rows of ranks in a per-rank view (each the slowest of its ranks)

LEVEL = f"{CONFIDENCE:.0%}"  # the intervals' level, as the captions say it


class FigureKind(StrEnum):
    """What a figure draws: the kinds of `plot_table.PLOTS`, a program run's walls, calls and
    race, history's and a release bisection's."""

    TUNING = "tuning"
    WINNERS = "winners"
    MODELS = "models"
    RANKMAP = "rankmap"
    TIME = "time"
    BANDWIDTH = "bandwidth"
    SIGNATURE = "signature"
    LAUNCHES = "launches"
    RELATIVE = "relative"
    RANKS = "ranks"
    WALLS = "walls"
    CALLS = "calls"
    HISTORY = "history"
    RACE = "race"
    RELEASES = "releases"


@dataclass
class Plot:
    name: str  # file stem, e.g. pingpong-np2-time
    kind: FigureKind
    bench: str | None
    np: int | None
    title: str
    caption: str
    figure: Figure


Maker = Callable[[], Plot | None]  # draws one figure, or None where it has nothing to show


class LineStyle(TypedDict):
    """A variant's line: its implementation's colour, its own marker and dashes."""

    color: str
    marker: str
    linestyle: str


class Styles:
    """One colour per implementation, one line style per variant of it, the same everywhere."""

    def __init__(self, variants: list[str]):
        impls = list(dict.fromkeys(impl_of(v) for v in variants))
        seen: dict[str, int] = {}
        self.style: dict[str, LineStyle] = {}
        for v in variants:
            impl = impl_of(v)
            i, j = impls.index(impl), seen.get(impl, 0)
            seen[impl] = j + 1
            self.style[v] = {"color": PALETTE[i % len(PALETTE)],
                             "marker": MARKERS[(i // len(PALETTE) + j) % len(MARKERS)],
                             "linestyle": DASHES[j % len(DASHES)]}

    def __call__(self, variant: str) -> LineStyle:
        return self.style[variant]


def _figure(size: tuple[float, float] = SIZE) -> Figure:
    with matplotlib.rc_context(STYLE):
        fig = Figure(figsize=size, layout="constrained")
    FigureCanvasAgg(fig)  # rendered by Agg, whatever backend pyplot may use elsewhere
    return fig


def _axes(fig: Figure) -> Axes:
    with matplotlib.rc_context(STYLE):
        return fig.add_subplot()


def _time_axis(ax: Axes, axis: str = "y") -> None:
    fmt = FuncFormatter(lambda t, _: units.seconds(t) if t > 0 else "0")
    target = ax.yaxis if axis == "y" else ax.xaxis
    target.set_major_formatter(fmt)
    target.set_minor_formatter(NullFormatter())


def _is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _size_ticks(sizes: list[int]) -> list[int]:
    """Measured sizes far enough apart on a log axis to be labelled, powers of two first."""
    measured = sorted({s for s in sizes if s > 0})
    span = np.log2(measured[-1]) - np.log2(measured[0])
    gap = max(1.0, span / 9)
    chosen: list[int] = []
    for size in sorted(measured, key=lambda s: (not _is_power_of_two(s), -s)):
        if all(abs(np.log2(size) - np.log2(c)) >= gap for c in chosen):
            chosen.append(size)
    return sorted(chosen)


def _size_axis(ax: Axes, sizes: list[int]) -> None:
    """Log base 2, ticks at measured sizes, labelled 1 B, 1 KiB, ..."""
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator(_size_ticks(sizes)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: format_size(round(x))))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("message size")


def _legend(ax: Axes) -> None:
    """Under the axes, so that it never hides a line."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.figure.legend(handles, labels, loc="outside lower center", fontsize=7.5,
                         handlelength=2.6, ncols=min(3, len(handles)), columnspacing=1.2)


def _set_title(ax: Axes, text: str, **kwargs: Any) -> None:
    """A title just above the axes, placed once: left to place it, matplotlib measures the y
    axis again at every layout pass and draw to see whether it must move up, which it never
    must here (no axes with a title has ticks or labels on top); a seventh of drawing time."""
    ax.set_title(text, y=1.0, **kwargs)


def _title(ax: Axes, a: Analysis, np_: int, text: str) -> None:
    """A left-aligned title; dark red and marked when the rank count is oversubscribed."""
    if np_ > a.cores:
        _set_title(ax, f"{text}\noversubscribed: {np_} ranks on {a.cores} cores", loc="left",
                   color="#9b2c2c")
    else:
        _set_title(ax, text, loc="left")


def _series(a: Analysis, bench: str, np_: int, variant: str, positive: bool = True
            ) -> np.ndarray:
    """Sizes, medians and interval bounds of one variant across a table's sizes."""
    rows = []
    for key in a.tables[(bench, np_)]:
        s = a.summaries[key].get(variant)
        if s is not None and (key[1] > 0 or not positive):
            rows.append((key[1], s.median, s.ci_low, s.ci_high))
    return np.array(rows, dtype=float).reshape(-1, 4)


def _floor_series(a: Analysis, bench: str, np_: int) -> list[tuple[int, float]]:
    """The floor's figure at each size of a table where it has one (above 0 B): the machine
    floor's, or an emulated link's as set."""
    floor = a.floor or a.link
    if floor is None:
        return []
    return [(key.size, f) for key in a.tables[(bench, np_)]
            if key.size > 0 and (f := floor.figure(key)) is not None]


def _floor_line(a: Analysis, ax: Axes, points: list[tuple[int, float]]) -> None:
    """The floor drawn as a line: what this machine's cores (or the emulated link) allow."""
    if points:
        xs, ys = zip(*points, strict=True)
        ax.plot(xs, ys, label="machine floor" if a.floor else "link floor", color="black",
                linestyle=":", linewidth=1.6)


def time_figure(a: Analysis, bench: str, np_: int, styles: Styles) -> Figure | None:
    """Median time vs size on log-log axes, with the 95% interval of the median as a band."""
    fig = _figure()
    ax = _axes(fig)
    sizes: list[int] = []
    for variant in a.data.variants:
        s = _series(a, bench, np_, variant)
        if len(s) == 0:
            continue
        st = styles(variant)
        ax.plot(s[:, 0], s[:, 1], label=variant, markersize=3.5, linewidth=1.4, **st)
        ax.fill_between(s[:, 0], s[:, 2], s[:, 3], color=st["color"], alpha=0.18, linewidth=0)
        sizes += [int(x) for x in s[:, 0]]
    if not sizes:
        return None
    _floor_line(a, ax, _floor_series(a, bench, np_))
    _size_axis(ax, sizes)
    ax.set_yscale("log")
    _time_axis(ax)
    ax.set_ylabel(f"time (median, {LEVEL} CI band)")
    _title(ax, a, np_, f"{bench}, {np_} ranks: time")
    _legend(ax)
    return fig


def models_figure(a: Analysis, styles: Styles) -> Figure | None:
    """Pingpong at 2 ranks: each variant's measured figures (dots) and its fitted alpha-beta
    line per regime, with the relative residuals below."""
    fitted = fit_models(a.data)
    if not fitted:
        return None
    fig = _figure((SIZE[0], SIZE[1] * 1.35))
    with matplotlib.rc_context(STYLE):
        top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=(3, 1.2))
    sizes: list[int] = []
    for variant, m in fitted.items():
        st = styles(variant)
        for i, r in enumerate(m.regimes):
            shown = [sz for sz in r.sizes if sz > 0]
            if not shown:
                continue
            figs = [r.time(sz) / (1 + res) for sz, res in zip(r.sizes, r.residuals, strict=True)
                    if sz > 0]
            top.plot(shown, figs, linestyle="none", marker=st["marker"], color=st["color"],
                     markersize=3, alpha=0.7)
            grid = np.geomspace(shown[0], shown[-1], 24)
            top.plot(grid, [r.time(x) for x in grid], color=st["color"],
                     linestyle=st["linestyle"], linewidth=1.4, label=variant if i == 0 else None)
            bottom.plot(shown, [100 * res for sz, res in zip(r.sizes, r.residuals, strict=True)
                                if sz > 0],
                        linestyle="none", marker=st["marker"], color=st["color"], markersize=3)
            sizes += shown
    if not sizes:
        return None
    bottom.axhspan(-100 * RESIDUAL_TARGET, 100 * RESIDUAL_TARGET, color=GREY, zorder=0)
    bottom.set_ylabel("fit / figure - 1 (%)")
    _size_axis(bottom, sizes)
    top.set_yscale("log")
    _time_axis(top)
    top.set_ylabel("time (figure and fitted line)")
    _set_title(top, "pingpong, 2 ranks: alpha + beta * size per regime", loc="left")
    _legend(top)
    return fig


def launches_figure(a: Analysis, bench: str, np_: int, styles: Styles) -> Figure | None:
    """Each launch's median as a dot per variant and size (variants side by side), the figure
    (median of launch medians) as a bar: where launches disagree, the dots split."""
    keys = a.tables[(bench, np_)]
    seen_at = [launch_figures(a, k) for k in keys]
    variants = [v for v in a.data.variants if any(v in seen for seen in seen_at)]
    if not variants or max(len(seen[v][0]) for seen in seen_at for v in variants
                           if v in seen) < 2:
        return None
    fig = _figure((max(SIZE[0], 0.5 * len(keys) * len(variants) ** 0.5), SIZE[1]))
    ax = _axes(fig)
    width = 0.8 / len(variants)
    for i, variant in enumerate(variants):
        st = styles(variant)
        xs, ys, bars, ats = [], [], [], []  # one scatter and one set of bars per variant
        for x, seen_here in enumerate(seen_at):
            seen = seen_here.get(variant)
            if seen is None:
                continue
            medians, middle = seen
            at = x - 0.4 + width * (i + 0.5)
            xs.append(at + np.linspace(-0.3, 0.3, len(medians)) * width)
            ys.append(medians)
            bars.append(middle)
            ats.append(at)
        if xs:
            ax.scatter(np.concatenate(xs), np.concatenate(ys), s=9, color=st["color"],
                       alpha=0.8, label=variant, zorder=3)
            ax.hlines(bars, np.array(ats) - width / 2, np.array(ats) + width / 2,
                      color=st["color"], linewidth=1.6, zorder=4)
    spec = BENCHMARKS[bench]
    ax.set_xticks(range(len(keys)), [spec.size_text(k[1]) if spec.sized else bench
                                     for k in keys], fontsize=7)
    ax.set_yscale("log")
    _time_axis(ax)
    ax.set_ylabel("median of each launch")
    _title(ax, a, np_, f"{bench}, {np_} ranks: launches")
    _legend(ax)
    return fig


def bandwidth_figure(a: Analysis, bench: str, np_: int, styles: Styles) -> Figure | None:
    """Bandwidth of the median vs size (point-to-point benchmarks)."""
    fig = _figure()
    ax = _axes(fig)
    sizes: list[int] = []
    for variant in a.data.variants:
        s = _series(a, bench, np_, variant)
        bw = [(x, bandwidth(bench, int(x), m, a.window)) for x, m, _, _ in s]
        bw = [(x, b) for x, b in bw if b]
        if not bw:
            continue
        xs, ys = zip(*bw, strict=True)
        ax.plot(xs, ys, label=variant, markersize=3.5, linewidth=1.4, **styles(variant))
        sizes += [int(x) for x in xs]
    if not sizes:
        return None
    _floor_line(a, ax, [(x, b) for x, f in _floor_series(a, bench, np_)
                     if (b := bandwidth(bench, x, f, a.window))])
    _size_axis(ax, sizes)
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda b, _: units.bandwidth(b)))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_ylabel("bandwidth of the median")
    _title(ax, a, np_, f"{bench}, {np_} ranks: bandwidth")
    _legend(ax)
    return fig


def signature_figure(a: Analysis, bench: str, np_: int, styles: Styles) -> Figure | None:
    """NetPIPE's signature graph: throughput in Mbit/s against the time of one transfer."""
    fig = _figure()
    ax = _axes(fig)
    drawn = False
    for variant in a.data.variants:
        s = _series(a, bench, np_, variant)
        pts = [(m, bandwidth(bench, int(x), m, a.window)) for x, m, _, _ in s]
        pts = [(t, b * 8 / 1e6) for t, b in pts if b]
        if not pts:
            continue
        ts, mbits = zip(*pts, strict=True)
        ax.plot(ts, mbits, label=variant, markersize=3.5, linewidth=1.4, **styles(variant))
        drawn = True
    if not drawn:
        return None
    ax.set_xscale("log")
    _time_axis(ax, "x")
    ax.set_xlabel("transfer time (median)")
    ax.set_ylabel("throughput (Mbit/s)")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:,.0f}"))
    ax.set_ylim(bottom=0)
    _title(ax, a, np_, f"{bench}, {np_} ranks: signature graph (NetPIPE)")
    _legend(ax)
    return fig


def relative_figure(a: Analysis, bench: str, np_: int, styles: Styles) -> Figure | None:
    """Performance relative to the baseline in % (baseline median / other median x 100)."""
    base = a.baseline
    relative = relative_to_baseline(a, bench, np_)
    fig = _figure()
    ax = _axes(fig)
    sizes: list[int] = []
    for variant in a.data.variants:
        if variant == base:
            continue
        rows = relative.get(variant, [])
        if not rows:
            continue
        r = np.array(rows)
        st = styles(variant)
        ax.plot(r[:, 0], r[:, 1], label=variant, markersize=3.5, linewidth=1.4, **st)
        ax.fill_between(r[:, 0], r[:, 2], r[:, 3], color=st["color"], alpha=0.15, linewidth=0)
        sizes += [int(x) for x in r[:, 0]]
    if not sizes:
        return None
    ax.axhline(100, label=f"{base} = 100% (baseline)", zorder=1, **styles(base),
               markersize=0)
    _size_axis(ax, sizes)
    top = ax.get_ylim()[1]
    bottom = ax.get_ylim()[0]
    if top > 400 or 0 < bottom < 100 / 4:
        ax.set_yscale("log")
        lo, hi = ax.get_ylim()
        ax.yaxis.set_major_locator(FixedLocator([t for t in LOG_PERCENT if lo <= t <= hi]))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}%"))
        ax.yaxis.set_minor_formatter(NullFormatter())
    else:
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:.0f}%"))
        ax.set_ylim(bottom=0)
    ax.set_ylabel("performance vs baseline (higher is faster)")
    _title(ax, a, np_, f"{bench}, {np_} ranks: relative to {base}")
    _legend(ax)
    return fig


def _chosen_sizes(sizes: list[int]) -> list[int]:
    """A few sizes for time-vs-ranks panels: the smallest, a middle and the largest (non-zero,
    powers of two where there are some)."""
    nonzero = [s for s in sizes if _is_power_of_two(s)] or [s for s in sizes if s > 0] or sizes
    picks = [nonzero[0], nonzero[len(nonzero) // 2], nonzero[-1]]
    return list(dict.fromkeys(picks))


def ranks_figure(a: Analysis, bench: str, styles: Styles) -> Figure | None:
    """Time vs rank count for a collective measured at more than one rank count."""
    nps = sorted({k[2] for k in a.data.cells if k[0] == bench})
    if len(nps) < 2:
        return None
    common = sorted(set.intersection(*({k[1] for k in a.data.cells if k[0] == bench and
                                        k[2] == n} for n in nps)))
    if not common:
        return None
    sizes = _chosen_sizes(common) if BENCHMARKS[bench].sized else common[:1]
    fig = _figure((3.2 * len(sizes) + 0.8, 3.9))
    with matplotlib.rc_context(STYLE):
        axes = fig.subplots(1, len(sizes), sharey=True, squeeze=False)[0]
    for ax, size in zip(axes, sizes, strict=True):
        for variant in a.data.variants:
            pts = [(n, s) for n in nps
                   if (s := a.summaries.get(Cell(bench, size, n), {}).get(variant)) is not None]
            if not pts:
                continue
            xs = [n for n, _ in pts]
            med = np.array([s.median for _, s in pts])
            err = np.array([[s.median - s.ci_low for _, s in pts],
                            [s.ci_high - s.median for _, s in pts]])
            st = styles(variant)
            ax.errorbar(xs, med, yerr=err, label=variant, markersize=4, linewidth=1.4,
                        capsize=2, **st)
        if nps[-1] > a.cores:
            ax.axvspan(a.cores + 0.5, nps[-1] + 0.5, color="#f3d9d9", alpha=0.6, linewidth=0,
                       label=None)
            ax.text(a.cores + 0.55, 0.98, "oversubscribed", transform=ax.get_xaxis_transform(),
                    va="top", fontsize=7, color="#9b2c2c")
        ax.set_xticks(nps)
        ax.set_xlim(nps[0] - 0.5, nps[-1] + 0.5)
        ax.set_yscale("log")
        _time_axis(ax)
        ax.set_xlabel("ranks")
        _set_title(ax, format_size(size) if BENCHMARKS[bench].sized else bench, loc="left",
                   fontsize=9)
    axes[0].set_ylabel(f"time (median, {LEVEL} CI)")
    _legend(axes[0])
    fig.suptitle(f"{bench}: time vs ranks", x=0.01, ha="left", fontweight="bold", fontsize=10)
    return fig


def unsized_figure(a: Analysis, bench: str, np_: int, styles: Styles) -> Figure | None:
    """Benchmarks without a size: every observation as a dot, the median and its interval."""
    key = Cell(bench, 0, np_)
    summaries = a.summaries.get(key, {})
    if key not in a.data.cells or not summaries:
        return None
    order = [v for v in a.data.variants if v in summaries]
    fig = _figure((5.5, 1.1 + 0.36 * len(order)))
    ax = _axes(fig)
    rng = np.random.default_rng(0)
    for y, variant in enumerate(order):
        values = a.data.cells[key][variant].array
        s, st = summaries[variant], styles(variant)
        ax.scatter(values, y + rng.uniform(-0.18, 0.18, len(values)), s=7, alpha=0.35,
                   color=st["color"], linewidths=0)
        ax.errorbar([s.median], [y], xerr=[[s.median - s.ci_low], [s.ci_high - s.median]],
                    color=st["color"], marker="|", markersize=14, capsize=3, linewidth=2)
    ax.set_yticks(range(len(order)), order)
    ax.set_ylim(-0.6, len(order) - 0.4)
    ax.invert_yaxis()
    lo = min(s.min for s in summaries.values())
    hi = max(s.max for s in summaries.values())
    if lo > 0 and hi / lo > 20:
        ax.set_xscale("log")
    _time_axis(ax, "x")
    ax.grid(axis="y", visible=False)
    ax.set_xlabel(f"time: observations, median and {LEVEL} CI")
    _title(ax, a, np_, f"{bench}, {np_} ranks")
    return fig


def _wrap(name: str) -> str:
    for sep in ("-", ":"):
        if sep in name:
            head, _, tail = name.partition(sep)
            return f"{head}\n{tail}" if sep == "-" else f"{head}\n:{tail}"
    return name


def winners_figure(a: Analysis) -> Figure | None:
    """Benchmark x size: the winner's name, coloured by how far ahead of the runner-up it is.

    Grey where the verdict against the runner-up is not 'faster' (indistinguishable or not
    backed by the observations).
    """
    if not a.judged:
        return None
    multi_np = len({np_ for _, np_ in a.tables}) > 1
    rows = [t for t in a.tables if any(comparable(a.data.cells[k]) for k in a.tables[t])]
    sized = sorted({k[1] for t in rows for k in a.tables[t] if BENCHMARKS[t[0]].sized})
    unsized = any(not BENCHMARKS[b].sized for b, _ in rows)
    cols: list[int | None] = ([None] if unsized else []) + list(sized)
    ratios = [vs[0].ratio for vs in a.judged.values() if vs and vs[0].outcome == Speed.FASTER]
    vmax = min(max([2.0, *ratios]), CAP)
    norm = LogNorm(vmin=1.0, vmax=vmax, clip=True)
    cmap = matplotlib.colormaps["YlGn"]
    fig = _figure((2.0 + 0.86 * len(cols), 0.9 + 0.5 * len(rows)))
    ax = _axes(fig)
    ax.grid(False)
    face: str | tuple[float, float, float, float]  # a colour: named, or RGBA
    for y, (bench, np_) in enumerate(rows):
        for x, col in enumerate(cols):
            key = (bench, col if col is not None else 0, np_)
            if (col is None) == BENCHMARKS[bench].sized or key not in a.data.cells:
                continue
            vs = a.judged.get(key)
            if not vs:
                ok = comparable(a.data.cells[key])
                text, face, color = (_wrap(next(iter(ok))) if ok else "-"), "white", "#8a919c"
            else:
                v = vs[0]
                if v.outcome == Speed.FASTER:
                    face = cmap(0.15 + 0.85 * norm(v.ratio))
                    lum = 0.299 * face[0] + 0.587 * face[1] + 0.114 * face[2]
                    color = "white" if lum < 0.5 else "#1b1f24"
                    text = f"{_wrap(v.fast)}\n{v.ratio:.2f}x"
                else:
                    face, color = GREY, "#6b7280"
                    mark = "≈" if v.outcome == Speed.INDISTINGUISHABLE else "?"
                    text = f"{_wrap(v.fast)}\n{mark}"
            ax.add_patch(Rectangle((x - 0.5, y - 0.5), 1, 1, facecolor=face,
                                                      edgecolor="white", linewidth=1.5))
            ax.text(x, y, text, ha="center", va="center", fontsize=6.8, color=color,
                    linespacing=1.05)
    ax.set_xlim(-0.5, len(cols) - 0.5)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xticks(range(len(cols)),
                  ["no size" if c is None else format_size(c) for c in cols], fontsize=7.5)
    ax.set_yticks(range(len(rows)), [f"{b}, {n} ranks" if multi_np else b for b, n in rows],
                  fontsize=8)
    ax.xaxis.tick_top()
    ax.tick_params(length=0)
    for side in ("left", "bottom", "top", "right"):
        ax.spines[side].set_visible(False)
    sm = ScalarMappable(norm=norm, cmap=ListedColormap(
        cmap(0.15 + 0.85 * np.linspace(0, 1, 256))))
    bar = fig.colorbar(sm, ax=ax, shrink=min(1.0, 5 / max(len(rows), 1)), pad=0.01,
                       aspect=12, extend="max" if vmax >= CAP else "neither")
    bar.set_label("runner-up median / winner median", fontsize=8)
    bar.ax.tick_params(labelsize=7)
    bar.set_ticks([r for r in (1, 1.25, 1.5, 2, 3, 5, 10) if r <= vmax])
    bar.ax.yaxis.set_major_formatter(FuncFormatter(lambda r, _: f"{r:g}x"))
    bar.ax.yaxis.set_minor_formatter(NullFormatter())
    return fig


def tuning_figure(data: RunData, impl: str, coll: str, np_: int,
                  variants: list[str]) -> Figure | None:
    """Algorithm x size for one library, collective and rank count: each algorithm's time
    relative to the library's default (the default's median over the algorithm's), green where
    it is faster, red where slower; crossed out where it failed or gave wrong data."""
    sizes = sorted(k[1] for k in data.cells if k[0] == coll and k[2] == np_)
    if not sizes or not variants:
        return None
    norm = LogNorm(vmin=0.25, vmax=4.0, clip=True)
    cmap = matplotlib.colormaps["RdYlGn"]
    fig = _figure((2.4 + 0.8 * len(sizes), 0.9 + 0.38 * len(variants)))
    ax = _axes(fig)
    ax.grid(False)
    face: str | tuple[float, float, float, float]  # a colour: named, or RGBA
    for y, variant in enumerate(variants):
        for x, size in enumerate(sizes):
            cell = data.cells[Cell(coll, size, np_)]
            group, default = cell.get(variant), cell.get(impl)
            if group is None or default is None:
                continue
            if group.status != CellStatus.OK or not group.values or not default.values:
                face, text, color = GREY, "x" if group.status != CellStatus.OK else "-", "#6b7280"
            else:
                ratio = figure(default) / figure(group)
                face = cmap(norm(ratio))
                lum = 0.299 * face[0] + 0.587 * face[1] + 0.114 * face[2]
                text, color = f"{ratio:.2f}", "white" if lum < 0.45 else "#1b1f24"
            ax.add_patch(Rectangle((x - 0.5, y - 0.5), 1, 1, facecolor=face, edgecolor="white",
                                   linewidth=1.5))
            ax.text(x, y, text, ha="center", va="center", fontsize=7, color=color)
    ax.set_xlim(-0.5, len(sizes) - 0.5)
    ax.set_ylim(len(variants) - 0.5, -0.5)
    ax.set_xticks(range(len(sizes)), [format_size(s) for s in sizes], fontsize=7.5)
    ax.set_yticks(range(len(variants)), [v.split("=", 1)[-1] for v in variants], fontsize=7.5)
    ax.xaxis.tick_top()
    ax.tick_params(length=0)
    for side in ("left", "bottom", "top", "right"):
        ax.spines[side].set_visible(False)
    bar = fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=ax, pad=0.01, aspect=12,
                       extend="both")
    bar.set_label("default median / algorithm median", fontsize=8)
    bar.ax.tick_params(labelsize=7)
    bar.set_ticks([0.25, 0.5, 1, 2, 4])
    bar.ax.yaxis.set_major_formatter(FuncFormatter(lambda r, _: f"{r:g}x"))
    bar.ax.yaxis.set_minor_formatter(NullFormatter())
    return fig


def _bands(m: np.ndarray) -> tuple[np.ndarray, int]:
    """Rows folded into at most BANDS bands of consecutive ranks, each its slowest rank."""
    per = -(-m.shape[0] // BANDS)
    if per == 1:
        return m, 1
    pad = np.full((per * -(-m.shape[0] // per) - m.shape[0], m.shape[1]), np.nan)
    return np.nanmax(np.vstack([m, pad]).reshape(-1, per, m.shape[1]), axis=1), per


def rank_groups(a: Analysis, bench: str, np_: int) -> tuple[Cell, dict[str, Group]]:
    """A per-rank view's cell, the table's largest size (where placement and the network weigh
    most), and its variants that measured it."""
    key = a.tables[(bench, np_)][-1]
    return key, {v: g for v, g in a.data.cells[key].items()
                 if g.status == CellStatus.OK and g.values}


def rank_figure(a: Analysis, bench: str, np_: int) -> Figure | None:
    """mpiGraph's bitmap for a collective: per variant, each rank's time per call over the
    median rank's, rank x observation, at the table's largest size; stragglers show as lines
    across every launch."""
    key, groups = rank_groups(a, bench, np_)
    if not groups:
        return None
    fig = _figure((max(SIZE[0], 2.2 * len(groups) + 1.2), SIZE[1] + 0.6))
    axes = fig.subplots(1, len(groups), sharey=True, squeeze=False)[0]
    norm = LogNorm(0.8, 4.0)
    for ax, (variant, group) in zip(axes, groups.items(), strict=True):
        m = rank_matrix(group)
        shown, per = _bands(m)
        ax.imshow(np.clip(shown, 0.8, 4.0), aspect="auto", cmap="inferno_r", norm=norm,
                  interpolation="nearest", extent=(-0.5, m.shape[1] - 0.5, m.shape[0], 0))
        edges = np.flatnonzero(np.diff(group.launches)) + 0.5
        ax.vlines(edges, 0, m.shape[0], color="white", linewidth=0.8)
        _set_title(ax, variant, fontsize=8)
        ax.set_xlabel("observation (launches in turn)", fontsize=7)
        ax.grid(False)
    axes[0].set_ylabel(f"rank{f' (bands of {per}: the slowest)' if per > 1 else ''}")
    bar = fig.colorbar(ScalarMappable(norm=norm, cmap="inferno_r"), ax=list(axes), aspect=20,
                       extend="both")
    bar.set_label("time / median rank's", fontsize=8)
    bar.set_ticks([0.8, 1, 1.5, 2, 3, 4], labels=["0.8x", "1x", "1.5x", "2x", "3x", "4x"])
    bar.ax.yaxis.set_minor_formatter(NullFormatter())
    size = BENCHMARKS[bench].size_text(key[1]) if BENCHMARKS[bench].sized else ""
    fig.suptitle(f"{bench} {size}, {np_} ranks: every rank".replace("  ", " "),
                 fontsize=10, fontweight="bold")
    return fig


def _major_ticks_only(fig: Figure) -> None:
    """No tick marks between a log axis's decades: unlabelled, under no grid line (the grid is
    the major ticks'), they were 15% of the CPU a quick run's figures took to draw."""
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_scale() == "log":
                axis.set_minor_locator(NullLocator())


def png(fig: Figure, dpi: int = 100) -> bytes:
    """PNG bytes, reduced to a 256-colour palette (a third of the size, no visible change) by
    Pillow's fast octree: a fifth of median cut's time on a quick run's figures, 13% fewer bytes.

    Drawn once, at `dpi`, and the canvas's pixels taken as they are: `savefig` would lay the
    figure out and draw it twice, then encode a PNG only for it to be decoded here. zlib's
    default level: its highest (`optimize`) took eight times as long for 7% fewer bytes."""
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    _major_ticks_only(fig)
    shown = fig.dpi
    try:
        with matplotlib.rc_context(STYLE):
            fig.set_dpi(dpi)
            canvas.draw()  # type: ignore[no-untyped-call]  # matplotlib's Agg: no annotations
        pixels = canvas.buffer_rgba()  # type: ignore[no-untyped-call]  # (the same)
        rgb = Image.frombuffer("RGBA", canvas.get_width_height(physical=True), pixels, "raw",
                               "RGBA", 0, 1).convert("RGB")
    finally:
        fig.set_dpi(shown)
    img = rgb.quantize(colors=256, method=Image.Quantize.FASTOCTREE)
    out = io.BytesIO()
    img.save(out, format="png")
    return out.getvalue()


def svg(fig: Figure) -> str:
    buf = io.StringIO()
    _major_ticks_only(fig)
    with matplotlib.rc_context(STYLE):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    return buf.getvalue()


def save(plot: Plot, directory: Path, dpi: int = 150) -> list[Path]:
    """Write a figure as NAME.png and NAME.svg into directory."""
    directory.mkdir(parents=True, exist_ok=True)
    png_path, svg_path = directory / f"{plot.name}.png", directory / f"{plot.name}.svg"
    png_path.write_bytes(png(plot.figure, dpi))
    svg_path.write_text(svg(plot.figure))
    return [png_path, svg_path]
