"""Two runs at once never harm each other: each sees the others measuring, a killed third takes
only what is its own with it, and no sweep takes a cluster that its maker is still making."""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import (
    GROUP,
    IMPLS,
    Started,
    cluster_name,
    keeping_clusters,
    leftovers,
    mpiarena,
    spawn,
)

from mpiarena.base import paths
from mpiarena.base.tags import OWNER_VAR
from mpiarena.cluster import emulated, netns
from mpiarena.runner import presence
from mpiarena.runner.cleanup import sweep_stale, tagged_pids
from mpiarena.system.owners import Owner, start_time
from mpiarena.system.procs import wait_until

CAN_EMULATE = os.geteuid() == 0 and Path("/usr/sbin/sshd").exists()
needs_root = pytest.mark.skipif(not CAN_EMULATE, reason="needs root and sshd")
LAM = next((i.id for i in IMPLS if i.family == "lam"), None)


@pytest.fixture
def runs() -> Iterator[list[Started]]:
    """Runs a test starts; those still going when it fails are stopped."""
    started: list[Started] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.terminate()
            proc.communicate(timeout=60)


def start(runs: list[Started], db: Path, *args: str) -> Started:
    proc = spawn("run", "--bench", "pingpong", "--launches", "2", "--db", str(db), *args)
    runs.append(proc)
    return proc


def cells(db: Path) -> list[str]:
    """Status of every cell measured so far."""
    try:
        return [s for (s,) in sqlite3.connect(db).execute("SELECT status FROM cells")]
    except sqlite3.OperationalError:  # not made yet
        return []


def owner_of(proc: Started) -> Owner:
    return Owner(proc.pid, start_time(proc.pid))


@needs_root
@pytest.mark.skipif(LAM is None, reason="needs LAM/MPI (a family with daemons)")
def test_two_runs_at_once_complete_and_a_killed_third_takes_only_its_own(tmp_path, runs):
    on_cluster = start(runs, tmp_path / "a.db", "--cluster", "emulated:nodes=2", "--impl", "tcp",
                       "--sizes", "8,1K", "--observations", "200")
    with_daemons = start(runs, tmp_path / "b.db", "--impl", str(LAM), "--sizes", "8,1K",
                         "--launches", "4", "--observations", "400")
    victim = start(runs, tmp_path / "c.db", "--impl", "tcp", "--sizes", "8,1K,64K",
                   "--launches", "50", "--observations", "2000")
    owners = [owner_of(proc) for proc in runs]
    victim_owner = owners[-1]
    # all three measure at once: each has started jobs (LAM's: its universe of lamd daemons)
    assert wait_until(lambda: all(tagged_pids(str(o), OWNER_VAR) for o in owners), within=60), \
        "the runs did not overlap"
    measuring = {m.owner.pid: m for m in presence.others_measuring()}
    assert {proc.pid for proc in runs} <= set(measuring)
    assert measuring[victim.pid].where == "local"
    assert measuring[on_cluster.pid].where == "emulated:nodes=2,link=100mbit,mtu=1500"
    assert emulated.in_use(f"run{on_cluster.pid}")
    victim.kill()  # SIGKILL: its watchdog sweeps what it left, and only that
    victim.communicate(timeout=30)
    assert wait_until(lambda: not tagged_pids(str(victim_owner), OWNER_VAR)
                      and not list(paths.scratch_dir().glob(f"run-{victim.pid}.*")), within=15)
    assert victim.pid not in {m.owner.pid for m in presence.others_measuring()}
    for proc, db in ((on_cluster, "a.db"), (with_daemons, "b.db")):
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert cells(tmp_path / db) and set(cells(tmp_path / db)) == {"ok"}, err
        # the launches that began beside the other runs say so, in the first lines (after the
        # figures a run of one library opens with)
        first = "\n".join(out.splitlines()[:8])
        assert "another mpiarena run was measuring on this machine" in first, out
    assert not {on_cluster.pid, with_daemons.pid} & {m.owner.pid for m in
                                                     presence.others_measuring()}
    assert not [ns for ns in netns.existing() if f"run{on_cluster.pid}-" in ns]
    assert leftovers() == []


