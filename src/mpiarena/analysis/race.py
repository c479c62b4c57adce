"""The rule of `program --tune`'s race, and its verification.

Racing (F-race, successive halving): every configuration still in the race gets one launch a
round; after each round each library's configurations are compared with its leader (the lowest
median wall time so far). Every round is a look at the data, so a configuration leaves the race
only where the look is paid for (`stats.look`: a Haybittle-Peto boundary, LOOK_ALPHA a look): the
boundary calls it slower than the leader beyond the threshold, or its 1 - LOOK_ALPHA interval
against the leader lies above 1 / (1 + threshold) (whatever it gains is within the threshold).
After each round of HALVING_ROUNDS the slower half of the contenders still undecided (the
leader among them) is dropped too, successive halving's rungs, but of that half only those the
launch test calls slower than the leader (one-sided, HALVING_ALPHA, no margin): launches double
between two rungs, and a configuration two launches happened to slow is kept. A configuration
whose launch failed is dropped with its reason. The race ends when each library has one
configuration left, or every other one is the same as the leader or beyond the reach of the
rounds left (its ratio on the threshold, or more launches needed than max_rounds), or after
max_rounds. A grid (eliminate False) drops nothing: every configuration gets a launch every
round until the same rule has decided every one against the leader, or max_rounds. Whatever
the race picks stands only by the verification: each winner's fresh launches against its
library's default, judged as one family.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from .comparison import Comparison, Why
from .program import launch_sample
from .stats import LOOK_ALPHA, THRESHOLD, Pair, Sample, center, fastest, judge, look, read_pair
from .verdicts import Judgement

MAX_ROUNDS = 20
# the rounds after which the slower half of the undecided contenders is dropped: the survivors'
# launches double between two halvings, as successive halving's rungs do
HALVING_ROUNDS = (2, 4, 8, 16)
HALVING_ALPHA = 0.1  # two-sided: a rung drops a configuration the test calls slower at 5%


def _sample(walls: list[float]) -> Sample:
    return launch_sample(walls, False)


class DropCause(StrEnum):
    """How a configuration left the race; its stored reason begins with these words."""

    SLOWER = "slower than"
    CANNOT_BEAT = "cannot beat"
    HALVED = "halved out"
    FAILED = "the program failed"

    @classmethod
    def of(cls, reason: str) -> DropCause:
        """The cause a stored reason gives (the store keeps the sentence alone)."""
        return next(cause for cause in cls if reason.startswith(cause))


@dataclass(frozen=True)
class Dropped:
    config: str
    round: int  # the round after which it left the race, from 1
    cause: DropCause
    detail: str  # what the reason says after the cause's words

    @property
    def reason(self) -> str:
        """The sentence printed and stored."""
        return f"{self.cause}{self.detail}"


class Race:
    """The configurations of every library racing, each library's against its own leader."""

    def __init__(self, entrants: dict[str, list[str]], max_rounds: int = MAX_ROUNDS,
                 eliminate: bool = True, halving: bool = True):
        self.entrants = entrants  # library -> its configurations, its default first
        self.max_rounds = max_rounds
        self.eliminate = eliminate  # False: a full grid, judged by the same rule, drops none
        self.halving = halving  # False: the rule's decisions alone
        self.walls: dict[str, list[float]] = {c: [] for cs in entrants.values() for c in cs}
        self.dropped: dict[str, Dropped] = {}
        self.decided: set[str] = set()  # out of contention against the leader, last round
        self.settled: set[str] = set()  # decided, the same as the leader or beyond reach
        self.rounds = 0
        self.spent = 0  # launches, failed ones too

    def alive(self, library: str | None = None) -> list[str]:
        impls = [library] if library else list(self.entrants)
        return [c for impl in impls for c in self.entrants[impl] if c not in self.dropped]

    def record(self, config: str, wall: float | None, reason: str = "") -> None:
        """One launch of config: its wall seconds, or None and why it failed (it is dropped)."""
        self.spent += 1
        if wall is None or not math.isfinite(wall):
            self.dropped[config] = Dropped(config, self.rounds + 1, DropCause.FAILED, f": {reason}")
        else:
            self.walls[config].append(wall)

    def leader(self, library: str) -> str | None:
        """The library's fastest configuration so far, by the estimate its comparisons print
        (`stats.fastest`)."""
        timed = {c: _sample(self.walls[c]) for c in self.alive(library) if self.walls[c]}
        return fastest(timed) if timed else None

    def _center(self, config: str) -> float:
        return center(_sample(self.walls[config]))

    def close_round(self) -> list[Dropped]:
        """Judge every library's configurations against its leader; drop those out of
        contention, and on a halving round the slower half of the undecided contenders."""
        self.rounds += 1
        compared = []
        for library in self.entrants:
            lead = self.leader(library)
            compared += [(lead, c) for c in self.alive(library) if lead and c != lead]
        judged = look([Pair(_sample(self.walls[a]), _sample(self.walls[b]))
                       for a, b in compared])
        decided = {c: (lead, j) for (lead, c), j in zip(compared, judged, strict=True)
                   if _out_of_contention(j)}
        self.decided = set(decided)
        self.settled = self.decided | {c for (_, c), j in zip(compared, judged, strict=True)
                                       if j.outcome == Judgement.SAME or self._beyond_reach(j)}
        if not self.eliminate:
            return []
        out = [_out(c, self.rounds, lead, j) for c, (lead, j) in decided.items()]
        if self.halving and self.rounds in HALVING_ROUNDS:
            out += self._halve(set(decided))
        self.dropped.update((d.config, d) for d in out)
        return out

    def _halve(self, decided: set[str]) -> list[Dropped]:
        """Each library's slower half of its contenders (the leader and those undecided)."""
        out = []
        for library in self.entrants:
            lead = self.leader(library)
            if lead is None:
                continue
            undecided = sorted((c for c in self.alive(library) if c != lead and
                                c not in decided and self.walls[c]), key=self._center)
            contenders = len(undecided) + 1
            for c in undecided[(contenders + 1) // 2 - 1:]:
                read = read_pair(_sample(self.walls[lead]), _sample(self.walls[c]))
                if read.ratio > 1 and read.p() < HALVING_ALPHA:
                    out.append(Dropped(c, self.rounds, DropCause.HALVED, ": in the slower half "
                                       f"of the {contenders} contenders still undecided, "
                                       f"{read.ratio:.2f}x the wall time of {lead} (p = "
                                       f"{read.p():.2g}, {len(self.walls[c])} launches)"))
        return out

    def _beyond_reach(self, j: Comparison) -> bool:
        """An open comparison no launches within the race's rounds would decide: its ratio
        sits on the threshold, or it would need more launches a side than max_rounds."""
        return j.outcome == Judgement.OPEN and j.why != Why.LAUNCHES and \
            (j.needed == 0 or j.needed > self.max_rounds)

    @property
    def finished(self) -> bool:
        """The race: every library down to its leader and comparisons settled; the grid: every
        configuration decided against its leader; either: max_rounds."""
        done = self.settled if self.eliminate else self.decided
        return self.rounds >= self.max_rounds or all(
            set(self.alive(impl)) - {self.leader(impl)} <= done for impl in self.entrants)

    def winners(self) -> dict[str, str]:
        """library -> its leader (libraries whose every configuration failed: none)."""
        return {impl: lead for impl in self.entrants if (lead := self.leader(impl))}


def _out_of_contention(j: Comparison) -> bool:
    """The look calls it slower than the leader, or it can no longer beat the leader by more
    than the threshold (its ratio's whole interval at the look above 1 / (1 + THRESHOLD))."""
    return j.outcome == Judgement.ABOVE or j.ci_low > 1 / (1 + THRESHOLD)


def _out(config: str, round_: int, lead: str, j: Comparison) -> Dropped:
    measured = (f"{j.ratio:.2f}x its wall time ({1 - LOOK_ALPHA:.1%} CI {j.ci_low:.2f}-"
                f"{j.ci_high:.2f}, {j.launches_b} launches)")
    if j.outcome == Judgement.ABOVE:
        return Dropped(config, round_, DropCause.SLOWER, f" {lead}: {measured}")
    return Dropped(config, round_, DropCause.CANNOT_BEAT,
                   f" {lead} by more than {THRESHOLD:.0%}: {measured}")


@dataclass(frozen=True)
class Verified:
    """A configuration's fresh launches against a library's default's."""

    library: str  # whose default
    default: str
    setting: str
    comparison: Comparison  # the setting's walls over the default's

    @property
    def speedup(self) -> float:
        """The default's wall over the setting's (the comparison's inverse): above 1, the
        setting wins."""
        return 1 / self.comparison.ratio if self.comparison.ratio else math.nan

    @property
    def ci_low(self) -> float:
        return 1 / self.comparison.ci_high if self.comparison.ci_high else math.inf

    @property
    def ci_high(self) -> float:
        return 1 / self.comparison.ci_low if self.comparison.ci_low else math.inf

    @property
    def p_adjusted(self) -> float:
        return self.comparison.p_adjusted

    @property
    def gain(self) -> bool:
        """The verdict rule backs a gain: the setting decided faster, beyond the threshold."""
        return self.comparison.outcome == Judgement.BELOW

    @property
    def launches(self) -> int:
        return self.comparison.launches


def verify(walls: dict[str, list[float]],
           pairs: list[tuple[str, str, str]]) -> list[Verified]:
    """(library, default, setting) pairs judged as one family on their launches."""
    judged = judge([Pair(_sample(walls.get(d, [])), _sample(walls.get(s, [])))
                    for _, d, s in pairs])
    return [Verified(impl, d, s, j)
            for (impl, d, s), j in zip(pairs, judged, strict=True)]


def verification_pairs(winners: dict[str, str], overall: str | None,
                       defaults: dict[str, str]) -> list[tuple[str, str, str]]:
    """Each library's winner against its default (where it is not the default), and the
    overall winner against every other library's default."""
    pairs = [(impl, defaults[impl], w) for impl, w in winners.items() if w != defaults[impl]]
    if overall is not None:
        pairs += [(impl, d, overall) for impl, d in defaults.items()
                  if winners.get(impl) != overall and d != overall]
    return pairs
