"""What `mpiarena program` measures of a user's own program: its launches, each launch's wall time
and figures of merit (read from its output by pattern), and the binary each library ran."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ..base.errors import ArenaError
from ..base.status import LaunchStatus

WALL = "wall"  # the figure every launch has: seconds from launch to exit, lower is better
OUTPUT_KEPT = 64 * 1024  # bytes of a launch's stdout and of its stderr kept in the store (tail)


@dataclass(frozen=True)
class Metric:
    """A figure of merit the program prints: the first group of `pattern` is the number."""

    name: str
    pattern: str
    higher: bool = False  # higher is better (a rate); else lower (a time)

    @classmethod
    def parse(cls, spec: str, higher: frozenset[str] = frozenset()) -> Metric:
        """NAME=REGEX, its first group the number; a clear error for anything else."""
        name, sep, pattern = spec.partition("=")
        name = name.strip()
        if not sep or not name or not pattern:
            raise ArenaError(f"--metric {spec!r}: give NAME=REGEX, e.g. "
                             "'step=Time per step:\\s+(\\S+)'")
        if not re.fullmatch(r"[A-Za-z_][\w.-]*", name) or name == WALL:
            raise ArenaError(f"--metric {spec!r}: the name must be a word (letters, digits, _ . -)"
                             f" and not '{WALL}'")
        try:
            groups = re.compile(pattern).groups
        except re.error as e:
            raise ArenaError(f"--metric {spec!r}: not a regular expression ({e})") from e
        if groups < 1:
            raise ArenaError(f"--metric {spec!r}: the pattern needs a group around the number, "
                             "e.g. 'Time:\\s+(\\S+)'")
        return cls(name, pattern, name in higher)

    def read(self, output: str) -> float | None:
        """The number of the last line that matches, or None."""
        found = None
        for m in re.finditer(self.pattern, output, re.MULTILINE):
            try:
                value = float(m.group(1))
            except (TypeError, ValueError):
                continue
            if math.isfinite(value):
                found = value
        return found


class LaunchKind(StrEnum):
    """Why a launch of the program ran: timed, a warm-up, profiled (`program --tune`'s first), one
    of the tuning race's rounds, or the verification of its winners."""

    TIMED = "timed"
    WARMUP = "warmup"
    PROFILED = "profiled"
    RACE = "race"
    VERIFY = "verify"


class Role(StrEnum):
    """How a configuration of a `program --tune` run ended: its library's winner, the winner of
    the fastest library (overall), or neither."""

    OVERALL = "overall"
    WINNER = "winner"
    NONE = ""


@dataclass(frozen=True)
class ProgramLaunch:
    """One execution of the program through a library's launcher, as stored."""

    variant: str
    np: int
    index: int  # which launch of its variant (warm-up launches count)
    kind: LaunchKind
    status: LaunchStatus
    reason: str
    exit_code: int | None
    wall: float  # seconds, launch to exit (NaN: did not end)
    metrics: dict[str, float] = field(default_factory=dict)
    stdout: str = ""
    stderr: str = ""
    command: str = ""
    interference: dict[str, Any] | None = None
    id: int = 0  # the store's row id (0 before it is stored)

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", LaunchKind(self.kind))  # the stored word, as its member


@dataclass(frozen=True)
class RankCalls:
    """RankCalls and seconds in one MPI function on one rank of a profiled launch."""

    rank: int
    function: str
    calls: int
    seconds: float


@dataclass(frozen=True)
class BuiltProgram:
    """What one implementation runs: the argv (binary first), how it was made, and what the
    binary was checked against."""

    impl_id: str
    argv: list[str]
    how: str  # source | build | bin
    links: str  # the MPI library the binary is linked to, as the dynamic loader resolves it
    cached: bool = False


@dataclass(frozen=True)
class TunedConfig:
    """One configuration of a `program --tune` run as stored: what it set, how its race ended."""

    variant: str
    impl_id: str
    values: dict[str, str]  # dimension -> value (default: the library's own)
    dropped: int | None  # the round after which it left the race (None: it stayed)
    reason: str  # why it was dropped
    role: Role = Role.NONE

    def __post_init__(self) -> None:
        object.__setattr__(self, "role", Role(self.role))  # the stored word, as its member
