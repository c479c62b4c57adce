"""One line per cell of a tuning run: which forced algorithm the library's default behaves
like, which it is decidedly faster or slower than, and which are undecided."""

from __future__ import annotations

from rich.console import Console

from ..analysis.fingerprint import Fingerprint, Unlike
from ..analysis.stats import CONFIDENCE
from ..analysis.verdicts import Speed
from ..base.sizes import format_size


def _unlike(u: Unlike) -> str:
    if u.speed == Speed.SLOWER:
        return f"{u.ratio:.2f}x slower than {u.algorithm} ({CONFIDENCE:.0%} CI " \
               f"{u.ci_low:.2f}-{u.ci_high:.2f})"
    return f"{1 / u.ratio:.2f}x faster than {u.algorithm} ({CONFIDENCE:.0%} CI " \
           f"{1 / u.ci_high:.2f}-{1 / u.ci_low:.2f})"


def line(f: Fingerprint) -> str:
    """E.g. 'x bcast 64 KiB, 2 ranks: the default behaves like binomial (indistinguishable),
    1.30x slower than scatter_allgather (95% CI 1.20-1.40); undecided against pipeline'."""
    where = f"{f.impl_id} {f.coll} {format_size(f.size)}, {f.np} ranks: the default"
    said = [f"behaves like {', '.join(f.like)} (indistinguishable)"] if f.like else \
        [] if f.open else ["behaves like none of the algorithms measured"]
    said += [_unlike(u) for u in f.unlike]
    said = [", ".join(said)] if said else []
    if f.open:
        said.append(f"undecided against {', '.join(f.open)}")
    return f"{where} {'' if f.like or not f.open else 'is '}{'; '.join(said)}"


def render(found: list[Fingerprint], out: Console) -> None:
    if not found:
        return
    out.print("What each default behaves like, judged against every forced algorithm (the same "
              "rule, one family across the run):")
    for f in found:
        out.print(f"  {line(f)}", soft_wrap=True, markup=False, highlight=False)
