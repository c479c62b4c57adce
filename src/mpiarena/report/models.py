"""Fitted models in words: per variant its regimes, each line's parameters with their
intervals over launches and how well the line fits."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..analysis.models import RESIDUAL_TARGET, Estimate, P2pModel, Regime
from ..sizes import format_size
from ..units import bandwidth, seconds


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
    rate = f" = {bandwidth(1 / r.beta.value)}" if r.beta.value > 0 else ""
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
