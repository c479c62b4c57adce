"""Fitted models in words: per variant its regimes, each line's parameters with their
intervals over launches and how well the line fits."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..analysis.floor import LatencyTerm
from ..analysis.loggp import LogGPModel, ParameterFigure
from ..analysis.models import RESIDUAL_TARGET, Estimate, P2pModel, Regime
from ..analysis.predict import TARGET, CellFit, summary
from ..base.sizes import format_size
from ..base.units import bandwidth, seconds


def heading(models: dict[str, P2pModel]) -> str:
    first = next(iter(models.values()))
    return (f"Models: t = alpha + beta * size per regime of {first.bench} at {first.np} ranks, "
            f"fitted to the cells' figures (relative least squares); intervals: 95% over the "
            f"launches' own fits; residuals: fit / figure - 1, worst and RMS (target "
            f"{RESIDUAL_TARGET:.0%}); regimes split at protocol switches, and where one line "
            f"misses by more than the target")


@dataclass(frozen=True)
class RegimeText:
    """One regime's line as both the terminal and the HTML report show it."""

    span: str
    why: str
    sizes: int
    alpha: str
    beta: str
    fit: str
    misfit: bool


def _interval(e: Estimate, text: str) -> str:
    return f" ({text})" if math.isfinite(e.low) else " (no interval: no launch measured it all)"


def regime_text(r: Regime) -> RegimeText:
    why = (f"after a {r.opened_by.kind} switch" if r.opened_by else
           "split where one line misfit" if r.misfit_split else "first regime")
    alpha = f"alpha {seconds(r.alpha.value)}" + _interval(
        r.alpha, f"{seconds(r.alpha.low)} to {seconds(r.alpha.high)}")
    rate = f" = {bandwidth(r.bandwidth)}" if r.bandwidth else ""
    beta = f"beta {r.beta.value * 1e9:.3g} ns/B" + _interval(
        r.beta, f"{r.beta.low * 1e9:.3g}-{r.beta.high * 1e9:.3g}") + rate
    fit = f"residuals worst {r.worst_residual:.1%}, RMS {r.rms_residual:.1%}"
    if not all(e.low <= e.value <= e.high for e in (r.alpha, r.beta) if math.isfinite(e.low)):
        fit += "; the launches' own fits disagree with the fit to the figures (a noisy regime)"
    return RegimeText(f"{format_size(r.first)}-{format_size(r.last)}", why, len(r.sizes), alpha,
                      beta, fit, r.worst_residual > RESIDUAL_TARGET)


def regime_line(r: Regime) -> str:
    t = regime_text(r)
    flag = f" [above the {RESIDUAL_TARGET:.0%} target]" if t.misfit else ""
    return f"  {t.span} ({t.why}, {t.sizes} sizes): {t.alpha}, {t.beta}; {t.fit}{flag}"


def model_lines(models: dict[str, P2pModel]) -> list[str]:
    """What `show --models` prints for one benchmark."""
    if not models:
        return []
    lines = [heading(models)]
    for variant, m in models.items():
        lines.append(f"{variant}:")
        lines += [regime_line(r) for r in m.regimes]
    return lines


def latency_lines(terms: list[LatencyTerm]) -> list[str]:
    """Each library's latency term against the machine floor's, in words."""
    if not terms:
        return []
    lines = [f"Latency terms against the machine floor's alpha of {seconds(terms[0].floor)} "
             "(what lies beyond it is the library's software path):"]
    for t in terms:
        share = f" ({t.software / t.alpha:.0%} of it)" if t.alpha > 0 else ""
        lines.append(f"  {t.variant}: alpha {seconds(t.alpha)}, {seconds(t.software)} beyond "
                     f"the floor{share}")
    return lines


PREDICTION_HEADING = (
    f"Collectives predicted from each variant's pingpong model under textbook algorithm "
    f"shapes (a round costs its largest message's time, an exchange round the sendrecv "
    f"model's where the run measured sendrecv; the reductions' arithmetic, local "
    f"copies and contention are left out): per size range the closest shape and how far its "
    f"prediction is from the measurement; target: within {TARGET:.0%}")


