"""Which figures a benchmark run has, as one table: each kind of figure, what it is drawn for and
where that applies, its file name, title and caption, and the function of `plots.py` that draws
it. `makers` turns the table into a run's figures in report order without drawing any.

Names and titles are patterns over the subject's fields and `{baseline}`; a fixed caption may
also say `{level}` (the intervals' level) and `{residual}` (the models' target); a caption
that depends on the data is a function of the analysis and the subject."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Generic, TypeVar

from matplotlib.figure import Figure

from ..analysis.models import RESIDUAL_TARGET
from ..analysis.ranks import rank_matrix, slowest_ranks
from ..analysis.run import Analysis, analyse
from ..model.benchmarks import BENCHMARKS, Kind
from ..store.results import RunData
from .plots import (
    LEVEL,
    FigureKind,
    Maker,
    Plot,
    Styles,
    bandwidth_figure,
    launches_figure,
    models_figure,
    rank_figure,
    rank_groups,
    ranks_figure,
    relative_figure,
    signature_figure,
    time_figure,
    tuning_figure,
    unsized_figure,
    winners_figure,
)

MANY_RANKS = 8  # from here a collective gets a per-rank view


@dataclass(frozen=True)
class Whole:
    """The run as a whole."""

    bench: None = None
    np: None = None


@dataclass(frozen=True)
class TunedCollective:
    """One library's algorithms for one collective at one rank count (a tuning run)."""

    impl: str
    bench: str
    np: int
    variants: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    """One benchmark at one rank count: a table of the report."""

    bench: str
    np: int


@dataclass(frozen=True)
class Bench:
    """One benchmark across its rank counts."""

    bench: str
    np: None = None


Subject = Whole | TunedCollective | Table | Bench
S = TypeVar("S", Whole, TunedCollective, Table, Bench)


def _always(a: Analysis, subject: object) -> bool:
    return True


@dataclass(frozen=True)
class PlotKind(Generic[S]):
    """A kind of figure: one is drawn for each subject of type `of` where it `applies`."""

    kind: FigureKind
    of: type[S]
    name: str  # the file's stem
    title: str
    caption: str | Callable[[Analysis, S], str]
    draw: Callable[[Analysis, S, Styles], Figure | None]  # None: nothing to show
    applies: Callable[[Analysis, S], bool] = field(default=_always)


def many_ranks(a: Analysis, t: Table) -> bool:
    """Whether a table gets a per-rank view: a collective at many ranks."""
    return BENCHMARKS[t.bench].kind == Kind.COLL and t.np >= MANY_RANKS


def _sized(a: Analysis, t: Table) -> bool:
    return BENCHMARKS[t.bench].sized


def _point_to_point(a: Analysis, t: Table) -> bool:
    return BENCHMARKS[t.bench].sized and BENCHMARKS[t.bench].kind == Kind.P2P


def _time_caption(a: Analysis, t: Table) -> str:
    zero = " 0 B cannot sit on a log axis; the tables hold it." if any(
        k.size == 0 for k in a.tables[(t.bench, t.np)]) else ""
    return f"Median per size; the band is the {LEVEL} confidence interval of the median.{zero}"


def _rank_caption(a: Analysis, t: Table) -> str:
    key, groups = rank_groups(a, t.bench, t.np)
    named = [f"{variant}: " + ", ".join(f"rank {r} {x:.2f}x"
                                        for r, x in slowest_ranks(rank_matrix(group)))
             for variant, group in groups.items()]
    size = BENCHMARKS[t.bench].size_text(key.size) if BENCHMARKS[t.bench].sized else ""
    return (f"Each rank's time per call over the median rank's in the same observation, at "
            f"{size or 'its only size'}; dark rows are ranks that are slow in every launch "
            f"(placement, a slow node), dark columns a slow observation. Slowest ranks "
            f"(median over observations): {'; '.join(named)}.")


