#!/usr/bin/env python3
"""Harness overhead: mpiarena's pingpong medians against a minimal hand-written C ping-pong.

For each implementation the script builds bench/minimal_pingpong.c with the implementation's
own compiler wrapper (mpiarena's CFLAGS), launches it exactly as mpiarena launches its core
(the family's launcher flags, one core per rank, the same rank user when run as root), and
alternates it with `mpiarena run --bench pingpong` (one launch each per round, the order
swapped every round) so that drift hits both. Observations are pooled per side; the ratio of
pooled medians mpiarena/minimal gets a bootstrap 95% confidence interval (launches, then
observations resampled) and a PASS/FAIL against 1.00 +- tolerance. Exit status 1 if any misses.

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
from common import fmt_t, impl_option

from mpiarena.base import paths, users
from mpiarena.base.sizes import format_size, parse_sizes
from mpiarena.impls import Implementation, discover, family_of, select
from mpiarena.platform.build import CFLAGS
from mpiarena.platform.plan import Variant
from mpiarena.runner import cleanup
from mpiarena.store import Store
from mpiarena.store.results import RunData, load
from mpiarena.suites import load as load_suite
from mpiarena.system.procs import wait_until

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "minimal_pingpong.c"
TAG = "MPIARENA_BENCH_TOKEN"  # inherited by every process either side starts
DEFAULT_IMPLS = ("mpich-4.0.2", "openmpi-4.1.4")
NP = 2
FOREIGN = {"mpiexec", "mpirun", "mpiexec.hydra", "mpiexec.mpich", "mpiexec.openmpi", "orterun",
           "prterun", "prted", "orted", "hydra_pmi_proxy", "arena"}  # as /proc/PID/comm shows them


@dataclass
class Side:
    """One side's observations, launch by launch: each a (rank 0, rank 1) half round trip."""

    launches: list[np.ndarray] = field(default_factory=list)  # one (n, 2) array per launch
    ks: set[int] = field(default_factory=set)

    def add(self, pairs: list[tuple[float, float]], ks: set[int]) -> None:
        self.launches.append(np.asarray(pairs, dtype=float).reshape(-1, 2))
        self.ks |= ks

    def reduced(self, how: str) -> list[np.ndarray]:
        """Per launch: 'max' is mpiarena's reduction, max of both ranks; 'rank0' rank 0 only."""
        return [a.max(axis=1) if how == "max" else a[:, 0] for a in self.launches]

    @property
    def n(self) -> int:
        return sum(len(a) for a in self.launches)


Got = dict[int, tuple[list[tuple[float, float]], set[int]]]  # size -> (observations, k values)


def mpiarena_argv() -> list[str]:
    """The installed `mpiarena` console script, else its entry point through this Python."""
    if exe := shutil.which("mpiarena"):
        return [exe]
    return [sys.executable, "-c", "from mpiarena.commands import main; main()"]


def foreign_mpi(token: str, names: set[str] = FOREIGN) -> int:
    """How many processes named in names (MPI launchers, proxies, mpiarena cores) not started
    by us are running."""
    count = 0
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if entry.name.isdigit() and (entry / "comm").read_text().strip() in names:
                count += f"{TAG}={token}".encode() not in (entry / "environ").read_bytes()
    return count


def tagged_pids(token: str) -> list[int]:
    """Processes whose environment carries TAG=token."""
    return cleanup.tagged_pids(token, TAG)


def kill_tagged(token: str) -> list[int]:
    """Stop every process tagged with token; return the pids that were still there."""
    return cleanup.kill_tagged(token, grace=0.0, var=TAG)


def clean_up(token: str, scratch: Path) -> None:
    """Kill whatever this bench started and remove its scratch directory; say if anything
    was still running once mpiarena's watchdog, which outlives it by its sweep, had 5 s to end
    (killing it mid-sweep was once this bench's only leftover)."""
    wait_until(lambda: not cleanup.tagged_pids(token, TAG), within=5.0)
    left = kill_tagged(token)
    shutil.rmtree(scratch, ignore_errors=True)
    if left:
        print(f"warning: killed {len(left)} leftover processes", file=sys.stderr)


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


@dataclass(frozen=True)
class Tagged:
    """A bench run's tag, the environment that carries it to everything the bench starts, and
    its scratch directory (readable by the ranks)."""

    token: str
    env: dict[str, str]
    workdir: Path


def tagged(prefix: str) -> Tagged:
    """A fresh tag and a scratch directory under /var/tmp named with `prefix`."""
    token = uuid.uuid4().hex
    workdir = Path(tempfile.mkdtemp(prefix=prefix, dir="/var/tmp"))
    workdir.chmod(0o755)
    return Tagged(token, {**os.environ, TAG: token}, workdir)


