"""`mpiarena releases` in words: the changes first (where each lies, how large, what ran
differently between the two releases), then the upgrade from the first release to the last,
then what was measured, skipped and where the index skips releases."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import groupby

from ..analysis.bisection import Placed, ReleaseChange
from ..analysis.build_or_release import Attribution, Follows
from ..analysis.stats import THRESHOLD
from ..analysis.verdicts import SPEED_OF_B, Judgement
from ..analysis.whatran import run_changes
from ..base.sizes import format_size
from ..impls.releases import Release, skipped
from ..model.benchmarks import BENCHMARKS
from ..runner.releases import BisectedSeries, Member, Separated
from .summary import ci_text
from .whatran import change_lines


@dataclass(frozen=True)
class ChangedRange:
    """Changes of one benchmark at one rank count over consecutive sizes, alike in where they
    lie and which way they go."""

    changes: tuple[ReleaseChange, ...]

    @property
    def label(self) -> str:
        first = self.changes[0].key
        sizes = [c.key.size for c in self.changes]
        where = "" if not BENCHMARKS[first.bench].sized else " " + (
            format_size(sizes[0]) if len(sizes) == 1 else
            f"{format_size(sizes[0])}-{format_size(sizes[-1])}")
        return f"{first.bench}{where} ({first.np} ranks)"


def stretches(changes: list[ReleaseChange]) -> Iterator[ChangedRange]:
    """The changes grouped: same benchmark, rank count, releases, direction and placing, over
    consecutive sizes."""
    def alike(c: ReleaseChange) -> tuple[object, ...]:
        return (c.key.bench, c.key.np, c.before, c.after, c.direction, c.where)
    ordered = sorted(changes, key=lambda c: (list(BENCHMARKS).index(c.key.bench), c.key.np,
                                             c.before, c.key.size))
    for _, group in groupby(ordered, key=alike):
        yield ChangedRange(tuple(group))


def _name(m: Member) -> str:
    return m.name if m.origin == "index" else f"{m.name} ({m.origin})"


def _ratio(c: ReleaseChange) -> float:
    j = c.judged
    return j.ratio if c.direction == Judgement.ABOVE else 1 / j.ratio


def _size(s: ChangedRange) -> tuple[str, str]:
    ratios = sorted(_ratio(c) for c in s.changes)
    lows = [c.judged.ci_low for c in s.changes]
    highs = [c.judged.ci_high for c in s.changes]
    if s.changes[0].direction == Judgement.BELOW:
        lows, highs = [1 / h for h in highs], [1 / lo for lo in lows]
    shown = f"{ratios[0]:.2f}x" if len(ratios) == 1 else f"{ratios[0]:.2f}-{ratios[-1]:.2f}x"
    return f"{shown} {SPEED_OF_B[s.changes[0].direction]}", ci_text(min(lows), max(highs))


def between(c: ReleaseChange, series: BisectedSeries, index: Sequence[Release]) -> list[str]:
    """The index's releases between the two a change lies between (none: index neighbours)."""
    before, after = series.members[c.before].release, series.members[c.after].release
    if before is None or after is None:
        return []
    return [r.name for r in index if before.numbers < r.numbers < after.numbers]


def change_line(s: ChangedRange, series: BisectedSeries, index: Sequence[Release]) -> str:
    """'pingpong 8 B-4 KiB (2 ranks): 1.40x slower from 5.0.0 on (against 4.3.2, 95% CI ...)';
    between releases of the series the index has others between: so said; spread: over which
    releases, and each step's size."""
    c = s.changes[0]
    m = series.members
    size, ci = _size(s)
    if c.where == Placed.LOCATED and not between(c, series, index):
        return f"{s.label}: {size} from {_name(m[c.after])} on (against {_name(m[c.before])}, {ci})"
    if c.where == Placed.LOCATED:
        return (f"{s.label}: {size} between {_name(m[c.before])} and {_name(m[c.after])} "
                f"({ci}), neighbours in the series but not on the index")
    inside = "; ".join(f"{_name(m[st.before])} -> {_name(m[st.after])} {st.judged.ratio:.2f}x "
                       f"({st.judged.outcome})" for st in c.inside) or "no half could be " \
        "judged: the release between failed there or could not be had"
    span = f"{s.label}: {size} between {_name(m[c.before])} and {_name(m[c.after])}"
    if c.where == Placed.SPREAD:
        return f"{span}, spread: no pair of neighbours carries it ({inside})"
    return (f"{span}, not placed within them ({inside}): more launches (--launches, --budget) "
            "would place it")