def test_a_registration_is_only_counted_while_its_run_lives(monkeypatch):
    """A live process other than this one counts; one whose pid died or was reused does not,
    and the sweep removes its file. A run in a group (this test session's) counts only its
    group's; one in none counts every group's."""
    sleeper, elsewhere = (subprocess.Popen(["sleep", "60"]) for _ in range(2))
    try:
        folder = presence._dir()
        live = Owner(sleeper.pid, start_time(sleeper.pid))
        reused = Owner(sleeper.pid, (live.start or 0) + 1)
        other = Owner(elsewhere.pid, start_time(elsewhere.pid))
        for owner, group in ((live, GROUP), (reused, GROUP), (other, f"{GROUP}-other")):
            (folder / f"{owner}.json").write_text(json.dumps(
                {"owner": str(owner), "since": 1.0, "command": "mpiarena run", "where": "local",
                 "group": group}))
        mine = {sleeper.pid, elsewhere.pid}
        assert [m.owner for m in presence.others_measuring() if m.owner.pid in mine] == [live]
        with monkeypatch.context() as ungrouped:
            ungrouped.delenv(presence.GROUP_VAR)
            assert {m.owner for m in presence.others_measuring()
                    if m.owner.pid in mine} == {live, other}
        sleeper.kill()
        sleeper.wait()
        assert sleeper.pid not in {m.owner.pid for m in presence.others_measuring()}
        presence.forget_stale()
        assert not (folder / f"{live}.json").exists() and not (folder / f"{reused}.json").exists()
        assert (folder / f"{other}.json").exists()  # alive, in its group
    finally:
        for proc in (sleeper, elsewhere):
            proc.kill()
            proc.wait()
        presence.forget_stale()


def test_a_sweep_in_a_group_takes_only_what_its_groups_crashed_runs_left(monkeypatch):
    """Processes a crashed run left (its owner tag names a dead mpiarena) are swept by a run of
    the same presence group, or of none, never by another group's: two test sessions on one
    machine, each killing mpiarena on purpose, do not clean up, and say so, for each other."""
    gone = subprocess.Popen(["true"])
    dead = Owner(gone.pid, start_time(gone.pid))
    gone.wait()
    left = {name: subprocess.Popen(["sleep", "60"], env={**os.environ, OWNER_VAR: str(dead),
                                                        presence.GROUP_VAR: group})
            for name, group in (("mine", GROUP), ("theirs", f"{GROUP}-other"))}
    try:
        assert sweep_stale(paths.scratch_dir()) == 1
        assert left["mine"].wait(timeout=10) == -9 and left["theirs"].poll() is None
        with monkeypatch.context() as ungrouped:
            ungrouped.delenv(presence.GROUP_VAR)
            assert sweep_stale(paths.scratch_dir()) == 1
        assert left["theirs"].wait(timeout=10) == -9
    finally:
        for proc in left.values():
            proc.kill()
            proc.wait()


def a_claim(name: str, owner: Owner, with_state: bool = True) -> Path:
    """A cluster's directory as its maker leaves it after claiming it, before or after it wrote
    its state, with its switch namespace made and no node yet."""
    folder = emulated.clusters_dir() / name
    folder.mkdir()
    if with_state:
        (folder / "state.json").write_text(json.dumps({
            "spec": "emulated:nodes=2", "nodes": [["n0", "10.213.250.1"]], "sshd": [],
            "owner": owner.pid, "owner_start": owner.start}))
    netns.add(f"{netns.PREFIX}{name}-sw")
    return folder


MAKING, NOSTATE, REUSED = (cluster_name(what) for what in ("making", "nostate", "reused"))


@pytest.fixture
def maker() -> Iterator[subprocess.Popen[bytes]]:
    """A live process that stands for an mpiarena making a cluster."""
    proc = subprocess.Popen(["sleep", "60"])
    yield proc
    proc.kill()
    proc.wait()
    for name in (MAKING, NOSTATE, REUSED, emulated.run_name(proc.pid)):
        emulated.teardown(name)