@dataclass(frozen=True)
class Scratch:
    """Where a bench's `mpiarena run`s go: their store, the environment they run in (tagged)
    and the tag."""

    db: Path
    env: dict[str, str]
    token: str


@dataclass(frozen=True)
class Setup:
    """What every comparison of one bench run shares: the sizes, the observations per cell and
    launch, the suite's target time of a loop, the scratch directory, the environment, the
    bench's tag and the bootstrap's generator."""

    sizes: list[int]
    nobs: int
    target: float
    workdir: Path
    env: dict[str, str]
    token: str
    rng: np.random.Generator


def run_minimal(impl: Implementation, binary: Path, setup: Setup) -> Got:
    """One launch of the minimal program, the way mpiarena launches its core."""
    sizes, nobs, target, workdir, env = (setup.sizes, setup.nobs, setup.target, setup.workdir,
                                         setup.env)
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
    got: Got = {s: ([], set()) for s in sizes}
    for line in out.splitlines():
        parts = line.split("\t")
        if parts[0] == "obs":
            pairs, ks = got[int(parts[1])]
            ks.add(int(parts[3]))
            pairs.append((float(parts[4]), float(parts[5])))
    return got


def run_and_load(argv: list[str], env: dict[str, str], timeout: float, db: Path) -> RunData:
    """Run an `mpiarena run` command line and read its run back from the store."""
    run(argv, env, timeout)
    store = Store(db)
    try:
        return load(store, store.resolve("latest"))
    finally:
        store.close()


def run_arena(impl: Implementation, sizes: list[int], nobs: int, db: Path,
              env: dict[str, str]) -> Got:
    """One `mpiarena run --bench pingpong`, read back through the store."""
    argv = [*mpiarena_argv(), "run", "--impl", impl.id, "--bench", "pingpong", "--sizes",
            ",".join(map(str, sizes)), "--observations", str(nobs), "--db", str(db)]
    data = run_and_load(argv, env, 600, db)
    got: Got = {}
    for size in sizes:
        group = data.cells[("pingpong", size, NP)][impl.id]
        if group.status != "ok":
            raise SystemExit(f"error: mpiarena's {impl.id} pingpong {size} B cell is "
                             f"{group.status}: {group.reason}")
        got[size] = ([(r[0] * 0.5, r[1] * 0.5) for r in group.per_rank],
                     {int(group.iterations or 0)})
    return got


def boot_medians(launches: list[np.ndarray], rng: np.random.Generator, n: int) -> np.ndarray:
    """Bootstrap medians of the pooled observations, resampling launches, then observations.

    Launches differ from each other far more than observations within one do here, so
    resampling observations alone would give an interval that is much too narrow.
    """
    flat = np.concatenate(launches)
    lens = np.array([len(a) for a in launches])
    offs = np.concatenate([[0], np.cumsum(lens)[:-1]])
    chosen = rng.integers(0, len(launches), (n, len(launches)))
    ln = lens[chosen][..., None]
    pos = (rng.random((n, len(launches), int(lens.max()))) * ln).astype(int)
    vals = flat[offs[chosen][..., None] + pos]
    vals[np.arange(lens.max()) >= ln] = np.nan  # launches with fewer observations
    return np.nanmedian(vals.reshape(n, -1), axis=1)


def ratio_ci(a: list[np.ndarray], b: list[np.ndarray], rng: np.random.Generator,
             n: int = 10000) -> tuple[float, float, float]:
    """Pooled median(a)/median(b) and its two-level percentile-bootstrap 95% interval."""
    lo, hi = np.percentile(boot_medians(a, rng, n) / boot_medians(b, rng, n), [2.5, 97.5])
    return float(np.median(np.concatenate(a)) / np.median(np.concatenate(b))), float(lo), float(hi)


def paired_ratio(a: list[np.ndarray], b: list[np.ndarray], rng: np.random.Generator,
                 n: int = 10000) -> tuple[float, float, float]:
    """Median over rounds of median(a launch)/median(b launch) of the same round, with a
    bootstrap 95% interval over rounds: the two launches of a round run seconds apart, so
    slow spells of the machine (which last seconds here) mostly cancel out.
    """
    r = np.array([np.median(x) / np.median(y) for x, y in zip(a, b, strict=True)])
    boot = np.median(r[rng.integers(0, len(r), (n, len(r)))], axis=1)
    lo, hi = np.percentile(boot, [2.5, 97.5])
    return float(np.median(r)), float(lo), float(hi)



def k_range(ks: set[int]) -> str:
    return f"{min(ks)}" if len(ks) == 1 else f"{min(ks)}-{max(ks)}"


