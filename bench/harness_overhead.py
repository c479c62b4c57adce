#!/usr/bin/env python3
"""Harness overhead: mpiarena's pingpong medians against a minimal hand-written C ping-pong.

For each implementation the script builds bench/minimal_pingpong.c with the implementation's
own compiler wrapper (mpiarena's CFLAGS), launches it exactly as mpiarena launches its core
(the family's launcher flags, one core per rank, the same rank user when run as root), and
alternates it with `mpiarena run --bench pingpong` several times so that drift hits both.
Observations are pooled per side; the ratio of medians mpiarena/minimal gets a bootstrap 95%
confidence interval and a PASS/FAIL against 1.00 +- tolerance. Exit status 1 if any misses.

mpiarena reduces a pingpong observation as max(rank 0, rank 1) seconds per iteration * 0.5;
the minimal program reports both ranks' loop time / k / 2, so the verdict applies mpiarena's
reduction to both sides (like-for-like); rank 0 against rank 0 is printed as a check.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mpiarena import paths, users
from mpiarena.build import CFLAGS
from mpiarena.impls import Implementation, discover, family_of, select
from mpiarena.plan import Variant
from mpiarena.results import load
from mpiarena.sizes import format_size, parse_sizes
from mpiarena.store import Store
from mpiarena.suites import load as load_suite

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "minimal_pingpong.c"
TAG = "MPIARENA_BENCH_TOKEN"  # inherited by every process either side starts
DEFAULT_IMPLS = ("mpich-4.0.2", "openmpi-4.1.4")
NP = 2


@dataclass
class Side:
    """Pooled observations of one side: every observation's (rank 0, rank 1) half round trip."""

    pairs: list[tuple[float, float]] = field(default_factory=list)
    ks: set[int] = field(default_factory=set)

    def reduced(self, how: str) -> np.ndarray:
        """'max': mpiarena's reduction, max of both ranks; 'rank0': rank 0 only."""
        a = np.asarray(self.pairs, dtype=float)
        return a.max(axis=1) if how == "max" else a[:, 0]


def mpiarena_argv() -> list[str]:
    """The installed `mpiarena` console script, else its entry point through this Python."""
    if exe := shutil.which("mpiarena"):
        return [exe]
    return [sys.executable, "-c", "from mpiarena.cli import main; main()"]


def tagged_pids(token: str) -> list[int]:
    """Processes whose environment carries TAG=token."""
    needle = f"{TAG}={token}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                pids.append(int(entry.name))
    return pids


def kill_tagged(token: str) -> list[int]:
    """SIGKILL every process tagged with token; return the pids that were still there."""
    left = tagged_pids(token)
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while tagged_pids(token) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def run(argv: list[str], env: dict[str, str], timeout: float, **kw: object) -> str:
    """Run argv in its own session; on timeout SIGTERM (mpiarena cleans up), then SIGKILL."""
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, **kw)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
        raise SystemExit(f"error: {argv[0]} ran past {timeout:.0f} s") from None
    if proc.returncode != 0:
        raise SystemExit(f"error: {' '.join(argv)} exited {proc.returncode}:\n{err.strip()}")
    return out


def build_minimal(impl: Implementation, workdir: Path) -> Path:
    """minimal_pingpong.c compiled with impl's wrapper and mpiarena's flags, readable by all."""
    binary = workdir / f"minimal-{impl.id}"
    run([str(impl.wrapper), *CFLAGS, "-o", str(binary), str(SOURCE)], impl.environ(), 300)
    binary.chmod(0o755)
    return binary


def run_minimal(impl: Implementation, binary: Path, sizes: list[int], nobs: int, target: float,
                workdir: Path, env: dict[str, str]) -> dict[int, Side]:
    """One launch of the minimal program, the way mpiarena launches its core."""
    user = users.for_ranks()
    binding = Variant(impl.id, impl).binding_for(NP)
    launch = family_of(impl).launch(impl, NP, binding, os.geteuid() == 0 and user is None)
    full = impl.environ(env)
    full.update(launch.env)
    if user is not None:
        full.update(HOME=user.home, USER=user.name, LOGNAME=user.name)
    argv = [*launch.argv, str(binary), ",".join(map(str, sizes)), str(nobs), repr(target)]
    as_user: dict[str, object] = {}
    if user is not None:
        as_user = {"user": user.uid, "group": user.gid, "extra_groups": []}
    out = run(argv, full, 300, cwd=workdir, **as_user)
    sides: dict[int, Side] = {s: Side() for s in sizes}
    for line in out.splitlines():
        parts = line.split("\t")
        if parts[0] == "obs":
            side = sides[int(parts[1])]
            side.ks.add(int(parts[3]))
            side.pairs.append((float(parts[4]), float(parts[5])))
    return sides


