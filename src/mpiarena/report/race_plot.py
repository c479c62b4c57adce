"""The race of a `program --tune` run as a figure: a row per configuration, a dot per launch it
got, how it left the race marked at its end, its median wall time beside it."""

from __future__ import annotations

import statistics
from enum import Enum

from ..analysis.program_tuning import TuneResult
from ..analysis.race import DropCause
from ..base.units import seconds
from ..model.runs import program_settings
from .plots import FigureKind, Plot, Styles, _axes, _figure, _legend, _set_title


class Kept(Enum):
    """How a configuration's row ends where it was not dropped."""

    WINNER = "winner"
    STAYED = "stayed"


# how a configuration's row ends (every member of both): marker, colour, legend
ENDS: dict[DropCause | Kept, tuple[str, str, str]] = {
    DropCause.SLOWER: ("X", "#c0392b", "dropped: slower (the rule)"),
    DropCause.CANNOT_BEAT: ("X", "#e67e22", "dropped: cannot beat the leader by 5% (the rule)"),
    DropCause.HALVED: ("s", "#7f8c8d", "dropped: slower half (halving)"),
    DropCause.FAILED: ("v", "#000000", "dropped: the program failed"),
    Kept.WINNER: ("*", "#27ae60", "its library's winner"),
    Kept.STAYED: ("o", "#bdc3c7", "stayed to the end")}
CAPTION = ("The race: a row per configuration, a dot per race launch it got (launch k in round "
           "k), its end marked: dropped by the verdict rule (slower than its library's leader, "
           "or unable to beat it by more than 5%), by halving (the slower half of the "
           "undecided), or because the program failed under it; the winner's star. Beside "
           "each row the median wall time of its race launches.")


def race_plot(r: TuneResult) -> Plot | None:
    """Configurations against launches, eliminations marked."""
    configs = [c for c in r.configs if r.spent[c.variant]]
    if not configs:
        return None
    styles = Styles([c.variant for c in r.configs])
    longest = max(len(c.variant) for c in configs)  # the row labels take the figure's left
    fig = _figure((4.5 + 0.055 * longest, 1.3 + 0.28 * len(configs)))
    ax = _axes(fig)
    rounds = max(r.spent.values())
    shown: set[DropCause | Kept] = set()
    for y, c in enumerate(configs):
        n = r.spent[c.variant]
        ax.plot(range(1, n + 1), [y] * n, color=styles(c.variant)["color"], marker="o",
                markersize=3, linewidth=1)
        end = Kept.WINNER if c.role else DropCause.of(c.reason) if c.dropped else Kept.STAYED
        marker, colour, label = ENDS[end]
        ax.plot([n], [y], linestyle="none", marker=marker, color=colour,
                markersize=12 if end == Kept.WINNER else 8,
                label=None if end in shown else label, zorder=3)
        shown.add(end)
        walls = r.race[c.variant]
        if walls:
            ax.annotate(seconds(statistics.median(walls)), (n, y), xytext=(9, 0),
                        textcoords="offset points", va="center", fontsize=7)
    ax.set_yticks(range(len(configs)), [c.variant for c in configs], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0.5, rounds + 1.5)
    ax.set_xticks(range(1, rounds + 1))
    ax.set_xlabel("race launches (= rounds it stayed)")
    ax.grid(axis="y", visible=False)
    _set_title(ax, f"The race: {r.launches} launches, {len(configs)} configurations")
    _legend(ax)
    return Plot(f"app-run{r.run.id}-race", FigureKind.RACE, None, program_settings(r.run).np,
                "The race", CAPTION, fig)
