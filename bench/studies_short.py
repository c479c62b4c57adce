#!/usr/bin/env python3
"""The four studies' short mode (`mpiarena reproduce STUDY --quick`) with every family each
names, on the study's own emulated network: how long each takes and what its conclusions read.

tests/test_reproduce.py runs the short modes with fewer families or a faster link, enough for
what it asserts; this runs them whole: chau2001 with LAM/MPI, MPICH, PVM and raw TCP on Fast
Ethernet, dimitrov2002 with LAM/MPI, MPICH and Intel MPI on Fast Ethernet, nevin1996 on FDDI,
cleary2006 on this machine. Prints per study the seconds and the count of each conclusion's
status. Exit status 1 if a study fails or a conclusion row is missing.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from harness_overhead import mpiarena_argv

from mpiarena import studies
from mpiarena.analysis.verdicts import ClaimResult
from mpiarena.base import paths
from mpiarena.impls import discover


def ids(families: list[str]) -> list[str]:
    """--impl options for the families found here, one MPICH (Debian's)."""
    found = [f.impl for f in discover({}, paths.impls_dir()) if f.impl is not None]
    return [f"--impl={i.id}" for i in found if i.family in families and not (
        i.family == "mpich" and i.origin != "debian")]


def short(name: str, extra: list[str], tmp: Path) -> tuple[float, Counter[str], int]:
    """Seconds, results of the conclusion rows, and how many the study has."""
    out = tmp / f"{name}.md"
    began = time.monotonic()
    done = subprocess.run([*mpiarena_argv(), "reproduce", name, "--quick", "--db",
                           str(tmp / f"{name}.db"), "-o", str(out), "--timeout", "20", *extra],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)
    took = time.monotonic() - began
    if done.returncode != 0:
        sys.exit(f"{name}: mpiarena reproduce failed: {done.stderr.strip()[-400:]}")
    section = out.read_text().split("## Conclusions checked", 1)[1]
    rows = [ln for ln in section.splitlines() if ln.startswith("| **")]
    seen = Counter(next((s for s in ClaimResult if f"**{s}**" in r), "?") for r in rows)
    return took, seen, len(studies.load(name).claims)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("study", nargs="*", default=["chau2001", "dimitrov2002", "nevin1996",
                                                 "cleary2006"])
    args = ap.parse_args()
    families = {"chau2001": ["lam", "mpich", "pvm", "tcp"], "dimitrov2002": ["lam", "impi",
                                                                              "mpich"],
                "nevin1996": ["lam", "mpich"], "cleary2006": ["lam", "mpich"]}
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.study:
            extra = ids(families[name]) + (["--cluster", "local"] if name == "cleary2006"
                                           else [])
            took, seen, claims = short(name, extra, Path(tmp))
            rows = sum(seen.values())
            failed |= rows != claims
            print(f"{name}: {took:.0f} s, {rows} of {claims} conclusions: "
                  + ", ".join(f"{n} {s}" for s, n in seen.most_common()))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
