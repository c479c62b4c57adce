"""SimGrid's SMPI as the place ranks run in `mpiarena simulate`: finding smpicc and smpirun, the
simulated platform (a cluster of hosts, each on its own link to a backbone), the link model's
factors, and the smpirun command that runs the core on it (engines-feasibility.md, part A)."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..base.errors import ArenaError
from ..base.sizes import format_size
from .spec import PROFILES, rate_bits

INSTALL = "install it with: apt-get install libsimgrid-dev"
# smpi/coll-selector: whose selection logic of collective algorithms SMPI copies; "default" is
# SMPI's own naive algorithms (allreduce = reduce + bcast), no library's
SELECTORS = {"mpich": "MPICH", "ompi": "Open MPI", "impi": "Intel MPI", "mvapich2": "MVAPICH2",
             "default": "SMPI's own"}
COLLECTIVES = ("allreduce", "bcast", "reduce", "alltoall", "allgather", "gather", "scatter",
               "barrier", "reduce_scatter", "alltoallv", "allgatherv")
DEFAULT_LATENCY = 50e-6  # s host to host where --link names none: Ethernet and TCP stacks
LOOPBACK = ('loopback_bw="8GBps" loopback_lat="0.5us"')  # ranks sharing a host: shared memory
# as measured here (field-notes.md: 0.35-0.6 us, about 80 Gbit/s)
MAX_RANKS = 16384


@dataclass(frozen=True)
class SimGrid:
    smpicc: Path
    smpirun: Path
    version: str  # 3.32

    @property
    def title(self) -> str:
        return f"SimGrid {self.version}"


def find() -> SimGrid:
    """smpicc and smpirun on PATH and SimGrid's version; ArenaError with the fix if absent."""
    cc, run = shutil.which("smpicc"), shutil.which("smpirun")
    if not cc or not run:
        raise ArenaError(f"SimGrid's SMPI is missing (no smpicc/smpirun on PATH); {INSTALL}")
    try:
        said = subprocess.run([run, "-version"], capture_output=True, text=True, timeout=30,
                              stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ArenaError(f"smpirun does not run ({e}); reinstall: apt-get install "
                         "--reinstall libsimgrid-dev") from e
    m = re.search(r"SimGrid version (\S+)", said)
    if not m:
        raise ArenaError(f"smpirun -version said {said.strip()[:80]!r}, not a SimGrid version; "
                         "reinstall: apt-get install --reinstall libsimgrid-dev")
    return SimGrid(Path(cc), Path(run), m.group(1))


@dataclass(frozen=True)
class Link:
    """The network between two hosts: its rate (bit/s) and one-way latency host to host (s)."""

    bits: float
    latency: float

    def label(self) -> str:
        rate = (f"{self.bits / 1e9:.3g}gbit" if self.bits >= 1e9 else
                f"{self.bits / 1e6:.3g}mbit")
        return f"{rate},lat={self.latency * 1e6:.3g}us"


_LATENCY = re.compile(r"(\d+(?:\.\d+)?)(ns|us|ms|s)")
_SCALE = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def parse_link(text: str) -> Link:
    """`1gbit,lat=50us`, or an emulated profile's name (gige, fast-ethernet, fddi) with an
    optional `,lat=...`; the latency defaults to DEFAULT_LATENCY."""
    rate, latency = None, DEFAULT_LATENCY
    for part in filter(None, (p.strip() for p in text.removeprefix("emulated:").split(","))):
        key, eq, value = part.partition("=")
        if not eq and key in PROFILES:
            rate = rate_bits(PROFILES[key][0])
        elif not eq:
            rate = rate_bits(key)
        elif key in ("lat", "latency"):
            m = _LATENCY.fullmatch(value)
            if not m:
                raise ArenaError(f"bad latency '{value}' in --link '{text}': write e.g. lat=50us")
            latency = float(m.group(1)) * _SCALE[m.group(2)]
        elif key == "link":
            rate = rate_bits(value)
        elif key not in ("nodes", "mtu"):  # an emulated cluster's label passes whole
            raise ArenaError(f"unknown '{key}' in --link '{text}': write e.g. "
                             "--link 1gbit,lat=50us or --link gige")
    if rate is None:
        raise ArenaError(f"--link '{text}' names no rate: write e.g. --link 1gbit,lat=50us, or "
                         f"a profile ({', '.join(PROFILES)})")
    if latency <= 0:
        raise ArenaError(f"--link '{text}': the latency must be above 0")
    return Link(rate, latency)


@dataclass(frozen=True)
class Factors:
    """SMPI's corrections of the link model: the latency and the bandwidth of a message of at
    least `size` bytes times their factors (the largest size not above the message's
    applies); (((0, 1),), ((0, 1),)) is the bare link."""

    latency: tuple[tuple[int, float], ...] = ((0, 1.0),)
    bandwidth: tuple[tuple[int, float], ...] = ((0, 1.0),)

    def cfg(self) -> list[str]:
        return [f"--cfg=smpi/lat-factor:{_pieces(self.latency)}",
                f"--cfg=smpi/bw-factor:{_pieces(self.bandwidth)}"]

    def label(self) -> str:
        if self == Factors():
            return "none (the bare link)"
        lat = (f"x{self.latency[0][1]:.3g}" if len(self.latency) == 1 else
               f"x ({', '.join(f'{format_size(s)}: {f:.3g}' for s, f in self.latency)})")
        bw = ", ".join(f"{format_size(s)}: {f:.3g}" for s, f in sorted(self.bandwidth))
        return f"latency {lat}; bandwidth x ({bw})"


def _pieces(factors: tuple[tuple[int, float], ...]) -> str:
    """SMPI's piecewise factor: size:factor entries, the largest size first."""
    return ";".join(f"{s}:{f:.6g}" for s, f in sorted(factors, reverse=True))


@dataclass(frozen=True)
class Platform:
    """A cluster of `hosts`, each with its own link (half the host-to-host latency, the full
    rate, both directions apart) to a backbone that never limits; ranks_per_node ranks share
    a host, and talk through its loopback."""

    hosts: int
    link: Link
    ranks_per_node: int = 1

    def xml(self) -> str:
        half = self.link.latency / 2
        return ("<?xml version='1.0'?>\n"
                '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
                '<platform version="4.1">\n'
                f'  <cluster id="arena" prefix="node-" suffix="" radical="0-{self.hosts - 1}" '
                f'speed="1Gf" bw="{self.link.bits:.0f}bps" lat="{half * 1e6:.6f}us" '
                'sharing_policy="SPLITDUPLEX" bb_bw="1Tbps" bb_lat="0s" '
                f'bb_sharing_policy="FATPIPE" {LOOPBACK}/>\n'
                "</platform>\n")

    def hostfile(self, np: int) -> str:
        return "".join(f"node-{r // self.ranks_per_node}\n" for r in range(np))

    def label(self) -> str:
        per = f", {self.ranks_per_node} ranks a host" if self.ranks_per_node > 1 else ""
        return f"cluster of {self.hosts} hosts, link {self.link.label()}{per}"


def platform_for(np: int, link: Link, ranks_per_node: int) -> Platform:
    if not 1 <= np <= MAX_RANKS:
        raise ArenaError(f"{np} simulated ranks: SMPI runs 1 to {MAX_RANKS} here; "
                         "use e.g. --np 8,64,256")
    return Platform(-(-np // ranks_per_node), link, ranks_per_node)


def command(sim: SimGrid, binary: Path, np: int, platform_file: Path, hostfile: Path,
            cfg: list[str]) -> list[str]:
    """smpirun starting np ranks of binary on the platform (privatization on: the core's
    globals are per rank; its TMPDIR comes from the environment, not smpirun's -tmpdir,
    which takes its directory for the program)."""
    return [str(sim.smpirun), "-np", str(np), "-platform", str(platform_file), "-hostfile",
            str(hostfile), "--cfg=smpi/privatization:1", *cfg, str(binary)]
