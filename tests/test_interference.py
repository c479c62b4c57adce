"""What ran beside a launch, for real: a CPU hog beside a run is recorded, found and warned of;
a quiet machine is not; --wait-quiet waits for quiet, or gives up on a busy machine. Other work
may share this machine: where it took more than a launch can tell from none, the quiet case is
skipped, never passed."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import IMPLS, mpiarena, stored_run

from mpiarena.analysis.interference import finding
from mpiarena.base.tags import OWNER_VAR
from mpiarena.report.interference import warning_lines
from mpiarena.store import JobRow, Store
from mpiarena.system import machine_load
from mpiarena.system.machine_load import BUSY
from mpiarena.system.owners import Owner

MPI = next((i.id for i in IMPLS if i.family in ("mpich", "openmpi")), None)
SPIN = "while True: pass"
# a long-lived shell whose busy children live 0.2 s each: none is alive at both ends of a span
SHORT_LIVED = ("while :; do python3 -c 'import time\nt = time.time()\n"
               "while time.time() - t < 0.2: pass'; done")


@contextmanager
def hog(command: str) -> Iterator[int]:
    """Run a shell command pinned to core 1 in a session of its own, orphaned so that it is
    not a descendant of this process; its shell's pid; kill its session at the end."""
    leader = subprocess.run(["setsid", "sh", "-c", f"taskset -c 1 sh -c \"{command}\" "
                             ">/dev/null 2>&1 & echo $!"], capture_output=True, text=True,
                            check=True)
    pid = int(leader.stdout)
    group = os.getpgid(pid)
    try:
        time.sleep(0.3)  # running
        yield pid
    finally:
        os.killpg(group, signal.SIGKILL)


def _run(db: str, *extra: str, env: dict[str, str] | None = None
         ) -> list[machine_load.Interference]:
    done = mpiarena("run", "--impl", MPI, "--bench", "pingpong", "--sizes", "8,64K",
                    "--launches", "2", "--observations", "3", "--db", db, *extra, env=env)
    assert done.returncode == 0, done.stderr
    return [x.beside for x in finding(Store(db).jobs(1)).launches]


@pytest.mark.skipif(MPI is None, reason="needs MPICH or Open MPI")
def test_a_hog_beside_a_run_is_waited_out_recorded_found_and_warned_of(db):
    with hog(f"python3 -c '{SPIN}'"):
        beside = _run(db, "--wait-quiet", "1.2")
    assert len(beside) == 2 and all(x.share > BUSY for x in beside), beside
    assert all(x.other_cpu_s > 0.3 * x.wall_s and x.cores == os.cpu_count() for x in beside)
    # its bound; once, a fresh clone's second launch found the machine quiet after one 0.5 s
    # probe while the hog ran (its share then not recorded): the whole record, said in full
    said = [(round(x.share, 3), round(x.other_cpu_s, 3), round(x.steal_s, 3), round(x.wall_s, 3),
             round(x.waited_s, 3), x.gave_up) for x in beside]
    assert all(x.gave_up and 1.0 <= x.waited_s <= 1.3 for x in beside), said
    found = finding(Store(db).jobs(1))
    assert [x.job_id for x in found.above] == [1, 2] and found.gave_up == 2
    assert [(v.variant, v.launches) for v in found.variants()] == [(MPI, 2)]
    lines = warning_lines(found)
    assert len(lines) == 2 and all(x.startswith("warn: interference: ") for x in lines)
    assert f"{MPI}: 2 launches, up to" in lines[0] and "--wait-quiet 60" in lines[0]
    assert "gave up on a quiet machine before 2 launches" in lines[1]
    shown = mpiarena("report", "1", "--db", db, "--output", f"{db}.html")
    assert shown.returncode == 0, shown.stderr
    html = Path(f"{db}.html").read_text()  # each launch's share, marked above the threshold
    assert "others' CPU</th>" in html
    assert len(re.findall(r'<td class="num failed">\d+%</td>', html)) == 2
    # its Warnings section holds what its summary warns of, and its header what it measured
    listed = html.split('<section id="warnings">', 1)[1].split("</section>", 1)[0]
    assert "None: every cell" not in listed and listed.count("interference: ") == 2, listed
    counted = int(re.findall(r"<h2>Warnings <small>(\d+)</small>", html)[0])
    assert counted == listed.count("<li class=") >= 2
    assert f"Warnings ({counted})" in html
    assert '<div class="sub"><b>cells of pingpong at 8 B and 64 KiB</b>' in html
    assert "suite quick" not in html


