"""Ranks that die or hang, and runs that are interrupted: the store stays valid, nothing stays."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from conftest import IMPLS, leftovers

FIRST = IMPLS[0].id
OTHERS = [i.id for i in IMPLS[1:2]]


def start(db: str, *extra: str) -> subprocess.Popen[str]:
    impls = [f"--impl={i}" for i in [FIRST, *OTHERS]]
    return subprocess.Popen(
        [sys.executable, "-c", "from mpiarena.cli import main; main()", "run", *impls,
         "--bench", "pingpong", "--sizes", "8,1K,64K", "--observations", "300", "--db", db,
         *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        stdin=subprocess.DEVNULL)


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
    return sqlite3.connect(db).execute("SELECT variant, status, COALESCE(reason, '') FROM cells "
                                       "ORDER BY seq").fetchall()


def test_a_killed_rank_fails_its_implementation_only(db):
    proc = start(db)
    victims = wait_for(lambda: ranks_of(FIRST))
    os.kill(victims[-1], signal.SIGKILL)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    mine = [c for c in cells(db) if c[0] == FIRST]
    assert any(status == "failed" and "exit status" in reason for _, status, reason in mine)
    assert all(status == "ok" for v, status, _ in cells(db) if v != FIRST)
    assert f"{FIRST}[/]" in out or f"{FIRST} failed" in out
    assert leftovers() == []


def test_a_hung_rank_times_out(db):
    proc = start(db, "--timeout", "3")
    victim = wait_for(lambda: ranks_of(FIRST))[-1]
    os.kill(victim, signal.SIGSTOP)
    _out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert any(status == "failed" and "no answer within" in reason
               for v, status, reason in cells(db) if v == FIRST)
    assert leftovers() == []


def test_interrupt_keeps_what_was_measured(db):
    for sig in (signal.SIGINT, signal.SIGTERM):
        proc = start(db)
        wait_for(lambda: Path(db).exists() and len(cells(db)) >= 2)
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 130, err
        assert "kept what was measured" in err
        con = sqlite3.connect(db)
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        status = con.execute("SELECT status FROM runs ORDER BY id DESC").fetchone()[0]
        assert status == "incomplete"
        assert con.execute("SELECT COUNT(*) FROM observations").fetchone()[0] > 0
        assert leftovers() == []
