#!/usr/bin/env python3
"""LogGP reference: mpiarena's loggp benchmark against Netgauge's loggp pattern, same libraries.

One `mpiarena run --bench loggp --np 2` of every implementation (--launches launches each,
interleaved by mpiarena; analysis/loggp.py derives the parameters), then --rounds launches of
Netgauge's loggp pattern per implementation (`netgauge -s 1-MAX -c TESTS -o FILE -x loggp -m
mpi`, started the way mpiarena starts its core: the family's launcher, binding and rank user).
Netgauge is found at $NETGAUGE/IMPL/netgauge (one build per implementation id); without it the
script says how to build it and prints mpiarena's figures alone.

Netgauge steps its sizes by 1 KiB from 1 B (1, 1025, 2049...), so the sizes compared are on
that grid. Per implementation, parameter and size it prints mpiarena's figure with its 95%
interval, Netgauge's (the median over its rounds of each round's figure, itself the median of
--tests round trips per pattern) and their ratio, flagged where it is beyond 1 +- 0.25:
- L: half PRTT(1,0,s) at 1 B (Netgauge's L at every size);
- g(s) = (PRTT(n,0,s) - PRTT(1,0,s)) / (n - 1), both n = 10;
- o_s: Netgauge's (PRTT(n,d,s) - PRTT(1,0,s)) / (n - 1) - d against mpiarena's time inside a
  delayed send (o_s) and against the same derivation from mpiarena's round trips (o_s_prtt);
- o_r: time inside a receive called d after the previous one, on both sides;
- G: per mpiarena size range (with its residuals), Netgauge's g(s) at the same sizes fitted the
  same way; and Netgauge's own G (its fit over every 1 KiB step since the last protocol change
  it detected) against mpiarena's G of the last range.
Figures in microseconds. Each launch on either side first waits (--quiet-wait) for the CPUs to
idle; how busy they were and the load average are printed.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

from common import impl_option
from harness_overhead import TAG, clean_up, mpiarena_argv, run, run_and_load
from netpipe_reference import busy_elsewhere

from mpiarena.analysis.loggp import LogGPModel, fit_gap, loggp
from mpiarena.base import paths, users
from mpiarena.impls import Implementation, discover, family_of, select
from mpiarena.platform.plan import Variant

NP = 2
TOLERANCE = 0.25
DEFAULT_IMPLS = ["mpich-4.0.2", "openmpi-4.1.4"]
BUILD = """Netgauge not found at $NETGAUGE/{impl}/netgauge. To build it (outside the repository):
  fetch spcl/netgauge, then in a copy per library:
  ./configure --with-mpi && make CC={wrapper} CXX=<the library's mpicxx>
  (configure takes plain mpicc/mpicxx; make's CC/CXX pick the library) and set NETGAUGE to
  the directory holding IMPL/netgauge."""
# Netgauge's -o file: size n PRTT(1,0,s) PRTT(n,0,s) PRTT(n,d,s) L o_s o_r g G lsqu(g,G), us
Row = dict[str, float]


def load_average() -> str:
    return f"1-min load {os.getloadavg()[0]:.2f}"


def wait_quiet(seconds: float) -> str:
    """Wait up to `seconds` for the CPUs to be under 20% busy; say how busy they were."""
    deadline = time.monotonic() + seconds
    busy = busy_elsewhere()
    while busy > 0.2 and time.monotonic() < deadline:
        busy = busy_elsewhere()
    return f"CPUs {busy:.0%} busy before it, {load_average()}"


def netgauge_rows(text: str, printed: str) -> dict[int, Row]:
    """Netgauge's output file, by size: its columns plus g(s) from the round trips; from what
    it printed, `since`: the first size of the range its last G was fitted over (after the
    last protocol change it detected)."""
    changes = [int(m) for m in re.findall(r"protocol change at (\d+) bytes", printed)]
    names = ("n", "prtt1", "prttn", "prttd", "L", "o_s", "o_r", "g_fit", "G", "lsqu")
    out = {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        size, *rest = line.split()
        row = dict(zip(names, map(float, rest), strict=True))
        row["gap"] = (row["prttn"] - row["prtt1"]) / (row["n"] - 1)
        out[int(size)] = row  # a protocol change prints the size twice: the later line wins
    for row in out.values():
        row["since"] = changes[-1] + 1024 if changes else 1
    return out


def run_netgauge(impl: Implementation, binary: Path, max_size: int, tests: int,
                 env: dict[str, str]) -> dict[int, Row]:
    """One Netgauge launch of the loggp pattern, started as mpiarena starts its core."""
    user = users.for_ranks()
    binding = Variant(impl.id, impl).binding_for(NP)
    launch = family_of(impl).launch(impl, NP, binding, os.geteuid() == 0 and user is None)
    full = impl.environ(env)
    full.update(launch.env)
    as_user: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="loggp-ref-") as tmp:
        if user is not None:
            full.update(HOME=user.home, USER=user.name, LOGNAME=user.name)
            as_user = {"user": user.uid, "group": user.gid, "extra_groups": []}
            os.chown(tmp, user.uid, user.gid)
        out = Path(tmp) / "loggp.out"
        argv = [*launch.argv, str(binary), "-s", f"1-{max_size}", "-c", str(tests), "-o",
                str(out), "-x", "loggp", "-m", "mpi"]
        printed = run(argv, full, 600, cwd=tmp, **as_user)
        return netgauge_rows(out.read_text(), printed)


def _us(x: float) -> str:
    return f"{x * 1e6:9.3f}"


def compare_line(impl: str, name: str, size: int, ours: tuple[float, float, float],
                 theirs: float | None) -> str:
    value, low, high = ours
    line = f"{impl:14} {name:9} {size:>7} {_us(value)} [{_us(low)}, {_us(high)}]"
    if theirs is None:
        return line
    return f"{line}  netgauge {theirs:9.3f}  ratio {_ratio(value, theirs * 1e-6)}"


def report(impl: str, m: LogGPModel, rounds: list[dict[int, Row]]) -> None:
    def theirs(size: int, column: str) -> float | None:
        values = [r[size][column] for r in rounds if size in r]
        return statistics.median(values) if values else None

    first = m.points[0]
    print(compare_line(impl, "L", first.size, (m.L.value, m.L.low, m.L.high),
                       theirs(first.size, "L") if rounds else None))
    for p in m.points:
        for name, fig, column in (("g(s)", p.g, "gap"), ("o_s", p.o_s, "o_s"),
                                  ("o_s_prtt", p.o_s_prtt, "o_s"), ("o_r", p.o_r, "o_r")):
            print(compare_line(impl, name, p.size, (fig.value, fig.low, fig.high),
                               theirs(p.size, column) if rounds else None))
    for r in m.ranges:
        print(f"{impl:14} range {r.sizes[0]}-{r.sizes[-1]} B: g {r.g.value * 1e6:.3f} us, "
              f"G {r.G.value * 1e9:.4f} ns/B [{r.G.low * 1e9:.4f}, {r.G.high * 1e9:.4f}], "
              f"relative residuals max {r.max_residual:.1%}, rms {r.rms_residual:.1%}")
    if not rounds:
        return
    for r in m.ranges:  # Netgauge's g(s) at the same sizes, fitted the same way
        gaps = [theirs(size, "gap") for size in r.sizes]
        if all(g is not None for g in gaps):
            _, big_g = fit_gap(r.sizes, [g * 1e-6 for g in gaps if g is not None])
            print(f"{impl:14} G {r.sizes[0]}-{r.sizes[-1]} B, netgauge's g(s) fitted alike: "
                  f"{big_g * 1e9:.4f} ns/B  ratio {_ratio(r.G.value, big_g)}")
    ends = [r[max(r)] for r in rounds]
    big_g = statistics.median(e["G"] for e in ends) * 1e-6
    print(f"{impl:14} G netgauge's own fit {big_g * 1e9:.4f} ns/B (from "
          f"{sorted(int(e['since']) for e in ends)} B to {max(rounds[0])} B, every 1 KiB, per "
          f"round); ours of the last range  ratio {_ratio(m.ranges[-1].G.value, big_g)}")


def _ratio(ours: float, theirs: float) -> str:
    ratio = ours / theirs
    return f"{ratio:6.3f}" + ("" if abs(ratio - 1) <= TOLERANCE else "  beyond 25%")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    impl_option(parser, DEFAULT_IMPLS)
    parser.add_argument("--sizes", default="1,1025,2049,4097,8193,16385,32769,65537",
                        help="mpiarena's sizes, on Netgauge's grid 1 + 1024 k")
    parser.add_argument("--launches", type=int, default=6, help="mpiarena launches per library")
    parser.add_argument("--rounds", type=int, default=3, help="Netgauge launches per library")
    parser.add_argument("--tests", type=int, default=100, help="Netgauge round trips per "
                        "pattern and size (its -c)")
    parser.add_argument("--quiet-wait", type=float, default=30.0, help="seconds to wait before "
                        "each launch for the CPUs to idle (mpiarena's --wait-quiet)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    impls = select(discover({}, paths.impls_dir()), args.impl or DEFAULT_IMPLS)
    token = uuid.uuid4().hex
    env = {**os.environ, TAG: token}
    scratch = Path(tempfile.mkdtemp(prefix="loggp-reference-"))
    try:
        print(f"mpiarena: {load_average()}")
        db = scratch / "arena.db"
        argv = [*mpiarena_argv(), "run", *(a for i in impls for a in ("--impl", i.id)),
                "--bench", "loggp", "--np", str(NP), "--sizes", args.sizes,
                "--launches", str(args.launches), "--wait-quiet", str(args.quiet_wait),
                "--db", str(db)]
        models = loggp(run_and_load(argv, env, 1800, db))
        rounds: dict[str, list[dict[int, Row]]] = {i.id: [] for i in impls}
        home = os.environ.get("NETGAUGE")
        for impl in impls:
            binary = Path(home or "/nonexistent") / impl.id / "netgauge"
            if not binary.exists():
                print(BUILD.format(impl=impl.id, wrapper=impl.wrapper))
                continue
            for i in range(args.rounds):
                print(f"netgauge {impl.id} round {i + 1}: {wait_quiet(args.quiet_wait)}")
                rounds[impl.id].append(run_netgauge(impl, binary, max(sizes), args.tests, env))
        print(f"{'impl':14} {'parameter':9} {'size':>7} {'mpiarena us':>9} [95% interval]")
        for impl in impls:
            if impl.id in models:
                report(impl.id, models[impl.id], rounds[impl.id])
            else:
                print(f"{impl.id}: no loggp figures")
    finally:
        clean_up(token, scratch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