def compare(impl: Implementation, args: argparse.Namespace, setup: Setup) -> bool:
    """Alternate both sides args.rounds times, print the figures; True if every size passes."""
    sizes, workdir, rng = setup.sizes, setup.workdir, setup.rng
    binary = build_minimal(impl, workdir)
    db = workdir / f"{impl.id}.db"
    sides = {who: {s: Side() for s in sizes} for who in ("arena", "minimal")}
    disturbed = 0
    for rnd in range(args.rounds):
        for who in ("arena", "minimal") if rnd % 2 == 0 else ("minimal", "arena"):
            disturbed += foreign_mpi(setup.token) > 0
            got = (run_arena(impl, sizes, args.observations, db, setup.env) if who == "arena"
                   else run_minimal(impl, binary, setup))
            for s, (pairs, ks) in got.items():
                sides[who][s].add(pairs, ks)
    print(f"\n{impl.id} ({impl.launcher}, {args.rounds} launches per side)")
    if disturbed:
        print(f"  warning: other MPI jobs were running at {disturbed} of {2 * args.rounds} "
              "launches; their load disturbs these figures")
    ok_all = True
    for s in sizes:
        a, m = sides["arena"][s], sides["minimal"][s]
        am, mm = (float(np.median(np.concatenate(x.reduced("max")))) for x in (a, m))
        r, lo, hi = ratio_ci(a.reduced("max"), m.reduced("max"), rng)
        r0, lo0, hi0 = ratio_ci(a.reduced("rank0"), m.reduced("rank0"), rng)
        naive = am / float(np.median(np.concatenate(m.reduced("rank0"))))
        ok = abs(r - 1) <= args.tolerance
        ok_all &= ok
        band = f"{1 - args.tolerance:.2f}..{1 + args.tolerance:.2f}"
        wide = " (CI wider than the band: more --rounds)" if lo < 1 - args.tolerance or \
            hi > 1 + args.tolerance else ""
        print(f"  {format_size(s):>7}: mpiarena median {fmt_t(am)} (n={a.n}, k={k_range(a.ks)})"
              f"  minimal median {fmt_t(mm)} (n={m.n}, k={k_range(m.ks)})")
        print(f"           mpiarena/minimal {r:.3f} [95% CI {lo:.3f}-{hi:.3f}] "
              f"{'PASS' if ok else 'FAIL'} vs {band}{wide}")
        pr, plo, phi = paired_ratio(a.reduced("max"), m.reduced("max"), rng)
        print(f"           checks: rank0/rank0 {r0:.3f} [{lo0:.3f}-{hi0:.3f}], "
              f"reported/minimal-rank0 {naive:.3f}, paired by round {pr:.3f} "
              f"[{plo:.3f}-{phi:.3f}]")
    return ok_all


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    impl_option(parser, DEFAULT_IMPLS)
    parser.add_argument("--rounds", type=int, default=20,
                        help="A/B alternations, one launch per side each (default 20)")
    parser.add_argument("--observations", type=int, default=20, help="per cell and launch")
    parser.add_argument("--sizes", default="8,1M", help="message sizes (default 8,1M)")
    parser.add_argument("--tolerance", type=float, default=0.03, help="allowed |ratio - 1|")
    parser.add_argument("--seed", type=int, default=1, help="bootstrap seed")
    args = parser.parse_args()

    sizes = parse_sizes(args.sizes)
    impls = select(discover({}, paths.impls_dir()), list(args.impl or DEFAULT_IMPLS))
    target = load_suite("quick").target_time  # the suite `mpiarena run` uses by default
    rng = np.random.default_rng(args.seed)
    tag = tagged("mpiarena-bench-")
    token, env, workdir = tag.token, tag.env, tag.workdir
    failed = False
    try:
        user = users.for_ranks()
        binding = Variant(impls[0].id, impls[0]).binding_for(NP)
        print(f"ranks run as {user.name if user else 'self'}; binding '{binding}' both sides; "
              f"{args.rounds} rounds x {args.observations} observations per side; "
              f"k so a loop lasts >= {target * 1e3:g} ms")
        print("mpiarena reduces an observation as max(rank0, rank1)/2, the minimal program "
              "reports rank0/2: the verdict uses max(rank0, rank1)/2 on both sides "
              "(like-for-like); rank0-vs-rank0 and reported-vs-rank0 are shown as checks")
        for impl in impls:
            failed |= not compare(impl, args, Setup(sizes, args.observations, target, workdir,
                                                    env, token, rng))
    finally:
        clean_up(token, workdir)
    print(f"\n{'FAIL' if failed else 'PASS'}: harness overhead "
          f"{'outside' if failed else 'within'} 1.00 +- {args.tolerance:.2f}")
    return 1 if failed else 0


def timed_run(argv: list[str], env: dict[str, str], timeout: float) -> tuple[float, int, str]:
    """Wall seconds, exit status and stderr of argv; SIGTERM (mpiarena cleans up) on timeout."""
    start = time.monotonic()
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGTERM)
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            _, err = proc.communicate()
    return time.monotonic() - start, proc.returncode, err


if __name__ == "__main__":
    sys.exit(main())
