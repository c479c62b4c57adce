"""A history in words: per cell a table of its figure per run and each change (terminal, rich),
a sparkline, and the tally; the HTML page with one plot per cell."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .. import __version__
from ..analysis.compare import Change
from ..analysis.history import History, Point, Series, Step
from ..analysis.stats import CONFIDENCE, CORRECTION
from ..analysis.verdicts import Movement
from ..base import units
from ..model.benchmarks import BENCHMARKS
from ..system.machine_load import BUSY
from . import drawing
from .html import png_image, template_env
from .plots import FigureKind, Maker, Plot, _axes, _figure, _set_title, _time_axis
from .terminal import HELD, MOVEMENT_COLOURS, drift_line

# compare's movement -> the word a history uses ("undecided": the launches cannot tell)
WORDS = {Movement.REGRESSION: "regression", Movement.IMPROVEMENT: "improvement",
         Movement.INDISTINGUISHABLE: "indistinguishable", Movement.UNDECIDED: "inconclusive"}
ARROWS = {Movement.REGRESSION: "▲", Movement.IMPROVEMENT: "▼"}
BARS = "▁▂▃▄▅▆▇█"
LEVEL = f"{CONFIDENCE:.0%}"
TEMPLATE = "history.html.j2"


def title(s: Series) -> str:
    """'pingpong 8 B, 2 ranks, mpich-4.0.2' (-> each variant that --follow continued it with)."""
    cell = s.cell
    bench = BENCHMARKS[cell.bench]
    where = f"{cell.bench} {bench.size_text(cell.size)}" if bench.sized else cell.bench
    ran = " -> ".join(dict.fromkeys([cell.variant, *(p.variant for p in s.points)]))
    return f"{where}, {cell.np} ranks, {ran}"


def run_label(labels: Sequence[str], s: Series, p: Point) -> str:
    """The run's label, with the variant that ran where --follow changed it."""
    return labels[p.run] + (f" ({p.variant})" if p.variant != s.cell.variant else "")


def sparkline(s: Series) -> str:
    """The figures as bars, low to high, with an arrow after each decided change."""
    figures = [p.figure for p in s.points]
    lo, hi = min(figures), max(figures)
    marks = {step.after: ARROWS.get(step.outcome, "") if step.outcome else "" for step in s.steps}
    out = ""
    for p in s.points:
        level = (p.figure - lo) / (hi - lo) if hi > lo else 0.5
        out += marks.get(p.run, "") + BARS[min(len(BARS) - 1, int(level * len(BARS)))]
    return out


def change_text(c: Change | None) -> str:
    if c is None:
        return "not compared (timed by different methods)"
    return (f"{WORDS[c.outcome]} x{c.ratio:.2f} ({LEVEL} CI {c.ci_low:.2f}-{c.ci_high:.2f}, "
            f"p={c.p_adjusted:.2g}, launches {c.launches_a}/{c.launches_b}"
            f"{HELD if c.held else ''})")


def _coloured(c: Change | None) -> str:
    text = escape(change_text(c))
    colour = MOVEMENT_COLOURS.get(c.outcome, "dim") if c else "dim"
    return f"[{colour}]{text}[/]"


def step_text(labels: Sequence[str], step: Step) -> str:
    """'run 2 -> run 3: regression x13.7 (...)'."""
    return f"run {labels[step.before]} -> run {labels[step.after]}: {change_text(step.change)}"


def step_line(labels: Sequence[str], s: Series, step: Step) -> str:
    """'pingpong 8 B, 2 ranks, X: run 2 -> run 3: regression x13.7 (...)'."""
    return f"{title(s)}: {step_text(labels, step)}"


def render(h: History, labels: Sequence[str], console: Console) -> None:
    """A table per cell (its figure per run, the change from the run before), its sparkline
    and the first run against the last, then the tally."""
    for s in h.series:
        console.print(f"\n[bold]{escape(title(s))}[/]  {sparkline(s)}")
        table = Table("run", "started", "figure", f"{LEVEL} CI", "launches",
                      "change from the run before", box=None, pad_edge=False)
        changes = {step.after: step for step in s.steps}
        for p in s.points:
            step = changes.get(p.run)
            table.add_row(run_label(labels, s, p), h.runs[p.run].run.started,
                          units.seconds(p.figure),
                          f"{units.seconds(p.ci_low)}-{units.seconds(p.ci_high)}",
                          str(p.launches), _coloured(step.change) if step else "")
        console.print(table)
        if s.overall:
            console.print(f"  first (run {labels[s.overall.before]}) -> last (run "
                          f"{labels[s.overall.after]}): {_coloured(s.overall.change)}")
    console.print()
    console.print(tally(h))
    console.print(escape(history_drift(h)), soft_wrap=True)
    if h.busy:
        console.print(busy_line(h, labels), style="yellow")


