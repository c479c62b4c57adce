#!/usr/bin/env python3
"""Quick suite wall time: `mpiarena run --suite quick` over three implementations, end to end.

Times the real command with the core builds cached (warm; the verdict) and, unless --no-cold,
again with MPIARENA_HOME pointing at an empty directory that only links the installed
implementations, so the three cores are compiled inside the timed run (cold). Prints wall
time, cells and their statuses; exit status 1 if the warm run takes longer than --limit
seconds or does not complete with every cell measured.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

from harness_overhead import TAG, clean_up, mpiarena_argv

from mpiarena import paths
from mpiarena.build import build_core
from mpiarena.impls import discover, select
from mpiarena.store import Store

DEFAULT_IMPLS = ("mpich-4.0.2", "openmpi-4.1.4", "mpich-5.0.2")


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


def measure(label: str, ids: list[str], suite: str, db: Path, env: dict[str, str],
            limit: float) -> bool:
    """Run the suite once, print its figures; True if it completed every cell within limit."""
    argv = [*mpiarena_argv(), "run", "--suite", suite, *(a for i in ids for a in ("--impl", i)),
            "--db", str(db)]
    wall, code, err = timed_run(argv, env, 3 * limit)
    status, nobs = "missing", 0
    cells: Counter[str] = Counter()
    if db.exists():
        store = Store(db)
        try:
            run_id = store.resolve("latest")
            status = store.status(store.run(run_id))
            cells = Counter(str(c.status) for c in store.cells(run_id))
            nobs = sum(len(o) for o in store.observations(run_id).values())
        finally:
            store.close()
    ok = code == 0 and status == "complete" and wall <= limit and not cells["failed"]
    detail = ", ".join(f"{n} {s}" for s, n in sorted(cells.items()))
    print(f"{label}: {wall:.1f} s wall, exit {code}, run {status}, {sum(cells.values())} cells "
          f"({detail or 'none'}), {nobs} observations -> {'PASS' if ok else 'FAIL'} "
          f"(limit {limit:.0f} s)")
    if code != 0:
        print(f"  mpiarena said: {err.strip().splitlines()[-1] if err.strip() else '-'}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", action="append", help="implementation id (repeatable); "
                        f"default: {', '.join(DEFAULT_IMPLS)}")
    parser.add_argument("--suite", default="quick", help="suite to time (default quick)")
    parser.add_argument("--limit", type=float, default=180.0, help="seconds (default 180)")
    parser.add_argument("--no-cold", action="store_true", help="skip the cold-cache run")
    args = parser.parse_args()

    ids = list(args.impl or DEFAULT_IMPLS)
    impls_dir = paths.impls_dir()
    for impl in select(discover({}, impls_dir), ids):
        build_core(impl)  # untimed: the warm run finds every core built
    token = uuid.uuid4().hex
    env = {**os.environ, TAG: token}
    env.pop("MPIARENA_HOME", None)
    tmp = Path(tempfile.mkdtemp(prefix="mpiarena-bench-", dir="/var/tmp"))
    tmp.chmod(0o755)  # the cold run's scratch directory lives here; ranks must reach it
    try:
        print(f"mpiarena run --suite {args.suite} --impl {' --impl '.join(ids)} "
              f"({os.cpu_count()} cores)")
        ok = measure("warm (cores cached)", ids, args.suite, tmp / "warm.db", env, args.limit)
        if not args.no_cold:
            home = tmp / "home"
            home.mkdir(mode=0o755)
            (home / "impls").symlink_to(impls_dir)
            measure("cold (cores compiled in the run; not the verdict)", ids, args.suite,
                    tmp / "cold.db", {**env, "MPIARENA_HOME": str(home)}, args.limit)
            built = [p for p in (home / "builds").glob("*") if (p / "arena").is_file()]
            print(f"  the cold run compiled {len(built)} cores into an empty build cache")
    finally:
        clean_up(token, tmp)
    print(f"{'PASS' if ok else 'FAIL'}: warm {args.suite} suite "
          f"{'completed within' if ok else 'did not complete within'} {args.limit:.0f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
