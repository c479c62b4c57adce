"""`emulated:nodes=4,link=100mbit,mtu=1500` and the seeds' network profiles, parsed."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import ArenaError

# name: (link rate, MTU), after the networks of the seed studies
PROFILES = {"fast-ethernet": ("100mbit", 1500), "fddi": ("100mbit", 4352), "gige": ("1gbit", 1500)}
UNITS = {"kbit": 1e3, "mbit": 1e6, "gbit": 1e9}
MOST_NODES = 16


@dataclass(frozen=True)
class EmulatedSpec:
    nodes: int = 2
    link: str = "100mbit"
    mtu: int = 1500
    profile: str | None = None

    @property
    def rate_bits(self) -> float:
        return rate_bits(self.link)

    def label(self) -> str:
        named = f"{self.profile}," if self.profile else ""
        return f"emulated:{named}nodes={self.nodes},link={self.link},mtu={self.mtu}"


def rate_bits(text: str) -> float:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(kbit|mbit|gbit)", text.lower())
    if not m:
        raise ArenaError(f"bad link rate '{text}': write it as 100mbit, 1gbit or 512kbit")
    return float(m.group(1)) * UNITS[m.group(2)]


def parse(text: str) -> EmulatedSpec:
    """A spec from `emulated:[PROFILE,]key=value,...`; ArenaError says what is wrong."""
    kind, _, rest = text.partition(":")
    if kind != "emulated":
        raise ArenaError(f"unknown cluster '{text}': use emulated:nodes=4,link=100mbit,mtu=1500, "
                         "a profile (emulated:fast-ethernet), or --hosts FILE")
    fields: dict[str, str] = {}
    profile = None
    for part in filter(None, rest.split(",")):
        key, eq, value = part.partition("=")
        if not eq:
            if key not in PROFILES:
                raise ArenaError(f"unknown network profile '{key}': choose one of "
                                 f"{', '.join(PROFILES)}")
            profile = key
            fields.setdefault("link", PROFILES[key][0])
            fields.setdefault("mtu", str(PROFILES[key][1]))
        elif key == "delay":
            raise ArenaError("delay cannot be emulated: this kernel has no netem qdisc; the link "
                             "is shaped with tbf (rate and MTU only)")
        elif key in ("nodes", "link", "mtu"):
            fields[key] = value
        else:
            raise ArenaError(f"unknown cluster setting '{key}': use nodes=, link=, mtu=")
    try:
        nodes, mtu = int(fields.get("nodes", 2)), int(fields.get("mtu", 1500))
    except ValueError as e:
        raise ArenaError(f"nodes and mtu are whole numbers: {e}") from e
    if not 1 <= nodes <= MOST_NODES:
        raise ArenaError(f"nodes={nodes}: an emulated cluster has 1 to {MOST_NODES} nodes")
    if not 576 <= mtu <= 9000:
        raise ArenaError(f"mtu={mtu}: choose an MTU between 576 and 9000")
    link = fields.get("link", "100mbit").lower()
    rate_bits(link)
    return EmulatedSpec(nodes, link, mtu, profile)
