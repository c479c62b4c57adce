"""`mpiarena program --tune`: the planted case (a program that is mostly a 256 KiB allreduce, run on
MPICH with a slow allreduce algorithm forced as its default) must come out as a verified gain;
a program that spends under 1% in MPI must give no false gain in simulated races; bad input is
one line and exit 2, a configuration that makes the program fail is dropped with its reason."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
from pathlib import Path

import jsonschema
import pytest
from conftest import IMPLS, leftovers, mpiarena

from mpiarena import report
from mpiarena.analysis.program_tuning_space import (
    BINDING,
    MIN_SHARE,
    check_search,
    configurations,
    space,
)
from mpiarena.analysis.race import Race, verification_pairs, verify
from mpiarena.base.errors import ArenaError
from mpiarena.impls import Implementation, family_of
from mpiarena.impls.base import Algorithm
from mpiarena.store import Store

PROGRAM = Path(__file__).resolve().parent / "programs" / "allreduce_heavy.c"
MPICH4 = next((i for i in IMPLS if i.id == "mpich-4.0.2"), None)
OPENMPI4 = next((i for i in IMPLS if i.id == "openmpi-4.1.4"), None)
need_mpich = pytest.mark.skipif(MPICH4 is None, reason="needs mpich-4.0.2")
SCHEMA = Path(report.__file__).parent / "summary.schema.json"
# MPICH's smp allreduce on one node at 2 ranks, handed from ch4's shared memory to MPIR as `tune`
# forces it: slower per step than its default here. A launch of 100 steps of 1 MiB took 0.17 s
# against 0.08 s with mpiexec (2.1x, 2026-11-27); one of 200 steps of 256 KiB 0.10-0.14 s against
# 0.06-0.08 s, too close to launch overhead: a race's verification read 1.38x (95% CI 1.04-1.40)
PLANTED = {"MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": "smp",
           "MPIR_CVAR_ALLREDUCE_POSIX_INTRA_ALGORITHM": "mpir"}


def _run_id(out: str) -> int:
    m = re.search(r"program tuning run (\d+)", out)
    assert m, out
    return int(m.group(1))


@need_mpich
def test_the_planted_slow_allreduce_is_found_and_the_gain_verified(db, tmp_path):
    # 10 verification launches a side: with 20, the planted gain read 1.81x (95% CI 1.78-1.84)
    # and 1.82x (1.74-1.84) here; a plant of 1.4-1.7x (200 steps of 256 KiB) read intervals
    # reaching 0.98 and 1.02 at 6 and 10 launches, as the launches' levels are bimodal
    res = mpiarena("program", "--tune", "--impl", "mpich-4.0.2", "--search", "allreduce",
                   "--budget", "50s", "--launches", "10", "--dir", str(tmp_path / "tuned"),
                   "--db", db, "--", str(PROGRAM), "100", "1024", env=PLANTED)
    assert res.returncode == 0, res.stdout + res.stderr
    # the space is printed first, with why allreduce is in it
    assert re.search(r"allreduce: default, .*smp.*\(MPI_Allreduce takes \d+\.\d% of the "
                     r"program's time\)", res.stdout.splitlines()[1]), res.stdout
    assert re.search(r"round \d+: \d configurations left, \d+ launches spent, \d+ s of the "
                     "budget left", res.stderr), res.stderr
    store = Store(Path(db))
    run_id = _run_id(res.stdout)
    configs = {c.variant: c for c in store.program_configs(run_id)}
    winner = next(c for c in configs.values() if c.role)
    assert winner.values["allreduce"] not in ("default", "smp")
    # the planted default is slower than the winner by the verification's launches
    gain = re.search(rf"mpich-4.0.2: {re.escape(winner.variant)} is ([\d.]+)x faster than the "
                     r"default \(95% CI ([\d.]+)-([\d.]+), \d+ fresh launches each\)", res.stdout)
    assert gain and float(gain.group(2)) > 1.05, res.stdout
    kinds = [x.kind for x in store.program_launches(run_id)]
    assert kinds.count("profiled") == 1 and kinds.count("verify") == 2 * 10
    shown = mpiarena("show", str(run_id), "--db", db).stdout
    assert f"export MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM={winner.values['allreduce']}" in shown
    assert re.search(r"launch: env MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=\S+ "
                     r"MPIR_CVAR_ALLREDUCE_POSIX_INTRA_ALGORITHM=mpir \S*mpiexec", shown)
    # --dir DIR: MPICH's CVARs as an environment file, the launch line in its head
    written = (tmp_path / "tuned" / "mpich-4.0.2.env").read_text()
    assert f"written to {tmp_path / 'tuned'}" in shown and written in res.stdout.replace(
        "    ", "")
    assert re.search(r"^#   \S*mpiexec\S* -n 2 .*allreduce_heavy\S* 100 1024$", written, re.M)
    assert f"export MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM={winner.values['allreduce']}\n" in written
    summary = json.loads(mpiarena("export", str(run_id), "--summary", "--format", "json",
                                  "--db", db).stdout)
    jsonschema.validate(summary, json.loads(SCHEMA.read_text()))
    tuned = summary["tuned"]
    assert [r["variant"] for r in tuned["ready"]] == [winner.variant]
    assert tuned["ready"][0]["env_file"] == written and tuned["ready"][0]["selection_file"] is None
    assert any(v["gain"] and v["ci_low"] > 1.05 for v in tuned["verified"])
    # the HTML report: the race as a figure first, the tuning's words
    html = tmp_path / "r.html"
    assert mpiarena("report", str(run_id), "--db", db, "-o", str(html)).returncode == 0
    page = html.read_text()
    assert 'id="tuned"' in page and 'alt="The race"' in page
    assert f"export MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM={winner.values['allreduce']}" in page
    assert leftovers() == []


@pytest.mark.skipif(OPENMPI4 is None, reason="needs openmpi-4.1.4")
def test_open_mpi_takes_the_winners_rules_file(tmp_path):
    """The forced allreduce as coll/tuned's rules file, loaded through the two MCA variables in
    place of the forcing one: Open MPI runs the program with a real algorithm and refuses the
    allreduce with a number it does not have (so the file is read, at 2 ranks)."""
    assert OPENMPI4 is not None
    family = family_of(OPENMPI4)
    binary = tmp_path / "arh"
    subprocess.run([str(OPENMPI4.wrapper), "-O2", "-o", str(binary), str(PROGRAM)], check=True,
                   env=OPENMPI4.environ())
    launch = family.launch(OPENMPI4, 2, "none", os.geteuid() == 0)

    def run(algorithm: str) -> subprocess.CompletedProcess[str]:
        forced = {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
                  "OMPI_MCA_coll_tuned_allreduce_algorithm": algorithm}
        selection = family.selection_file("openmpi", forced)
        assert selection is not None and selection.name == "openmpi.rules"
        (tmp_path / selection.name).write_text(selection.text)
        env = selection.env(forced, str(tmp_path / selection.name))
        assert "OMPI_MCA_coll_tuned_allreduce_algorithm" not in env
        return subprocess.run([*launch.argv, str(binary), "4", "16"], capture_output=True,
                              text=True, timeout=120,
                              env={**OPENMPI4.environ(), **launch.env, **env})

    ring = run("4")
    assert ring.returncode == 0, ring.stdout + ring.stderr
    assert "0 4 0 0  # ring" in (tmp_path / "openmpi.rules").read_text()
    bogus = run("99")
    assert bogus.returncode != 0, bogus.stdout + bogus.stderr


# --- the honest case: nothing to gain, simulated --------------------------------------------


def _no_mpi_library() -> Implementation:
    """Open MPI's family with nothing installed behind it: its algorithm table stands in."""
    return Implementation("openmpi-sim", "openmpi", "4.1.4", "test", Path("/nonexistent/mpicc"),
                          Path("/nonexistent/mpiexec"))


