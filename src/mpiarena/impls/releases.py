"""A family's releases on the package index: listed, post releases folded into their release,
chosen by a range or a list, and where the index skips releases."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from . import pypi

_VERSION = re.compile(r"(\d+(?:\.\d+)*)(?:\.post(\d+))?")


@dataclass(frozen=True, order=True)
class Release:
    """One release on the index: its numbers, and the latest post rebuild of it (0: none)."""

    numbers: tuple[int, ...]
    post: int = 0

    @classmethod
    def parse(cls, text: str) -> Release | None:
        """'4.2.3' or '5.0.1.post1' -> a Release; None for anything else (a pre-release)."""
        m = _VERSION.fullmatch(text.strip())
        if m is None:
            return None
        return cls(tuple(int(x) for x in m.group(1).split(".")), int(m.group(2) or 0))

    @property
    def name(self) -> str:
        """The release as people name it: '5.0.1' (a post rebuild stands for it)."""
        return ".".join(map(str, self.numbers))

    @property
    def version(self) -> str:
        """The exact version to install: '5.0.1.post1' where a post rebuild is the latest."""
        return f"{self.name}.post{self.post}" if self.post else self.name


def folded(versions: Sequence[str]) -> list[Release]:
    """The index's versions as releases, oldest first: each release once, at its latest post
    rebuild; placeholders (0.0.0) and versions not of the form N.N[.N][.postN] left out."""
    latest: dict[tuple[int, ...], Release] = {}
    for text in versions:
        r = Release.parse(text)
        if r is None or not any(r.numbers):
            continue
        if r.numbers not in latest or r.post > latest[r.numbers].post:
            latest[r.numbers] = r
    return [latest[n] for n in sorted(latest)]


def index_releases(family: str) -> list[Release]:
    """The family's releases on the package index, oldest first."""
    return folded(pypi.index_versions(family))


@dataclass(frozen=True)
class ReleaseChoice:
    """Which releases the command line asks for: a range (both ends included) or a list."""

    first: str | None = None
    last: str | None = None
    listed: tuple[str, ...] = ()

    def pick(self, index: list[Release]) -> tuple[list[Release], list[str]]:
        """The chosen releases on the index, oldest first, and the names asked for that it
        does not hold (a list's, left for the machine's own builds to answer)."""
        if self.listed:
            by_name = {r.name: r for r in index}
            wanted = [_name(x) for x in self.listed]
            return ([by_name[n] for n in sorted(set(wanted) & set(by_name), key=_numbers)],
                    [n for n in wanted if n not in by_name])
        lo = _numbers(_name(self.first)) if self.first else ()
        hi = _numbers(_name(self.last)) if self.last else None
        # a shorter end names its series: --to 2021.19 takes 2021.19.0 and 2021.19.1 too
        return [r for r in index
                if lo <= r.numbers and (hi is None or r.numbers[:len(hi)] <= hi)], []


def _name(text: str) -> str:
    r = Release.parse(text)
    return r.name if r else text.strip()


def _numbers(name: str) -> tuple[int, ...]:
    r = Release.parse(name)
    return r.numbers if r else ()


def skipped(before: Release, after: Release) -> str | None:
    """Where the index skips releases between two neighbours: '5.0.0-5.0.7' between 4.1.8 and
    5.0.8 (a new series that starts past .0, or a patch number that jumps); None where it
    does not."""
    a, b = before.numbers, after.numbers
    if len(a) < 3 or len(b) < 3:
        return None
    if a[:-1] == b[:-1]:
        if b[-1] > a[-1] + 1:
            first = (*a[:-1], a[-1] + 1)
            last = (*b[:-1], b[-1] - 1)
            return _span(first, last)
        return None
    if b[-1] > 0:
        return _span((*b[:-1], 0), (*b[:-1], b[-1] - 1))
    return None


def _span(first: tuple[int, ...], last: tuple[int, ...]) -> str:
    a, b = ".".join(map(str, first)), ".".join(map(str, last))
    return a if a == b else f"{a}-{b}"
