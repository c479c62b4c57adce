"""`mpiarena explain` in words: one clause per size range, each quoting the stored cells and the
fitted parameters it rests on, "cannot tell" where the verdict rule does not decide."""

from __future__ import annotations

from ..analysis.comparison import Comparison
from ..analysis.explain import Explanation, Parameter, Range
from ..analysis.models import Regime
from ..analysis.verdicts import Judgement
from ..base.sizes import format_size
from ..base.units import seconds
from .models import shape_runs
from .summary import ci_text, rule_text

PARAMETER_WORDS = {"alpha": "start-up alpha", "beta": "cost per byte beta",
                   "o_s": "send overhead o_s", "o_r": "receive overhead o_r", "g": "gap g(s)"}


def _value(name: str, v: float) -> str:
    return f"{v * 1e9:.3g} ns/B" if name == "beta" else seconds(v)


def _lower(e: Explanation, j: Comparison) -> str | None:
    """The variant a decided comparison (b's over a's) says is lower; None if undecided."""
    return {Judgement.ABOVE: e.a, Judgement.BELOW: e.b}.get(j.outcome)


def _cells_text(e: Explanation, r: Range) -> str:
    j = r.measured
    ratios = [fb / fa for fa, fb in r.figures]
    spread = f", cells {min(ratios):.2f}-{max(ratios):.2f}x" if len(ratios) > 1 else ""
    cells = f"{len(ratios)} cell{'s' if len(ratios) > 1 else ''}"
    lower = _lower(e, j)
    said = f"{lower} is faster" if lower else "indistinguishable" if j.outcome == Judgement.SAME \
        else "cannot tell who is faster"
    return (f"{e.b}/{e.a} {j.ratio:.2f}x over {cells} ({ci_text(j.ci_low, j.ci_high)}{spread}): "
            f"{said}")


def parameter_text(e: Explanation, p: Parameter) -> str:
    j = p.judged
    values = f"{_value(p.name, p.a)} ({e.a}) against {_value(p.name, p.b)} ({e.b})"
    words = PARAMETER_WORDS[p.name] + (f" at {format_size(p.at)}" if p.at is not None else "")
    lower = _lower(e, j)
    said = f"{lower}'s is lower" if lower else "the same within the threshold" \
        if j.outcome == Judgement.SAME else "cannot tell"
    return f"{words} {values}: {said} ({e.b}/{e.a} {j.ratio:.2f}, {ci_text(j.ci_low, j.ci_high)})"


def range_clause(e: Explanation, r: Range) -> str:
    """One size range: what was measured, what the models say, and which term makes the
    difference at the range's last size."""
    span = format_size(r.first) if r.first == r.last else \
        f"{format_size(r.first)}-{format_size(r.last)}"
    text = f"{span}: {_cells_text(e, r)}"
    if r.parameters:
        text += "; " + "; ".join(parameter_text(e, p) for p in r.parameters)
    else:
        text += "; no parameter of both lines to compare (a regime's intercept is not a start-up)"
    if r.per_byte_share == r.per_byte_share:  # not nan
        term = "cost per byte" if r.per_byte_share >= 0.5 else \
            "start-up" if r.first_regime else "intercept"
        share = r.per_byte_share if r.per_byte_share >= 0.5 else 1 - r.per_byte_share
        text += f"; at {format_size(r.last)} the lines differ {share:.0%} by {term}"
    if r.shapes_a or r.shapes_b:
        text += "; closest algorithm shapes from the pingpong models: " + "; ".join(
            f"{v} {', '.join(run.text() for run in shape_runs(list(fits)))}"
            for v, fits in ((e.a, r.shapes_a), (e.b, r.shapes_b)) if fits)
    return text


def _switches(variant: str, found: tuple[Regime, ...]) -> str:
    if not found:
        return f"{variant} none"
    return f"{variant} at " + ", ".join(
        f"{format_size(r.first)} ({r.opened_by.kind} x{r.opened_by.jump:.1f})"
        for r in found if r.opened_by)


def _undecided(e: Explanation) -> list[str]:
    """How many comparisons stay open, and about how many launches would decide them."""
    judged = e.judged()
    open_ = [j for j in judged if j.outcome == Judgement.OPEN]
    if not open_:
        return []
    needed = sorted(j.needed for j in open_ if j.needed)
    more = (f"; about {needed[len(needed) // 2]} launches per variant would decide half of "
            f"those that more launches can (rerun with --launches "
            f"{needed[len(needed) // 2]})" if needed else "")
    lo, hi = min(j.launches_a for j in open_), max(j.launches_a for j in open_)
    return [f"Cannot tell: {len(open_)} of {len(judged)} comparisons, at "
            f"{lo if lo == hi else f'{lo}-{hi}'} launches a side{more}"]


def explanation_lines(e: Explanation) -> list[str]:
    """What `mpiarena explain` prints."""
    lines = [f"Why {e.a} and {e.b} differ on {e.bench} at {e.np} ranks (run {e.run_id}): "
             f"t = alpha + beta * size fitted per regime, each parameter's interval over the "
             f"launches' own fits; {rule_text('this explanation')}"]
    lines += [range_clause(e, r) for r in e.ranges]
    lines.append(f"Protocol switches: {_switches(e.a, e.switches_a)}; "
                 f"{_switches(e.b, e.switches_b)}")
    if e.loggp:
        lines.append("LogGP (the loggp benchmark's cells): "
                     + "; ".join(parameter_text(e, p) for p in e.loggp))
    if e.floor:
        lines.append(f"Against the machine floor's alpha of {seconds(e.floor[0].floor)} (what "
                     "lies beyond it is the library's software path): " + "; ".join(
                         f"{t.variant} {seconds(t.alpha)}, {seconds(t.software)} beyond it"
                         for t in e.floor))
    lines += _undecided(e)
    lines.append(f"Every figure above is stored: mpiarena show {e.run_id} --tables "
                 f"(the {e.bench} table), --models for the fits")
    return lines