def neighbour_lines(c: ReleaseChange, series: BisectedSeries, index: Sequence[Release]
                    ) -> list[str]:
    """What separates two releases a change was placed between: releases of the index not in
    the series, releases the index lacks, and what ran differently."""
    m = series.members
    before, after = m[c.before], m[c.after]
    out = []
    if c.where == Placed.LOCATED and (skipped_over := between(c, series, index)):
        out.append(f"not measured: the index's {', '.join(skipped_over)} between them (bisect "
                   f"them with --from {before.name} --to {after.name})")
    elif c.where == Placed.LOCATED and before.release and after.release and (
            gap := skipped(before.release, after.release)):
        out.append(f"the index has no {gap}: the change lies in one of those or in "
                   f"{after.name}")
    separated = next((x for x in series.separated if {x.first, x.second} ==
                      {c.before, c.after}), None)
    if separated is not None:
        out += build_lines(separated, series)
    elif before.origin != after.origin:
        out.append(f"{before.origin}'s build against the {after.origin}'s: build and release "
                   "both differ, and no build lever separates them (not separable here)")
    data = series.runs[c.step]
    ids = series.variant_of[c.step]
    if data is not None and c.before in ids and c.after in ids:
        changed = change_lines(run_changes(data, data, {ids[c.before]: ids[c.after]}))
        out += changed or [f"what ran: no transport or control variable default differs "
                           f"between {_name(before)} and {_name(after)}"]
    return out


def build_lines(x: Separated, series: BisectedSeries) -> list[str]:
    """Build or release, per cell: the lever that makes the two alike, or none."""
    first, second = (_name(series.members[i]) for i in (x.first, x.second))
    out = [f"build or release ({second} run under each build lever beside {first}, run "
           f"{x.run.run_id}):"]
    for a in x.attributions:
        label = ChangedRange((_as_change(a),)).label
        tried = ", ".join(f"{name.partition(':')[2].replace('-', ' ')} {j.ratio:.2f}x "
                          f"({j.outcome})" for name, j in a.levers)
        if a.follows == Follows.BUILD and (lever := a.undone_by):
            out.append(f"  {label}: follows the build: with "
                       f"{lever.partition(':')[2].replace('-', ' ')}, {second} runs as {first} "
                       f"does ({tried})")
        elif a.follows == Follows.RELEASE:
            out.append(f"  {label}: follows the release: under every lever {second} still "
                       f"differs from {first} ({tried})")
        else:
            out.append(f"  {label}: not separable here ({tried or 'no lever measured it'})")
    if not x.attributions:
        out.append("  no cell differed when measured again beside the levers")
    return out


def _as_change(a: Attribution) -> ReleaseChange:
    return ReleaseChange(a.key, 0, 1, a.plain.outcome, a.plain, Placed.LOCATED, 0)


def upgrade_line(series: BisectedSeries) -> str:
    """'4.0.3 -> 5.0.2: 12 cells slower, 3 faster, 58 within 5%, 4 undecided'."""
    m = series.members
    counts = {o: sum(1 for j in series.bisection.ends.values() if j.outcome == o)
              for o in Judgement}
    return (f"{_name(m[0])} -> {_name(m[-1])}: {counts[Judgement.ABOVE]} cells slower, "
            f"{counts[Judgement.BELOW]} faster, {counts[Judgement.SAME]} within "
            f"{THRESHOLD:.0%}, {counts[Judgement.OPEN]} undecided")


def lines(series: BisectedSeries, index: Sequence[Release] = ()) -> list[str]:
    """Everything `mpiarena releases` prints about a bisected series, the answer first."""
    found = series.bisection
    m = series.members
    out: list[str] = []
    if not found.ends:
        return [f"nothing measured: {_name(m[0])} and {_name(m[-1])} could not both be had"]
    if not found.differs:
        out.append(f"no change decided between {_name(m[0])} and {_name(m[-1])} in any cell: "
                   "nothing to bisect")
    ranges = list(stretches(found.changes))
    out += [change_line(s, series, index) for s in ranges]
    out.append(upgrade_line(series))
    pairs = {(s.changes[0].before, s.changes[0].after): s.changes[0] for s in ranges}
    for (before, after), c in sorted(pairs.items()):
        out.append(f"between {_name(m[before])} and {_name(m[after])}:")
        out += [f"  {x}" for x in neighbour_lines(c, series, index)]
    located = sum(1 for s in stretches(found.changes) if s.changes[0].where == Placed.LOCATED
                  and not between(s.changes[0], series, index))
    runs = [r.run_id for r in series.runs if r is not None]
    levers = [x.run.run_id for x in series.separated]
    out.append(f"measured {len(found.measured)} of {len(m)} releases in {len(found.steps)} "
               f"steps ({located} changes located), stored as runs "
               f"{', '.join(map(str, runs)) or 'none'}" +
               (f"; build levers: runs {', '.join(map(str, levers))}" if levers else ""))
    for i, why in series.unavailable.items():
        out.append(f"skipped {_name(m[i])}: {why}")
    return out
