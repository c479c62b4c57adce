"""Ranks that die or hang, and runs that are interrupted: the store stays valid, nothing stays."""

from __future__ import annotations

import os
import signal
import sqlite3
import time
from pathlib import Path

import pytest
from conftest import (
    IMPLS,
    MARKER,
    STARTED,
    Started,
    leftovers,
    mpiarena,
    spawn,
    watchdog_of,
)

from mpiarena.base import paths, users
from mpiarena.cluster import netns
from mpiarena.impls import lam

FIRST = IMPLS[0].id
OTHER = IMPLS[1].id
# across emulated nodes the PyPI MPICH where installed, else any but Debian's MPICH 4.0.2, whose
# ch4:ucx over TCP hangs in MPI_Finalize there now and then (docs/clusters.md): measured here in 6
# of 125 launches (0 of 125 for the PyPI MPICH 5.0.2); a hang in its selection-probe launch, which
# runs before its first cell, held that cell back by the job's whole 60 s --timeout
ACROSS = next((i.id for i in IMPLS if i.family == "mpich" and i.origin == "pypi"),
              next((i.id for i in IMPLS if not (i.family == "mpich" and i.origin == "debian")),
                   FIRST))
DAEMON_FAMILIES = [i.id for i in IMPLS if i.family in ("lam", "pvm")]  # lamd, pvmd
CAN_EMULATE = os.geteuid() == 0 and Path("/usr/sbin/sshd").exists()





def start(db: str, *extra: str, first: str = FIRST, observations: int = 300,
          launches: int = 2) -> Started:
    """A run of launches (two) of first and another implementation, observations long enough
    (with the default) that a test catches first's ranks alive."""
    impls = [f"--impl={i}" for i in dict.fromkeys([first, OTHER])]
    proc = spawn("run", *impls, "--bench", "pingpong", "--sizes", "8,1K", "--launches",
                 str(launches), "--observations", str(observations), "--db", db, *extra)
    STARTED.append(proc)
    return proc


def ranks_of(impl_id: str) -> list[int]:
    """pids of running core processes built for impl_id, started by this test session."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and f"/{impl_id}-" in os.readlink(entry / "exe") and \
                    MARKER.encode() in (entry / "environ").read_bytes().split(b"\0"):
                pids.append(int(entry.name))
        except OSError:
            continue
    return sorted(pids)


def wait_for(predicate, timeout: float = 60.0, run: Started | None = None):
    """predicate's first true value within timeout; fails at once, with its errors, if the run
    ended first (its cells can then never come)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := predicate():
            return value
        if run is not None and run.poll() is not None:
            raise AssertionError(f"the run ended ({run.returncode}) first: "
                                 f"{run.communicate()[1][-2000:]}")
        time.sleep(0.01)
    raise AssertionError("condition never met")


def cells(db: str) -> list[tuple[str, str, str]]:
    """Every cell so far ([] while the store is still being created)."""
    try:
        return sqlite3.connect(db).execute("SELECT variant, status, COALESCE(reason, '') "
                                           "FROM cells ORDER BY seq").fetchall()
    except sqlite3.OperationalError:
        return []


@pytest.mark.parametrize("victim", [FIRST, *DAEMON_FAMILIES])
def test_a_killed_rank_fails_its_implementation_only(db, victim):
    proc = start(db, "--timeout", "20", first=victim, launches=1)  # a second asserts no more
    wait_for(lambda: any(v == victim for v, _, _ in cells(db)), run=proc)
    os.kill(wait_for(lambda: ranks_of(victim))[-1], signal.SIGKILL)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 4, err  # cells failed
    mine = [c for c in cells(db) if c[0] == victim]
    assert any(status == "failed" and "exit status" in reason for _, status, reason in mine)
    assert all(status == "ok" for v, status, _ in cells(db) if v != victim)
    assert f"{victim} failed" in out
    assert leftovers() == []


def test_a_hung_rank_times_out(db):
    proc = start(db, "--timeout", "3", launches=1)  # the hang is in the first launch
    wait_for(lambda: any(v == FIRST for v, _, _ in cells(db)), run=proc)
    victim = wait_for(lambda: ranks_of(FIRST))[-1]
    os.kill(victim, signal.SIGSTOP)
    _out, err = proc.communicate(timeout=300)
    assert proc.returncode == 4, err  # cells failed
    assert any(status == "failed" and "no answer within" in reason
               for v, status, reason in cells(db) if v == FIRST)
    assert leftovers() == []


