"""The warning that other work shared the machine with a run's launches."""

from __future__ import annotations

from ..analysis.interference import Finding, finding
from ..store.results import RunData

ADVICE = "stop the other work or rerun with --wait-quiet 60"


def warning_lines(found: Finding) -> list[str]:
    """At most three lines: the launches others took more than the threshold of the machine
    from, by variant; the launches --wait-quiet gave up waiting for a quiet machine for; and
    the launches that began while another mpiarena run measured here."""
    lines = []
    if found.above:
        worst = "; ".join(f"{v.variant}: {v.launches} launch{'es' if v.launches != 1 else ''}, "
                          f"up to {v.worst:.0%}" for v in found.variants())
        lines.append(f"warn: interference: other work took more than {found.busy:.0%} of the "
                     f"machine during {len(found.above)} of {len(found.launches)} launches "
                     f"({worst}): their figures may be slowed; {ADVICE}")
    if found.gave_up:
        lines.append(f"warn: interference: --wait-quiet gave up on a quiet machine before "
                     f"{found.gave_up} launches; find what keeps it busy (top) or wait "
                     "longer")
    if found.shared:
        lines.append(f"warn: interference: another mpiarena run was measuring on this machine "
                     f"when {len(found.shared)} of {len(found.launches)} launches began: their "
                     "figures share it with that run; measure one run at a time")
    return lines


def run_lines(data: RunData) -> list[str]:
    """What a run's first lines say of its machine: the interference its launches recorded."""
    return warning_lines(finding(data.jobs))
