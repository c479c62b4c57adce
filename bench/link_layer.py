#!/usr/bin/env python3
"""Each emulated network profile's plateau beside the physical limit of its medium.

A real link carries less TCP payload than its rate: every frame also costs its medium's framing
(Ethernet: header 14, preamble 8, FCS 4, inter-frame gap 12 bytes; FDDI: 36 bytes) and the IP
and TCP headers (52 bytes with timestamps). Fast Ethernet therefore carries at most 94.1 Mbit/s
of payload, FDDI with 4352-byte frames 98.0 and Gigabit Ethernet 941. The emulated links charge
each packet its medium's framing (tbf's overhead, EmulatedSpec.medium), so their plateau should
be that limit, not the rate.

Runs raw TCP (the family with the least software between the ranks) and the given MPI
libraries over `emulated:PROFILE,nodes=2`, ping-pong at 1 and 4 MiB, 3 launches, and prints per
profile and implementation the plateau (best of the sizes, NetPIPE's size over half the round
trip), the medium's limit and their ratio. It first measures what this machine itself moves
through the emulated path (raw TCP over a 40 Gbit/s link the host cannot fill): a profile whose
limit is above 80% of that is host-bound, reported but not judged (on this 2-core VM every frame
crosses veth, bridge and two tbf in software: Gigabit Ethernet is host-bound here). Target: raw
TCP between 0.97 and 1.005 of the limit on every profile the host can fill. Exit status 1 if one
misses.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from common import impl_option
from harness_overhead import mpiarena_argv

from mpiarena.cluster.spec import PROFILES, parse
from mpiarena.store import Store
from mpiarena.store.results import load

SIZES = (1 << 20, 4 << 20)
LOW, HIGH = 0.97, 1.005


HOST_PATH = "link=40gbit"  # a rate no 2-core host fills: what the host itself moves
HOST_BOUND = 0.8  # a limit above this share of the host's own ceiling is not the link's to set


def plateaus(profile: str, impls: list[str], db: Path) -> dict[str, float]:
    """Best ping-pong throughput in Mbit/s per variant over `emulated:PROFILE,nodes=2`."""
    done = subprocess.run([*mpiarena_argv(), "run", "--cluster", f"emulated:{profile},nodes=2",
                           "--bench", "pingpong", "--sizes", ",".join(map(str, SIZES)),
                           "--launches", "3", "--observations", "5", "--budget", "off",
                           "--db", str(db), *(f"--impl={i}" for i in impls)],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        sys.exit(f"run over {profile} failed: {done.stderr.strip()}")
    store = Store(db)
    data = load(store, store.resolve("latest"))
    best: dict[str, float] = {}
    for (bench, size, _np), groups in data.cells.items():
        for variant, group in groups.items():
            if bench == "pingpong" and group.status == "ok":
                rate = size * 8 / float(np.median(group.values)) / 1e6
                best[variant] = max(best.get(variant, 0.0), rate)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    impl_option(parser, ("openmpi-4.1.4",))
    parser.add_argument("--profile", action="append", default=[],
                        help=f"profiles (default: {', '.join(PROFILES)})")
    args = parser.parse_args()
    impls = ["tcp", *(args.impl or ["openmpi-4.1.4"])]
    print(f"load average before: {os.getloadavg()[0]:.2f} (2 cores)")
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        ceiling = plateaus(HOST_PATH, ["tcp"], Path(tmp) / "host.db")["tcp"]
        print(f"this machine moves {ceiling:.0f} Mbit/s of raw TCP through the emulated path "
              f"unshaped: limits above {HOST_BOUND * ceiling:.0f} Mbit/s are host-bound")
        print(f"{'profile':<15}{'medium':<10}{'rate':>10}{'limit':>12}{'implementation':>18}"
              f"{'plateau':>12}{'of limit':>10}")
        for profile in args.profile or list(PROFILES):
            spec = parse(f"emulated:{profile}")
            limit = spec.payload_limit / 1e6
            host_bound = limit > HOST_BOUND * ceiling
            for variant, plateau in sorted(plateaus(profile, impls,
                                                    Path(tmp) / f"{profile}.db").items()):
                ratio = plateau / limit
                judged = variant == "tcp" and not host_bound
                passed = LOW <= ratio <= HIGH
                ok &= passed or not judged
                mark = ("PASS" if passed else "FAIL") if judged else \
                    ("host-bound" if variant == "tcp" else "")
                print(f"{profile:<15}{spec.medium.name:<10}{spec.rate_bits / 1e6:>6g} Mbit"
                      f"{limit:>7.1f} Mbit{variant:>18}{plateau:>7.1f} Mbit{ratio:>9.3f} "
                      f"{mark}")
    print(f"load average after: {os.getloadavg()[0]:.2f}; raw TCP within {LOW}-{HIGH} of the "
          f"medium's limit on every profile the host can fill: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