def test_a_program_under_1_percent_in_mpi_searches_its_binding_only():
    impl = _no_mpi_library()
    derived = space(impl, {"MPI_Allreduce": 0.004, "MPI_Init": 0.003, "MPI_Send": 0.002},
                    "core", None)
    assert [d.name for d in derived.dimensions] == [BINDING]
    assert {x.name for x in derived.left_out} == {"allreduce"}
    assert MIN_SHARE > 0.01


def test_no_false_gain_in_19_of_20_simulated_races():
    """Every configuration of a program that spends under 1% in MPI runs alike: launch times
    drawn from one distribution (lognormal, 4% between launches, and now and then a launch
    slowed by 30%, as a busy machine does); the race and the verification must not call any
    of them faster than the default in more than 1 of 20 races."""
    impl = _no_mpi_library()
    configs = configurations(space(impl, {"MPI_Allreduce": 0.005}, "core",
                                   check_search(("allreduce", "binding"))))
    assert len(configs) == 14 and configs[0].is_default
    rng = random.Random(41)

    def launch() -> float:
        return 2.0 * rng.lognormvariate(0, 0.04) * (1.3 if rng.random() < 0.05 else 1.0)

    gains = 0
    for _ in range(20):
        race = Race({impl.id: [c.id for c in configs]})
        while not race.finished:
            for c in race.alive():
                race.record(c, launch())
            race.close_round()
        winners = race.winners()
        fresh = {c: [launch() for _ in range(10)] for c in (impl.id, winners[impl.id])}
        verified = verify(fresh, verification_pairs(winners, None, {impl.id: impl.id}))
        gains += any(v.gain for v in verified)
    assert gains <= 1