# In report order for each subject (subjects: see `_subjects`).
PLOTS = (
    PlotKind(FigureKind.TUNING, TunedCollective, "tuning-{impl}-{bench}-np{np}",
             "{impl} {bench}, {np} ranks: algorithms against the default",
             "Each algorithm's speed relative to the library's default (the default's median "
             "over the algorithm's): above 1 (green) it is faster. x marks an algorithm that "
             "failed or gave wrong data.",
             lambda a, t, _: tuning_figure(a.data, t.impl, t.bench, t.np, list(t.variants))),
    PlotKind(FigureKind.WINNERS, Whole, "winners", "Winners",
             "Per benchmark and size, the variant with the lowest median. Coloured by the "
             "runner-up's median over the winner's where the verdict says 'faster'; grey where "
             "it does not (≈ indistinguishable, ? undecided: see the verdict line for why).",
             lambda a, _, __: winners_figure(a)),
    PlotKind(FigureKind.MODELS, Table, "{bench}-np{np}-models",
             "{bench}, {np} ranks: fitted models",
             "Each variant's figures (dots) and its line t = alpha + beta * size per protocol "
             "regime (see Models); below, how far the line is from each figure (the grey band "
             "is the {residual} target).",
             lambda a, _, styles: models_figure(a, styles),
             applies=lambda a, t: (t.bench, t.np) == ("pingpong", 2)),
    PlotKind(FigureKind.RANKMAP, Table, "{bench}-np{np}-ranks", "{bench}, {np} ranks: rank by rank",
             _rank_caption, lambda a, t, _: rank_figure(a, t.bench, t.np), applies=many_ranks),
    PlotKind(FigureKind.TIME, Table, "{bench}-np{np}-time", "{bench}, {np} ranks",
             "Every observation (dots), the median (bar) and its {level} confidence interval.",
             lambda a, t, styles: unsized_figure(a, t.bench, t.np, styles),
             applies=lambda a, t: not _sized(a, t)),
    PlotKind(FigureKind.TIME, Table, "{bench}-np{np}-time",
             "{bench}, {np} ranks: time", _time_caption,
             lambda a, t, styles: time_figure(a, t.bench, t.np, styles), applies=_sized),
    PlotKind(FigureKind.BANDWIDTH, Table, "{bench}-np{np}-bandwidth",
             "{bench}, {np} ranks: bandwidth",
             "Bytes moved per iteration over the median time per iteration.",
             lambda a, t, styles: bandwidth_figure(a, t.bench, t.np, styles),
             applies=_point_to_point),
    PlotKind(FigureKind.SIGNATURE, Table, "{bench}-np{np}-signature",
             "{bench}, {np} ranks: signature graph",
             "NetPIPE's signature graph: throughput against the time of one transfer; the "
             "leftmost point is the latency.",
             lambda a, t, styles: signature_figure(a, t.bench, t.np, styles),
             applies=lambda a, t: _point_to_point(a, t) and t.bench == "pingpong"),
    PlotKind(FigureKind.LAUNCHES, Table, "{bench}-np{np}-launches",
             "{bench}, {np} ranks: launch by launch",
             "Each dot is one launch's median, the bar the figure (the median of the launch "
             "medians): the level of a figure is set when a job starts, so launches that split "
             "into groups are the uncertainty the intervals carry.",
             lambda a, t, styles: launches_figure(a, t.bench, t.np, styles), applies=_sized),
    PlotKind(FigureKind.RELATIVE, Table, "{bench}-np{np}-relative",
             "{bench}, {np} ranks: relative to {baseline}",
             "{baseline}'s median over each variant's, in percent (above 100%: faster than the "
             "baseline); the band is the ratio's {level} interval over launches.",
             lambda a, t, styles: relative_figure(a, t.bench, t.np, styles), applies=_sized),
    PlotKind(FigureKind.RANKS, Bench, "{bench}-ranks", "{bench}: time vs ranks",
             "Median and {level} interval per rank count, at a few sizes.",
             lambda a, b, styles: ranks_figure(a, b.bench, styles),
             applies=lambda a, b: BENCHMARKS[b.bench].kind == Kind.COLL),
)


def _tuned(data: RunData) -> Iterator[TunedCollective]:
    """A tuning run's heatmaps: each library's tuned collective at each rank count."""
    tuned: dict[tuple[str, str], list[str]] = {}
    for variant, what in data.settings.tuning.items():
        tuned.setdefault((what["impl"], what["coll"]), []).append(variant)
    for (impl, coll), variants in sorted(tuned.items()):
        for np_ in sorted({k.np for k in data.cells if k.bench == coll}):
            yield TunedCollective(impl, coll, np_, tuple(sorted(variants)))


def _subjects(a: Analysis) -> Iterator[Subject]:
    """What figures are drawn for, in report order: each tuned collective, the run, then each
    table, a benchmark's own after its first table."""
    yield from _tuned(a.data)
    yield Whole()
    seen: set[str] = set()
    for bench, np_ in a.tables:
        yield Table(bench, np_)
        if bench not in seen:
            seen.add(bench)
            yield Bench(bench)


def fields(subject: Subject, baseline: str) -> dict[str, object]:
    """What names, titles and fixed captions may say."""
    return {**vars(subject), "baseline": baseline, "level": LEVEL,
            "residual": f"{RESIDUAL_TARGET:.0%}"}


def _plot(kind: PlotKind[S], a: Analysis, subject: S, styles: Styles) -> Plot | None:
    fig = kind.draw(a, subject, styles)
    if fig is None:
        return None
    said = fields(subject, a.baseline)
    caption = kind.caption(a, subject) if callable(kind.caption) else \
        kind.caption.format_map(said)
    return Plot(kind.name.format_map(said), kind.kind, subject.bench, subject.np,
                kind.title.format_map(said), caption, fig)


def _maker(kind: PlotKind[Any], a: Analysis, subject: Subject, styles: Styles) -> Maker | None:
    """The figure of this kind for this subject, where it has one."""
    if not isinstance(subject, kind.of) or not kind.applies(a, subject):
        return None
    return partial(_plot, kind, a, subject, styles)


def makers(data: RunData, baseline: str | None = None,
           analysis: Analysis | None = None) -> list[Maker]:
    """Every figure of a run, in report order, as a function that draws it (None where it has
    nothing to show): listing them draws nothing, so each may be drawn in another process."""
    a = analysis or analyse(data, baseline)
    styles = Styles(data.variants)
    found = (_maker(kind, a, subject, styles) for subject in _subjects(a) for kind in PLOTS)
    return [make for make in found if make is not None]