@pytest.mark.skipif(MPI is None, reason="needs MPICH or Open MPI")
def test_a_launch_records_no_more_than_ran_beside_it_and_a_quiet_machine_as_quiet(db, tmp_path):
    suite = tmp_path / "long.toml"  # launches of about a second: a few ticks of others is little
    suite.write_text('benchmarks = ["pingpong"]\ntarget_time = 0.1\n')
    before = machine_load.snapshot()  # this test sees the run's processes as its own too
    # and its watchdog, which outlives the run (its sweep) as init's child: tagged as this
    # process's own (untagged, 0.20-0.21 CPU s of it read as others' in 3 of 7 fresh clones'
    # runs and skipped the quiet case)
    beside = _run(db, "--wait-quiet", "30", "--suite", str(suite),
                  env={OWNER_VAR: str(Owner.me())})
    seen = machine_load.since(before)  # what others took over the whole run
    taken = seen.other_cpu_s + seen.steal_s
    assert len(beside) == 2 and all(x.waited_s >= machine_load.PROBE for x in beside)
    assert all(x.other_cpu_s + x.steal_s <= taken + 0.05 for x in beside), (seen, beside)
    if taken >= BUSY * min(x.wall_s * x.cores for x in beside):
        pytest.skip(f"other work took {taken:.2f} CPU s during the run: not a quiet machine")
    assert all(x.share < BUSY and not x.gave_up for x in beside), beside
    assert warning_lines(finding(Store(db).jobs(1))) == []


def test_children_that_live_between_two_snapshots_count_through_their_parent():
    with hog(SHORT_LIVED) as shell:
        before = machine_load.snapshot()
        time.sleep(2)
        beside = machine_load.since(before)
        after = machine_load.snapshot()
    key = next(k for k in before.others if k[0] == shell)
    assert after.others[key].reaped - before.others[key].reaped > 1.0  # the idle shell's children
    assert beside.other_cpu_s > 1.0 and beside.share > BUSY, beside


def test_a_child_gone_unreaped_hides_nothing_its_parent_took(tmp_path):
    """A parent that ignores SIGCHLD gains none of its children's CPU: a child of 0.6 CPU s that
    ends during the span once took that much off the spinning parent's growth."""
    script = tmp_path / "autoreaped.py"
    script.write_text("import os, signal, time\n"
                      "signal.signal(signal.SIGCHLD, signal.SIG_IGN)\n"
                      "if os.fork() == 0:\n"
                      "    os.sched_setaffinity(0, {0})\n"
                      "    while time.process_time() < 0.9: pass\n"
                      "    os._exit(0)\n"
                      "while True: pass\n")
    with hog(f"exec python3 {script}") as parent:
        time.sleep(0.4)  # the child 0.6 s into its 0.9 CPU s, as the parent into its spin
        before = machine_load.snapshot()
        time.sleep(1.5)
        beside = machine_load.since(before)
    child = [p for p in before.others.values() if p.ppid == parent]
    assert len(child) == 1 and child[0].own > 0.3, child  # spinning then, gone by now
    assert beside.other_cpu_s > 1.2, beside  # the parent alone spun 1.5 s on its core


def test_own_children_are_not_others():
    spin = subprocess.Popen(["taskset", "-c", "1", "python3", "-c", SPIN])
    try:
        others = machine_load.snapshot().others
    finally:
        spin.kill()
        spin.wait()
    assert others and all(pid not in (spin.pid, os.getpid()) for pid, _ in others)


def test_a_store_written_before_launches_recorded_their_machine_opens(tmp_path):
    path = tmp_path / "v4.db"
    store = Store(path)
    run = stored_run(store, "quick", seed=5)
    store.add_job(JobRow(run_id=run, variant="a-1", np=2, topology="local", binding="core",
                         command=["mpiexec"]))
    store.close()
    db = sqlite3.connect(path)
    db.executescript("ALTER TABLE jobs DROP COLUMN interference; ALTER TABLE jobs DROP COLUMN "
                     "config; DROP TABLE configs; UPDATE meta SET value='4';")
    db.close()
    old = Store(path)
    assert [j.interference for j in old.jobs(run)] == [None]
    assert finding(old.jobs(run)).launches == []