def tally(h: History) -> str:
    """How many changes were judged and what they came to; where launches could not back
    changes beyond the threshold, what would."""
    steps = [step for s in h.series for step in s.judged()]
    counts = {w: sum(1 for step in steps if step.outcome == o) for o, w in WORDS.items()}
    judged = sum(1 for step in steps if step.change)
    text = (f"{len(h.series)} cells over {len(h.runs)} runs: {judged} changes judged as one "
            f"family by compare's rule (by over {h.threshold:.0%}, {CORRECTION} across them all): "
            + ", ".join(f"{n} {w}" for w, n in counts.items()))
    beyond = sum(1 for step in steps if step.change and step.outcome == Movement.UNDECIDED
                 and not step.change.held and (step.change.ci_low > 1 + h.threshold
                      or step.change.ci_high < 1 / (1 + h.threshold)))
    if beyond:
        text += (f". {beyond} inconclusive changes lie beyond {h.threshold:.0%} but the test "
                 f"across all {judged} does not back them: judge fewer at once (--since, "
                 "--bench, --impl, --sizes) or take more launches per run")
    return text


def history_drift(h: History) -> str:
    """The drift between consecutive runs that the history's steps show, and how it widened the
    rule."""
    held = sum(1 for s in h.series for step in s.judged() if step.change and step.change.held)
    return drift_line(h.drift, held, "consecutive runs", "steps")


def busy_line(h: History, labels: Sequence[str]) -> str:
    """The runs whose launches shared the machine with other work."""
    runs = ", ".join(f"run {labels[b.run]} ({b.above} of {b.launches} launches, up to "
                     f"{b.worst:.0%})" for b in h.busy)
    return (f"warn: other work took more than {BUSY:.0%} of the machine during launches of "
            f"{runs}: a change into or out of these runs may be the machine's, not the "
            "library's ('run --wait-quiet S' waits for quiet)")


# --- the HTML page ----------------------------------------------------------------------------

CAPTION = (f"The figure (median of launch medians) in each run with its {LEVEL} interval, runs "
           "in time order; a red triangle marks a decided regression from the run before, a "
           "green one a decided improvement.")


def cell_plot(h: History, labels: Sequence[str], s: Series, index: int) -> Plot:
    fig = _figure((6.0, 3.2))
    ax = _axes(fig)
    xs = list(range(len(s.points)))
    y = [p.figure for p in s.points]
    below = [p.figure - p.ci_low for p in s.points]
    above = [p.ci_high - p.figure for p in s.points]
    ax.errorbar(xs, y, yerr=[below, above], color="#1f77b4", marker="o", markersize=4,
                linewidth=1, capsize=3)
    place = {p.run: x for x, p in enumerate(s.points)}
    for step in s.steps:
        if step.outcome and step.outcome.decided:
            regression = step.outcome == Movement.REGRESSION
            ax.plot([place[step.after]], [s.points[place[step.after]].figure],
                    marker="^" if regression else "v", markersize=11, linestyle="none",
                    color="#b42318" if regression else "#1d7a3a", alpha=0.8)
    ax.set_xticks(xs, [labels[p.run] for p in s.points])
    ax.set_xlabel("run")
    ax.set_ylabel("time")
    ax.set_ylim(bottom=0, top=max(p.ci_high for p in s.points if math.isfinite(p.ci_high)) * 1.1)
    _time_axis(ax)
    _set_title(ax, title(s), loc="left")
    return Plot(f"history-{index}", FigureKind.HISTORY, s.cell.bench, s.cell.np, title(s),
                CAPTION, fig)


@dataclass(frozen=True)
class Row:
    run: str
    started: str
    figure: str
    interval: str
    launches: int
    change: str
    outcome: str


def _rows(h: History, labels: Sequence[str], s: Series) -> list[Row]:
    changes = {step.after: step for step in s.steps}
    rows = []
    for p in s.points:
        step = changes.get(p.run)
        rows.append(Row(run_label(labels, s, p), h.runs[p.run].run.started, units.seconds(p.figure),
                        f"{units.seconds(p.ci_low)}-{units.seconds(p.ci_high)}", p.launches,
                        change_text(step.change) if step else "",
                        (step.outcome or "") if step else ""))
    return rows


def render_html(h: History, labels: Sequence[str], dpi: int = 100) -> str:
    """The whole history as one self-contained HTML page: per cell its plot and table."""
    makers: list[Maker] = [partial(cell_plot, h, labels, s, i) for i, s in enumerate(h.series)]
    images = drawing.drawn(makers, partial(png_image, dpi=dpi))
    cells = [{"title": title(s), "image": image, "rows": _rows(h, labels, s),
              "overall": change_text(s.overall.change) if s.overall else "",
              "overall_outcome": (s.overall.outcome or "") if s.overall else "",
              "regressions": len(s.regressions())}
             for s, image in zip(h.series, images, strict=True)]
    return template_env().get_template(TEMPLATE).render(
        version=__version__, tally=tally(h), drift=history_drift(h), cells=cells, level=LEVEL,
        correction=CORRECTION,
        busy=busy_line(h, labels) if h.busy else "",
        runs=[(labels[i], r.run.started, r.run.command) for i, r in enumerate(h.runs)])