@dataclass(frozen=True)
class ShapeRun:
    """Neighbouring sizes of one collective whose closest shape is the same."""

    first: int
    last: int
    best: str
    alike: tuple[str, ...]
    errors: tuple[float, ...]

    def text(self) -> str:
        span = format_size(self.first) if self.first == self.last else \
            f"{format_size(self.first)}-{format_size(self.last)}"
        lo, hi = min(self.errors), max(self.errors)
        off = f"{lo:+.0%}" if lo == hi else f"{lo:+.0%} to {hi:+.0%}"
        same = f" (the model cannot tell it from {', '.join(self.alike)})" if self.alike else ""
        return f"{span} {self.best}{same}: {off}"


def shape_runs(fits: list[CellFit]) -> list[ShapeRun]:
    """One collective's fits by size, joined where the closest shape stays the same."""
    out: list[ShapeRun] = []
    for f in sorted(fits, key=lambda f: f.size):
        if f.best is None:
            continue
        if out and out[-1].best == f.best and out[-1].alike == f.alike:
            last = out[-1]
            out[-1] = ShapeRun(last.first, f.size, f.best, f.alike, (*last.errors, f.error))
        else:
            out.append(ShapeRun(f.size, f.size, f.best, f.alike, (f.error,)))
    return out


def prediction_lines(fits: list[CellFit], cores: int) -> list[str]:
    """Per variant: its share within the target per rank count, then per collective and rank
    count the closest shapes by size range."""
    if not fits:
        return []
    lines = [PREDICTION_HEADING]
    for variant in sorted({f.variant for f in fits}):
        mine = [f for f in fits if f.variant == variant]
        shares = "; ".join(
            f"{s.np} ranks {s.within} of {s.cells} cells"
            + (f" [oversubscribed: {s.np} ranks on {cores} cores, polling libraries measure "
               f"the scheduler]" if s.oversubscribed else "") for s in summary(mine))
        lines.append(f"{variant}: within {TARGET:.0%}: {shares}")
        for bench, np_ in sorted({(f.bench, f.np) for f in mine}):
            runs = shape_runs([f for f in mine if f.bench == bench and f.np == np_])
            lines.append(f"  {bench}, {np_} ranks: " + "; ".join(r.text() for r in runs))
    return lines


LOGGP_HEADING = (
    "LogGP as Netgauge measures it (loggp benchmark, 2 ranks): L = half PRTT(1,0,s) at the "
    "smallest size; per size o_s (time inside a send), o_r (time inside a receive whose "
    "message is there) and the gap g(s) of a burst; g and G fitted as g(s) = g + (s - 1) G per "
    "size range; 95% intervals over launches; sizes that are powers of two (export --summary "
    "has every size)")


def figure_text(f: ParameterFigure) -> str:
    return f"{seconds(f.value)} ({seconds(f.low)} to {seconds(f.high)})"


def loggp_lines(models: dict[str, LogGPModel]) -> list[str]:
    """What `show --models` prints for a run that measured loggp."""
    if not models:
        return []
    lines = [LOGGP_HEADING]
    for variant, m in models.items():
        lines.append(f"{variant}: L {figure_text(m.L)}")
        lines += [f"  {format_size(p.size)}: o_s {figure_text(p.o_s)}, o_r "
                  f"{figure_text(p.o_r)}, g(s) {figure_text(p.g)}" for p in m.points
                  if p.size & (p.size - 1) == 0]  # powers of two (and 0): export has all
        for r in m.ranges:
            rate = f" = {bandwidth(1 / r.G.value)}" if r.G.value > 0 else ""
            lines.append(
                f"  g, G over {format_size(r.sizes[0])}-{format_size(r.sizes[-1])}: g "
                f"{figure_text(r.g)}, G {r.G.value * 1e9:.3g} ns/B ({r.G.low * 1e9:.3g}-"
                f"{r.G.high * 1e9:.3g}){rate}; residuals worst {r.max_residual:.1%}, RMS "
                f"{r.rms_residual:.1%}")
    return lines