@pytest.mark.parametrize("sig, first", [(signal.SIGINT, FIRST), (signal.SIGTERM, FIRST),
                                        *((signal.SIGINT, d) for d in DAEMON_FAMILIES)])
def test_interrupt_keeps_what_was_measured(db, sig, first):
    proc = start(db, first=first)
    wait_for(lambda: len(cells(db)) >= 2, run=proc)
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "kept what was measured" in err
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert con.execute("SELECT status FROM runs").fetchone()[0] == "incomplete"
    assert con.execute("SELECT COUNT(*) FROM rank_seconds").fetchone()[0] > 0
    assert leftovers() == []


def stale_ipc() -> list[str]:
    """System V shared memory and semaphores of the rank user (LAM's usysv makes them) while
    none of its processes runs (other test sessions' runs may own them)."""
    user = users.lookup()
    if user is None or any(f"Uid:\t{user.uid}\t" in _read(p) for p in
                           Path("/proc").glob("[0-9]*/status")):
        return []
    found = []
    for table, column in (("/proc/sysvipc/shm", 7), ("/proc/sysvipc/sem", 4)):
        rows = [ln.split() for ln in Path(table).read_text().splitlines()[1:]]
        found += [f"{table} {r[1]}" for r in rows if int(r[column]) == user.uid]
    return found


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def left_by(pid: int) -> list[str]:
    """Processes, daemons, scratch directories, stale LAM sessions and System V objects left by
    mpiarena pid."""
    live = lam.live_session_suffixes()
    sessions = [str(s) for s in Path("/tmp").glob("lam-*-arena*")
                if s.name.rsplit("-", 1)[-1] not in live]
    return (leftovers(grace=0) + [str(d) for d in paths.scratch_dir().glob(f"run-{pid}.*")]
            + sessions + stale_ipc())


@pytest.mark.parametrize("victim", dict.fromkeys([FIRST, *DAEMON_FAMILIES]))
def test_a_killed_mpiarena_leaves_nothing_within_seconds(db, victim):
    proc = start(db, first=victim)
    wait_for(lambda: any(v == victim for v, _, _ in cells(db)) and ranks_of(victim), run=proc)
    proc.kill()  # SIGKILL: no chance to tear anything down; its watchdog does
    proc.communicate(timeout=60)
    wait_for(lambda: not left_by(proc.pid), timeout=10)
    again = start(db, first=victim, observations=2)  # only to see it end well
    _out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    con = sqlite3.connect(db)
    statuses = [r[0] for r in con.execute("SELECT status FROM runs ORDER BY id")]
    assert statuses == ["incomplete", "complete"]  # the second marked the first
    assert "incomplete" in mpiarena("list", "--db", db).stdout
    assert leftovers() == []


def test_what_a_killed_mpiarena_and_its_watchdog_left_is_cleaned_by_the_next_run(db):
    victim = DAEMON_FAMILIES[0] if DAEMON_FAMILIES else FIRST
    proc = start(db, first=victim)
    wait_for(lambda: any(v == victim for v, _, _ in cells(db)) and ranks_of(victim), run=proc)
    os.kill(watchdog_of(proc.pid), signal.SIGKILL)
    proc.kill()
    proc.communicate(timeout=60)
    assert wait_for(lambda: ranks_of(victim) or leftovers(grace=0))  # its jobs outlive it
    again = start(db, first=victim, observations=2)  # only to see it end well
    _out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    assert "cleaned up" in err and "earlier mpiarena that crashed" in err
    assert left_by(proc.pid) == [] and leftovers() == []


@pytest.mark.skipif(not CAN_EMULATE, reason="needs root and sshd")
def test_a_killed_mpiarena_takes_its_emulated_cluster_with_it(db):
    proc = start(db, "--cluster", "emulated:nodes=2,link=1gbit", first=ACROSS)
    mine = f"{netns.PREFIX}run{proc.pid}-"  # the namespaces its cluster is made of

    def made() -> list[str]:
        return [ns for ns in netns.existing() if ns.startswith(mine)]

    wait_for(lambda: any(v == ACROSS for v, _, _ in cells(db)) and made(), run=proc)
    proc.kill()
    proc.communicate(timeout=60)
    wait_for(lambda: not made() and not left_by(proc.pid), timeout=10)
