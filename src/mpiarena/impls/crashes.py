"""The known crashes of releases (crashes.toml, each with its reproducer in crashes/): which
apply to an implementation, said before it is installed or measured."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from .base import Implementation
from .releases import Release

HERE = Path(__file__).parent


@dataclass(frozen=True)
class KnownCrash:
    """One crash: the family, the releases checked to have it, the call, what happens, where it
    is reported upstream, its reproducer and whether mpiarena's own runs meet it."""

    family: str
    first: Release
    last: Release
    call: str
    what: str
    upstream: str
    reproducer: Path
    mpiarena: str

    def covers(self, family: str, version: str) -> bool:
        r = Release.parse(version)
        return family == self.family and r is not None and \
            self.first.numbers <= r.numbers <= self.last.numbers

    def line(self, name: str) -> str:
        return (f"{name}: known to crash in {self.call}: {self.what} ({self.upstream}); "
                f"{self.mpiarena}; a reproducer: {self.reproducer}")


@cache
def known() -> tuple[KnownCrash, ...]:
    """Every crash crashes.toml lists."""
    data = tomllib.loads((HERE / "crashes.toml").read_text())
    out = []
    for c in data["crash"]:
        first, last = Release.parse(c["first"]), Release.parse(c["last"])
        assert first is not None and last is not None, c
        out.append(KnownCrash(c["family"], first, last, c["call"], c["what"], c["upstream"],
                              HERE / c["reproducer"], c["mpiarena"]))
    return tuple(out)


def covering(family: str, version: str) -> list[KnownCrash]:
    """The known crashes of a release of family."""
    return [c for c in known() if c.covers(family, version)]


def said_of(impl: Implementation) -> list[str]:
    """The known crashes of an implementation, one line each."""
    return [c.line(impl.id) for c in covering(impl.family, impl.version)]
