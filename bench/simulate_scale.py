#!/usr/bin/env python3
"""What `mpiarena simulate` costs at scale, and how close it comes to a measured run.

Scale: one `mpiarena simulate` per rank count (default 8, 64, 256; --np adds 1024) of one
collective at one size (default allreduce 64 KiB) and one selector, one observation: its wall
time and the simulator's peak memory. Target: 1024 simulated ranks per collective and size in
at most 3 minutes here.

Validation (--against RUN --db FILE): for each MPI library of a measured run (pingpong at 2
ranks, bcast and allreduce at more; e.g. `mpiarena run --cluster emulated:nodes=4,link=1gbit
--np 2,4 --bench pingpong,bcast,allreduce --sizes 8,1K,64K,1M --launches 3`), a simulation
calibrated from its pingpong with its family's selector, validated against the run: the error
per bcast and allreduce cell. Target: within 25%. Exit status 1 if a target is missed.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness_overhead import mpiarena_argv

from mpiarena.analysis.simulated import validate
from mpiarena.store import Store
from mpiarena.store.results import load

SELECTOR = {"mpich": "mpich", "openmpi": "ompi", "impi": "impi"}
SCALE_TARGET = 180.0  # s for 1024 ranks, one collective, one size
ERROR_TARGET = 0.25


def mpiarena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*mpiarena_argv(), *args], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)


def scale(nps: list[int], bench: str, size: str, selector: str) -> bool:
    ok = True
    print(f"{'ranks':>6} {'wall s':>8} {'peak RSS MiB':>13}  simulated {bench} {size}, "
          f"{selector}'s selection logic")
    with tempfile.TemporaryDirectory() as tmp:
        for np_ in nps:
            began = time.monotonic()
            done = mpiarena("simulate", "--np", str(np_), "--bench", bench, "--sizes", size,
                            "--selector", selector, "--observations", "1", "--timeout", "900",
                            "--db", str(Path(tmp) / f"s{np_}.db"))
            wall = time.monotonic() - began
            rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
            if done.returncode != 0:
                print(f"{np_:>6} failed: {done.stderr.strip()}")
                ok = False
                continue
            line = next((ln.strip() for ln in done.stdout.splitlines()
                         if ln.strip().startswith("smpi-") and "  " in ln.strip()), "?")
            print(f"{np_:>6} {wall:>8.1f} {rss:>13.0f}  {line}")
            if np_ == 1024 and wall > SCALE_TARGET:
                print(f"       missed: over {SCALE_TARGET:.0f} s")
                ok = False
    return ok


def against(db: str, run: str) -> bool:
    store = Store(Path(db))
    real = load(store, store.resolve(run))
    family = {i.impl_id: i.family for i in real.implementations}
    impl_of = {v.variant: v.impl_id for v in real.variant_rows}
    ok = True
    for variant in real.variants:
        selector = SELECTOR.get(family.get(impl_of.get(variant, ""), ""))
        if selector is None:
            continue
        done = mpiarena("simulate", "--calibrate-from", f"{real.run_id}:{variant}",
                        "--validate-against", str(real.run_id), "--selector", selector,
                        "--db", db)
        if done.returncode != 0:
            print(f"{variant}: simulate failed: {done.stderr.strip()}")
            ok = False
            continue
        sim = load(store, store.resolve("latest"))
        print(f"{variant} ({selector}'s selection logic, calibrated from its pingpong):")
        for e in validate(sim, real):
            if e.measured_variant != variant or e.key.bench == "pingpong":
                continue
            miss = abs(e.error) > ERROR_TARGET
            ok &= not miss
            print(f"  {e.key.bench:<10} {e.key.size:>8} B {e.key.np:>3} ranks: simulated "
                  f"{e.simulated * 1e6:10.1f} us, measured {e.measured * 1e6:10.1f} us, "
                  f"{e.error:+6.0%}{'  MISSED' if miss else ''}")
    return ok


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--np", default="8,64,256", help="rank counts (add 1024 for the target)")
    p.add_argument("--bench", default="allreduce")
    p.add_argument("--size", default="64K")
    p.add_argument("--selector", default="mpich")
    p.add_argument("--against", help="a measured run to validate against (with --db)")
    p.add_argument("--db", default="mpiarena.db")
    a = p.parse_args()
    ok = scale([int(x) for x in a.np.split(",")], a.bench, a.size, a.selector)
    if a.against:
        ok &= against(a.db, a.against)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
