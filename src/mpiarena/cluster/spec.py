"""`emulated:nodes=4,link=100mbit,mtu=1500` and the seeds' network profiles, parsed."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..base.errors import ArenaError


@dataclass(frozen=True)
class Medium:
    """What a network's framing costs on the wire beyond each IP packet, in bytes."""

    name: str
    framing: int

    @property
    def overhead(self) -> int:
        """What tbf must add to each packet: it already counts the veth's Ethernet header."""
        return self.framing - FRAME_HEADER


FRAME_HEADER = 14  # Ethernet header on the veth, counted by tbf as part of the packet
# preamble 8 + header 14 + FCS 4 + inter-frame gap 12 (IEEE 802.3)
ETHERNET = Medium("Ethernet", 38)
# preamble 8 + start 1 + frame control 1 + addresses 12 + LLC/SNAP 8 + FCS 4 + end 0.5 + frame
# status 1.5 (ANSI X3.139); the token's rotation is not charged
FDDI = Medium("FDDI", 36)
# name: (link rate, MTU, medium), after the networks of the seed studies
PROFILES = {"fast-ethernet": ("100mbit", 1500, ETHERNET), "fddi": ("100mbit", 4352, FDDI),
            "gige": ("1gbit", 1500, ETHERNET)}
UNITS = {"kbit": 1e3, "mbit": 1e6, "gbit": 1e9}
MOST_NODES = 16
TCP_HEADERS = 52  # IPv4 20 + TCP 20 + timestamps 12: a full frame carries MTU - 52 of payload
LATENESS = 50e-6  # s of qdisc timer lateness the bucket absorbs (measured 17-30 us under load)


@dataclass(frozen=True)
class EmulatedSpec:
    nodes: int = 2
    link: str = "100mbit"
    mtu: int = 1500
    profile: str | None = None

    @property
    def rate_bits(self) -> float:
        return rate_bits(self.link)

    @property
    def medium(self) -> Medium:
        """The profile's medium; a link given by rate alone is Ethernet."""
        return PROFILES[self.profile][2] if self.profile else ETHERNET

    @property
    def frame(self) -> int:
        """Bytes a full frame costs on the wire, as tbf charges them."""
        return self.mtu + self.medium.framing

    @property
    def payload_limit(self) -> float:
        """The most TCP payload the medium carries, in bit/s: full frames back to back."""
        return self.rate_bits * (self.mtu - TCP_HEADERS) / self.frame

    @property
    def burst(self) -> int:
        """tbf's bucket in bytes: one full frame, plus what the rate earns in LATENESS so a
        late timer costs no throughput (a one-frame bucket read 85 Mbit/s on 100 Mbit/s here).
        After an idle moment a message's first `burst` bytes pass at host speed: no token bucket
        can charge the frame that finds it full, and the 4 KiB bucket used before let 4-6 KiB
        ping-pongs cross a 100 Mbit/s link at 180 Mbit/s."""
        return self.frame + math.ceil(self.rate_bits / 8 * LATENESS)

    def wire_bytes(self, size: int) -> float:
        """Bytes on the wire for `size` bytes of TCP payload in full frames."""
        return size * self.frame / (self.mtu - TCP_HEADERS)

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