@needs_root
def test_a_cluster_being_made_is_not_swept_until_its_maker_is_gone(maker):
    with keeping_clusters():  # owned by no live mpiarena: no `cluster down --all` meanwhile
        alive = Owner(maker.pid, start_time(maker.pid))
        made = a_claim(MAKING, alive)
        reused = a_claim(REUSED, Owner(maker.pid, (alive.start or 0) + 1))  # pid reused since
        stateless = a_claim(NOSTATE, alive, with_state=False)  # as earlier versions made them
        slow = a_claim(emulated.run_name(maker.pid), alive, with_state=False)  # named for it
        os.utime(slow, (time.time() - emulated.GRACE - 1,) * 2)
        # listed while being made (its nodes' links not there yet), not an error
        status = mpiarena("cluster", "status")
        assert status.returncode == 0, status.stderr
        assert "changing" in status.stdout
        sweep_stale(paths.scratch_dir())
        assert made.exists() and stateless.exists() and slow.exists() and not reused.exists()
        assert f"{netns.PREFIX}{MAKING}-sw" in netns.existing()
        assert f"{netns.PREFIX}{REUSED}-sw" not in netns.existing()
        os.utime(stateless, (time.time() - emulated.GRACE - 1,) * 2)  # its maker had time
        maker.kill()
        maker.wait()
        sweep_stale(paths.scratch_dir())
    assert not made.exists() and not stateless.exists() and not slow.exists()
    assert not [ns for ns in netns.existing() if ns.startswith(
        (f"{netns.PREFIX}{MAKING}-", f"{netns.PREFIX}{NOSTATE}-", f"{netns.PREFIX}{slow.name}-"))]


def holds(pid: int, path: Path) -> bool:
    """pid has path open."""
    try:
        return any(os.readlink(fd) == str(path) for fd in Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False


@needs_root
def test_clusters_made_at_once_take_turns_and_never_share_a_subnet():
    names = [cluster_name("first"), cluster_name("second")]
    path = emulated.runtime_dir() / "clusters.lock"
    with keeping_clusters():  # kept up: no other test session's `cluster down --all` meanwhile
        lock = open(path, "a")  # noqa: SIM115 (held across the calls)
        fcntl.flock(lock, fcntl.LOCK_EX)
        ups = [subprocess.Popen([sys.executable, "-c",
                                 "from mpiarena.commands import main; main()", "cluster", "up",
                                 "--name", name], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
               for name in names]
        try:
            assert wait_until(lambda: all(holds(up.pid, path) for up in ups), within=30)
            time.sleep(0.5)  # both wait for the lock: neither has claimed anything
            assert not [n for n in emulated.names() if n in names]
            fcntl.flock(lock, fcntl.LOCK_UN)
            for up in ups:
                _out, err = up.communicate(timeout=60)
                assert up.returncode == 0, err
            subnets = {(emulated.clusters_dir() / n / "subnet").read_text() for n in names}
            assert len(subnets) == 2
        finally:
            lock.close()
            for up in ups:
                if up.poll() is None:
                    up.kill()
                    up.communicate()
            for name in names:
                mpiarena("cluster", "down", name)
    assert not [ns for ns in netns.existing()
                if ns.startswith(tuple(f"{netns.PREFIX}{n}-" for n in names))]


def test_the_owner_of_a_pid_is_told_from_the_next_holder_of_that_pid():
    me = Owner.me()
    assert me.alive() and Owner.parse(str(me)) == me
    assert Owner.parse(str(me.pid)) == Owner(me.pid, None)  # as earlier versions tagged
    assert not Owner(me.pid, (me.start or 0) + 1).alive()
    assert Owner.parse("run") is None and Owner.parse("12.x") is None


@needs_root
def test_a_cluster_kept_up_survives_the_sweep_of_an_mpiarena_with_another_home(tmp_path,
                                                                               monkeypatch):
    """Namespaces are the machine's, so their state is too: an mpiarena with another
    MPIARENA_HOME sees the cluster kept up, lists it, and its sweep leaves it alone."""
    name = cluster_name("homes")
    with keeping_clusters():  # kept up: no other test session's `cluster down --all` meanwhile
        assert mpiarena("cluster", "up", "--name", name).returncode == 0
        try:
            monkeypatch.setenv("MPIARENA_HOME", str(tmp_path / "elsewhere"))
            assert name not in emulated.sweep_orphans()
            assert f"{netns.PREFIX}{name}-n0" in netns.existing()
            cluster = emulated.load(name)
            assert cluster is not None and cluster.owner is None
        finally:
            emulated.teardown(name)