def _raced(eliminate: bool, halving: bool) -> Race:
    rng = random.Random(1)
    speed = {"lib": 2.0, "lib:a": 1.0, "lib:b": 1.01, "lib:c": 1.6, "lib:d": 1.3}
    race = Race({"lib": list(speed)}, eliminate=eliminate, halving=halving)
    while not race.finished:
        for c in race.alive():
            race.record(c, speed[c] * rng.lognormvariate(0, 0.03))
        race.close_round()
    return race


def test_the_rule_drops_the_slower_and_those_that_cannot_beat_the_leader():
    race = _raced(True, halving=False)
    assert set(race.dropped) == {"lib", "lib:b", "lib:c", "lib:d"}
    assert race.dropped["lib"].reason.startswith("slower than lib:a: ")
    # 1% slower than the leader: never slower by more than 5%, but out of contention
    assert race.dropped["lib:b"].reason.startswith("cannot beat lib:a by more than 5%: ")
    # a dropped configuration got no launch after its round
    assert all(len(race.walls[c]) == d.round for c, d in race.dropped.items())


def test_halving_ends_the_race_sooner_and_the_grid_decides_every_configuration():
    rule, halved, grid = _raced(True, False), _raced(True, True), _raced(False, True)
    assert rule.winners() == halved.winners() == grid.winners() == {"lib": "lib:a"}
    # the first rung a halving can drop at: round 2's two launches a side cannot back the test
    assert any(d.round == 4 and d.reason.startswith("halved out: in the slower half of the ")
               for d in halved.dropped.values())
    assert halved.spent < rule.spent
    # the grid drops nothing and stops once the rule has decided every one against the leader
    assert not grid.dropped and grid.decided == {"lib", "lib:b", "lib:c", "lib:d"}
    assert grid.spent == 5 * grid.rounds and halved.spent < grid.spent


# --- bad input --------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "said"), [
    (["--tune", "--search", "allreduce,frobnicate"], "--search frobnicate: no such setting"),
    (["--search", "allreduce"], "--search goes with --tune"),
    (["--tune", "--no-profile"], "--tune needs the profiled launch"),
    (["--dir", "tuned"], "--dir goes with --tune"),
])
def test_bad_tuning_input_is_one_line_and_exit_2(db, args, said):
    res = mpiarena("program", *args, "--db", db, "--", str(PROGRAM))
    assert res.returncode == 2, res.stdout + res.stderr
    assert said in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr


@need_mpich
def test_a_budget_too_small_for_one_round_is_one_line_and_exit_2(db):
    # 0.5 s: less than the build and the profiled launch before the race take on any machine
    res = mpiarena("program", "--tune", "--impl", "mpich-4.0.2", "--budget", "0.5s", "--db", db,
                   "--", str(PROGRAM), "20", "64")
    assert res.returncode == 2, res.stdout + res.stderr
    # the space came first, from the profile: on this machine every program gets its binding
    assert "  binding: default, none (every program: where its ranks run (default: core))" in \
        res.stdout.splitlines(), res.stdout
    assert "is too small for one round" in res.stderr, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert leftovers() == []


@need_mpich
def test_a_configuration_that_makes_the_program_fail_is_dropped_with_the_reason(
        db, monkeypatch):
    assert MPICH4 is not None
    broken = Algorithm("allreduce", "bogus", "MPIR_Allreduce_intra_bogus",
                       (("MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM", "bogus"),))
    monkeypatch.setattr(type(family_of(MPICH4)), "algorithms", lambda self, impl, coll: [broken])
    # forked from this process, the patch with it (in this process, its watchdog would be this
    # process's, and every command forked after it would start none of its own)
    done = mpiarena("program", "--tune", "--impl", "mpich-4.0.2", "--search", "allreduce",
                    "--budget", "30s", "--launches", "4", "--db", db, "--", str(PROGRAM), "20",
                    "64")
    assert done.returncode == 0, done.stderr
    store = Store(Path(db))
    run_id = store.resolve("latest")
    configs = {c.variant: c for c in store.program_configs(run_id)}
    dropped = configs["mpich-4.0.2:allreduce=bogus"]
    assert dropped.dropped == 1 and dropped.reason.startswith("the program failed: exit status")
    assert "Invalid MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM" in dropped.reason
    assert configs["mpich-4.0.2"].role == "winner"  # the default, alone, led its race
    assert leftovers() == []


def test_check_search_names_every_setting_it_knows():
    assert check_search(()) is None
    with pytest.raises(ArenaError, match="allreduce, bcast, reduce, allgather, alltoall, eager, "
                       "binding"):
        check_search(("nothing",))
