"""Ranks that die or hang, and runs that are interrupted: the store stays valid, nothing stays."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import IMPLS, leftovers

FIRST = IMPLS[0].id
OTHER = IMPLS[1].id
DAEMON_FAMILIES = [i.id for i in IMPLS if i.family in ("lam", "pvm")]  # lamd, pvmd


STARTED: list[subprocess.Popen[str]] = []


@pytest.fixture(autouse=True)
def stop_runs_left_by_a_failed_test():
    yield
    while STARTED:
        proc = STARTED.pop()
        if proc.poll() is None:
            proc.terminate()
            proc.communicate(timeout=60)


def start(db: str, *extra: str, first: str = FIRST) -> subprocess.Popen[str]:
    impls = [f"--impl={i}" for i in dict.fromkeys([first, OTHER])]
    proc = subprocess.Popen(
        [sys.executable, "-c", "from mpiarena.cli import main; main()", "run", *impls,
         "--bench", "pingpong", "--sizes", "8,1K,64K", "--observations", "300", "--db", db,
         *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        stdin=subprocess.DEVNULL)
    STARTED.append(proc)
    return proc


def ranks_of(impl_id: str) -> list[int]:
    """pids of running core processes built for impl_id."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and f"/{impl_id}-" in os.readlink(entry / "exe"):
                pids.append(int(entry.name))
        except OSError:
            continue
    return sorted(pids)


def wait_for(predicate, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := predicate():
            return value
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
    proc = start(db, "--timeout", "20", first=victim)
    wait_for(lambda: any(v == victim for v, _, _ in cells(db)))
    os.kill(wait_for(lambda: ranks_of(victim))[-1], signal.SIGKILL)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    mine = [c for c in cells(db) if c[0] == victim]
    assert any(status == "failed" and "exit status" in reason for _, status, reason in mine)
    assert all(status == "ok" for v, status, _ in cells(db) if v != victim)
    assert f"{victim} failed" in out
    assert leftovers() == []


def test_a_hung_rank_times_out(db):
    proc = start(db, "--timeout", "3")
    wait_for(lambda: any(v == FIRST for v, _, _ in cells(db)))
    victim = wait_for(lambda: ranks_of(FIRST))[-1]
    os.kill(victim, signal.SIGSTOP)
    _out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert any(status == "failed" and "no answer within" in reason
               for v, status, reason in cells(db) if v == FIRST)
    assert leftovers() == []


@pytest.mark.parametrize("sig, first", [(signal.SIGINT, FIRST), (signal.SIGTERM, FIRST),
                                        *((signal.SIGINT, d) for d in DAEMON_FAMILIES)])
def test_interrupt_keeps_what_was_measured(db, sig, first):
    proc = start(db, first=first)
    wait_for(lambda: len(cells(db)) >= 2)
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "kept what was measured" in err
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert con.execute("SELECT status FROM runs").fetchone()[0] == "incomplete"
    assert con.execute("SELECT COUNT(*) FROM rank_seconds").fetchone()[0] > 0
    assert leftovers() == []


def test_leftovers_of_a_crashed_mpiarena_are_cleaned_and_never_reused(db):
    victim = DAEMON_FAMILIES[0] if DAEMON_FAMILIES else FIRST
    proc = start(db, first=victim)
    wait_for(lambda: any(v == victim for v, _, _ in cells(db)))
    proc.kill()  # SIGKILL: no chance to tear anything down
    proc.communicate(timeout=60)
    assert wait_for(lambda: ranks_of(victim) or leftovers(grace=0))  # its jobs outlive it
    again = start(db, first=victim)
    _out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    assert "cleaned up" in err and "earlier mpiarena that crashed" in err
    con = sqlite3.connect(db)
    statuses = [r[0] for r in con.execute("SELECT status FROM runs ORDER BY id")]
    assert statuses == ["running", "complete"]  # the first is shown as incomplete
    assert "incomplete" in subprocess.run(
        [sys.executable, "-c", "from mpiarena.cli import main; main()", "list", "--db", db],
        capture_output=True, text=True).stdout
    assert leftovers() == []
    assert not list(Path("/tmp").glob("lam-*-arena*"))