def run_arena(impl: Implementation, sizes: list[int], nobs: int, db: Path,
              env: dict[str, str]) -> dict[int, Side]:
    """One `mpiarena run --bench pingpong`, read back through the store."""
    argv = [*mpiarena_argv(), "run", "--impl", impl.id, "--bench", "pingpong", "--sizes",
            ",".join(map(str, sizes)), "--observations", str(nobs), "--db", str(db)]
    run(argv, env, 600)
    store = Store(db)
    try:
        data = load(store, store.resolve("latest"))
    finally:
        store.close()
    sides: dict[int, Side] = {}
    for size in sizes:
        group = data.cells[("pingpong", size, NP)][impl.id]
        if group.status != "ok":
            raise SystemExit(f"error: mpiarena's {impl.id} pingpong {size} B cell is "
                             f"{group.status}: {group.reason}")
        side = sides.setdefault(size, Side())
        side.ks.add(int(group.iterations or 0))
        side.pairs += [(r[0] * 0.5, r[1] * 0.5) for r in group.per_rank]
    return sides


def ratio_ci(a: np.ndarray, b: np.ndarray, rng: np.random.Generator,
             n: int = 10000) -> tuple[float, float, float]:
    """median(a)/median(b) and its percentile-bootstrap 95% interval (sides resampled apart)."""
    ma = np.median(a[rng.integers(0, len(a), (n, len(a)))], axis=1)
    mb = np.median(b[rng.integers(0, len(b), (n, len(b)))], axis=1)
    lo, hi = np.percentile(ma / mb, [2.5, 97.5])
    return float(np.median(a) / np.median(b)), float(lo), float(hi)


def fmt_t(seconds: float) -> str:
    return f"{seconds * 1e9:.1f} ns" if seconds < 1e-6 else f"{seconds * 1e6:.2f} us"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", action="append", help="implementation id (repeatable); "
                        f"default: {', '.join(DEFAULT_IMPLS)}")
    parser.add_argument("--rounds", type=int, default=3, help="A/B alternations (default 3)")
    parser.add_argument("--observations", type=int, default=20, help="per cell and launch")
    parser.add_argument("--sizes", default="8,1M", help="message sizes (default 8,1M)")
    parser.add_argument("--tolerance", type=float, default=0.03, help="allowed |ratio - 1|")
    parser.add_argument("--seed", type=int, default=1, help="bootstrap seed")
    args = parser.parse_args()

    sizes = parse_sizes(args.sizes)
    impls = select(discover({}, paths.impls_dir()), list(args.impl or DEFAULT_IMPLS))
    target = load_suite("quick").target_time  # the suite `mpiarena run` uses by default
    rng = np.random.default_rng(args.seed)
    token = uuid.uuid4().hex
    env = {**os.environ, TAG: token}
    workdir = Path(tempfile.mkdtemp(prefix="mpiarena-bench-", dir="/var/tmp"))
    workdir.chmod(0o755)
    failed = False
    try:
        user = users.for_ranks()
        print(f"ranks run as {user.name if user else 'self'}; binding one core per rank; "
              f"{args.rounds} rounds x {args.observations} observations per side; "
              f"k so a loop lasts >= {target * 1e3:g} ms")
        print("mpiarena reduces an observation as max(rank0, rank1)/2, the minimal program "
              "reports rank0/2: the verdict uses max(rank0, rank1)/2 on both sides "
              "(like-for-like); rank0-vs-rank0 and reported-vs-rank0 are shown as checks")
        for impl in impls:
            binary = build_minimal(impl, workdir)
            db = workdir / f"{impl.id}.db"
            arena = {s: Side() for s in sizes}
            minimal = {s: Side() for s in sizes}
            for rnd in range(args.rounds):
                order = ("arena", "minimal") if rnd % 2 == 0 else ("minimal", "arena")
                for who in order:
                    got = (run_arena(impl, sizes, args.observations, db, env) if who == "arena"
                           else run_minimal(impl, binary, sizes, args.observations, target,
                                            workdir, env))
                    pooled = arena if who == "arena" else minimal
                    for s, side in got.items():
                        pooled[s].pairs += side.pairs
                        pooled[s].ks |= side.ks
            print(f"\n{impl.id} ({impl.launcher})")
            for s in sizes:
                a, m = arena[s], minimal[s]
                am, mm = np.median(a.reduced("max")), np.median(m.reduced("max"))
                r, lo, hi = ratio_ci(a.reduced("max"), m.reduced("max"), rng)
                r0, lo0, hi0 = ratio_ci(a.reduced("rank0"), m.reduced("rank0"), rng)
                rep = am / np.median(m.reduced("rank0"))
                ok = abs(r - 1) <= args.tolerance
                failed |= not ok
                print(f"  {format_size(s):>7}: mpiarena {fmt_t(am)} (n={len(a.pairs)}, "
                      f"k={sorted(a.ks)})  minimal {fmt_t(mm)} (n={len(m.pairs)}, "
                      f"k={sorted(m.ks)})")
                print(f"           ratio {r:.3f} [95% CI {lo:.3f}-{hi:.3f}]  "
                      f"{'PASS' if ok else 'FAIL'} (target {1 - args.tolerance:.2f}.."
                      f"{1 + args.tolerance:.2f}); rank0 only {r0:.3f} [{lo0:.3f}-{hi0:.3f}]; "
                      f"reported/minimal-rank0 {rep:.3f}")
    finally:
        left = kill_tagged(token)
        shutil.rmtree(workdir, ignore_errors=True)
        if left:
            print(f"warning: killed {len(left)} leftover processes", file=sys.stderr)
    print(f"\n{'FAIL' if failed else 'PASS'}: harness overhead "
          f"{'outside' if failed else 'within'} 1.00 +- {args.tolerance:.2f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
