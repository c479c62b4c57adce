"""The rule of `app --tune`'s race, and its verification.

Racing (F-race, successive halving): every configuration still in the race gets one launch a
round; after each round each library's configurations are judged against its leader (the
lowest median wall time so far) by `stats.judge`, every comparison of the round one family; one
the rule calls slower (decided, beyond the threshold) is dropped, and a configuration whose
launch failed is dropped with its reason. The race ends when each library has one configuration
left or every other one is judged the same as its leader or beyond the reach of the rounds
left (its ratio on the threshold, or more launches needed than MAX_ROUNDS), or after
MAX_ROUNDS. The
verification judges each winner's fresh launches against its library's default, one family.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .program import launch_sample
from .stats import Judged, Pair, Sample, center, judge

MAX_ROUNDS = 20


def _sample(walls: list[float]) -> Sample:
    return launch_sample(walls, False)


@dataclass(frozen=True)
class Dropped:
    config: str
    round: int  # the round after which it left the race, from 1
    reason: str


class Race:
    """The configurations of every library racing, each library's against its own leader."""

    def __init__(self, entrants: dict[str, list[str]], max_rounds: int = MAX_ROUNDS,
                 eliminate: bool = True):
        self.entrants = entrants  # library -> its configurations, its default first
        self.max_rounds = max_rounds
        self.eliminate = eliminate  # False: a full grid, judged by the same rule, drops none
        self.walls: dict[str, list[float]] = {c: [] for cs in entrants.values() for c in cs}
        self.dropped: dict[str, Dropped] = {}
        self.settled: set[str] = set()  # judged slower than or the same as the leader, last round
        self.rounds = 0
        self.spent = 0  # launches, failed ones too

    def alive(self, library: str | None = None) -> list[str]:
        libraries = [library] if library else list(self.entrants)
        return [c for lib in libraries for c in self.entrants[lib] if c not in self.dropped]

    def record(self, config: str, wall: float | None, reason: str = "") -> None:
        """One launch of config: its wall seconds, or None and why it failed (it is dropped)."""
        self.spent += 1
        if wall is None or not math.isfinite(wall):
            self.dropped[config] = Dropped(config, self.rounds + 1, f"the program failed: "
                                           f"{reason}")
        else:
            self.walls[config].append(wall)

    def leader(self, library: str) -> str | None:
        """The library's configuration with the lowest median wall time so far."""
        timed = [c for c in self.alive(library) if self.walls[c]]
        return min(timed, key=lambda c: center(_sample(self.walls[c]))) if timed else None

    def close_round(self) -> list[Dropped]:
        """Judge every library's configurations against its leader; drop those slower."""
        self.rounds += 1
        compared = []
        for library in self.entrants:
            lead = self.leader(library)
            compared += [(lead, c) for c in self.alive(library) if lead and c != lead]
        judged = judge([Pair(_sample(self.walls[a]), _sample(self.walls[b]))
                        for a, b in compared])
        self.settled = {b for (_, b), j in zip(compared, judged, strict=True)
                        if j.outcome in ("above", "same") or self._beyond_reach(j)}
        out = []
        for (lead, c), j in zip(compared, judged, strict=True):
            if j.outcome == "above" and self.eliminate:
                out.append(Dropped(c, self.rounds, f"slower than {lead}: {j.ratio:.2f}x its "
                                   f"wall time (95% CI {j.ci_low:.2f}-{j.ci_high:.2f}, "
                                   f"{j.launches_b} launches)"))
        self.dropped.update((d.config, d) for d in out)
        return out

    def _beyond_reach(self, j: Judged) -> bool:
        """An open comparison no launches within the race's rounds would decide: its ratio
        sits on the threshold, or it would need more launches a side than MAX_ROUNDS."""
        return j.outcome == "open" and j.why != "launches" and \
            (j.needed == 0 or j.needed > self.max_rounds)

    @property
    def finished(self) -> bool:
        if self.rounds >= self.max_rounds:
            return True
        return all(set(self.alive(lib)) - {self.leader(lib)} <= self.settled
                   for lib in self.entrants)

    def winners(self) -> dict[str, str]:
        """library -> its leader (libraries whose every configuration failed: none)."""
        return {lib: lead for lib in self.entrants if (lead := self.leader(lib))}


@dataclass(frozen=True)
class Verified:
    """A configuration's fresh launches against a library's default's."""

    library: str  # whose default
    default: str
    setting: str
    speedup: float  # the default's median wall over the setting's: above 1, the setting wins
    ci_low: float
    ci_high: float
    p_adjusted: float
    gain: bool  # the verdict rule backs a gain: decided faster, beyond the threshold
    launches: int  # fewer of the two sides'


def verify(walls: dict[str, list[float]],
           pairs: list[tuple[str, str, str]]) -> list[Verified]:
    """(library, default, setting) pairs judged as one family on their launches."""
    judged = judge([Pair(_sample(walls.get(d, [])), _sample(walls.get(s, [])))
                    for _, d, s in pairs])
    return [Verified(lib, d, s, 1 / j.ratio if j.ratio else math.nan,
                     1 / j.ci_high if j.ci_high else math.inf,
                     1 / j.ci_low if j.ci_low else math.inf, j.p_adjusted,
                     j.outcome == "below", min(j.launches_a, j.launches_b))
            for (lib, d, s), j in zip(pairs, judged, strict=True)]


def verification_pairs(winners: dict[str, str], overall: str | None,
                       defaults: dict[str, str]) -> list[tuple[str, str, str]]:
    """Each library's winner against its default (where it is not the default), and the
    overall winner against every other library's default."""
    pairs = [(lib, defaults[lib], w) for lib, w in winners.items() if w != defaults[lib]]
    if overall is not None:
        pairs += [(lib, d, overall) for lib, d in defaults.items()
                  if winners.get(lib) != overall and d != overall]
    return pairs
