"""The guidelines section: per library, whether its collectives lose to mock-ups of themselves
built from its own calls (see mpiarena.model.guidelines), and what a violation means for the user.
The decisions are analysis.guideline_checks'; this module only words them."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..analysis.guidelines import GuidelineCheck, guideline_checks, guidelines_unchecked
from ..analysis.stats import CONFIDENCE, CORRECTION
from ..analysis.verdicts import GuidelineResult
from ..base import units
from ..base.sizes import format_size
from ..model.guidelines import BY_MOCKUP, GUIDELINES
from ..store.results import RunData
from .summary import rule_text

LEAD = ("A collective should be no slower than a mock-up of it built from the same library's "
        "other calls, on the same buffers and sizes and timed the same way (Träff, Gropp and "
        "Thakur 2010; PGMPI). 'violated': the mock-up ran faster by the verdicts' rule; 'held': "
        "the collective ran faster by that rule, or the two are indistinguishable. The rule: "
        + rule_text("every check of the run", "violated"))


@dataclass
class VariantChecks:
    """One variant's checks: counts, each violation, advice and what it could not check."""

    variant: str
    checked: int = 0
    held: int = 0
    violated: int = 0
    undecided: int = 0
    leaning: int = 0  # undecided ones where the collective looks faster
    violations: list[str] = field(default_factory=list)
    advice: list[str] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)

    @property
    def counts(self) -> str:
        lean = f" ({self.leaning} with the collective looking faster)" if self.leaning else ""
        return (f"{self.checked} checked: {self.held} held, {self.violated} violated, "
                f"{self.undecided} undecided{lean}")


@dataclass
class Guidelines:
    lead: str
    variants: list[VariantChecks]

    @property
    def violations(self) -> int:
        return sum(row.violated for row in self.variants)


def violation_text(c: GuidelineCheck) -> str:
    bench, size, np_ = c.key
    return (f"{c.guideline.text} at {format_size(size)}, {np_} ranks: {bench} "
            f"{units.seconds(c.collective)}, the mock-up {units.seconds(c.mockup)}, "
            f"{c.ratio:.2f}x ({CONFIDENCE:.0%} CI {c.ci_low:.2f}-{c.ci_high:.2f}, "
            f"q={c.p_adjusted:.2g} after {CORRECTION}, {c.launches} launches)")


def _span(values: list[int]) -> str:
    values = sorted(set(values))
    if len(values) == 1:
        return format_size(values[0])
    return ", ".join(format_size(v) for v in values)


def advice_text(variant: str, checks: list[GuidelineCheck]) -> str:
    """What the violations of one guideline mean for a user of this variant."""
    g = checks[0].guideline
    where = "; ".join(
        f"{_span([c.key.size for c in checks if c.key.np == np_])} on {np_} ranks"
        for np_ in sorted({c.key.np for c in checks}))
    low, high = min(c.saving for c in checks), max(c.saving for c in checks)
    saves = f"{low:.0%}" if round(low, 2) == round(high, 2) else f"{low:.0%}-{high:.0%}"
    instead = " then ".join(f"MPI_{p.capitalize()}" for p in g.parts)
    return (f"{variant}: at {where}, {instead} instead of MPI_{g.collective.capitalize()} saves "
            f"{saves} of its time; worth reporting to the library, and a tuning hint meanwhile")


def guidelines(data: RunData) -> Guidelines | None:
    """The section, or None when the run measured no collective together with a mock-up."""
    asked = {k.bench for k in data.cells} & set(BY_MOCKUP)
    if not asked:
        return None
    checks = guideline_checks(data)
    unchecked = guidelines_unchecked(data)
    out = []
    for variant in data.variants:
        mine = [c for c in checks if c.variant == variant]
        held, violated, undecided = (sum(c.outcome == o for c in mine)
                                     for o in (GuidelineResult.HELD, GuidelineResult.VIOLATED,
                                               GuidelineResult.UNDECIDED))
        row = VariantChecks(variant, len(mine), held, violated, undecided,
                            sum(c.leaning for c in mine))
        for g in GUIDELINES:
            bad = [c for c in mine if c.guideline == g and c.outcome == GuidelineResult.VIOLATED]
            row.violations += [violation_text(c) for c in bad]
            if bad:
                row.advice.append(advice_text(variant, bad))
            if (g.mockup, variant) in unchecked and g.mockup in asked:
                row.unchecked.append(f"{g.text}: n/a ({unchecked[g.mockup, variant]})")
        if row.checked or row.unchecked:
            out.append(row)
    return Guidelines(LEAD, out)
