"""`run --dry-run` in words: the plan's variants, cells, launches, comparisons and budget, and
what it would take here."""

from __future__ import annotations

from ..analysis.estimate import TimeEstimate, planned
from ..base.sizes import format_size
from ..base.units import duration
from ..platform.plan import Plan
from ..suites import label


def lines(plan: Plan, est: TimeEstimate, store: str) -> list[str]:
    """The plan, one line per part; the estimate last."""
    s = plan.suite
    shares = planned(plan)
    cells = {(asked.cell, rnd.np) for rnd in plan.rounds for session in rnd.sessions
             for asked, _ in session.turns}
    launches = sum(p.launches for p in shares)
    sizes = ", ".join(format_size(x) for x in s.sizes)
    nps = ", ".join(map(str, sorted({rnd.np for rnd in plan.rounds})))
    out = [f"Plan of {label(s.name)} (nothing measured; seed {plan.seed}):",
           f"  variants ({len(shares)}): {', '.join(p.variant for p in shares)}",
           f"  cells: {len(cells)} (benchmarks {', '.join(s.benchmarks)}; sizes {sizes}; "
           f"ranks {nps})",
           f"  launches: {s.launches} of each variant per rank count, {launches} in all with the "
           f"start-up launches; {sum(p.cells for p in shares)} cell-launches",
           f"  comparisons: {plan.comparisons}"]
    if s.budget:
        out.append(f"  budget: {duration(s.budget)}: it measures for up to that long in all, "
                   "the launches above first, then more for the comparisons of message passing "
                   "still undecided")
    else:
        out.append("  budget: none: only the launches above")
    if est.seconds is None:
        out.append(f"  estimate: none: no earlier run on this machine in {store} stored where "
                   "its time went; run once, then ask again")
        return out
    guessed = f"; {', '.join(est.unmeasured)} at the others' median, unmeasured here" \
        if est.unmeasured else ""
    total = max(est.seconds, s.budget)
    out.append(f"  estimate: about {duration(est.seconds)} for these launches (from "
               f"{est.runs} earlier run{'s' if est.runs != 1 else ''} on this machine in "
               f"{store}{guessed})" + (f"; up to {duration(total)} with the budget"
                                       if s.budget else ""))
    return out
