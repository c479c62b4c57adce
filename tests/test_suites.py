import json
import os
import sqlite3

import pytest
from conftest import IMPLS, mpiarena

from mpiarena.base.errors import ArenaError
from mpiarena.suites import builtin_names, load


def test_builtin_suites_load():
    assert {"quick", "default", "transports"} <= set(builtin_names())
    quick = load("quick")
    assert "pingpong" in quick.benchmarks and quick.nps == (2,)
    assert not load("default").variants  # every implementation as it comes
    assert [v.name for v in load("transports").variants] == ["tcp", "tcp", "lamd", "direct"]


def test_suite_file_with_variant(tmp_path):
    f = tmp_path / "mine.toml"
    f.write_text('benchmarks = ["pingpong"]\nsizes = "8,1K"\nnp = [2]\n'
                 '[[variant]]\nimpl = "mpich"\nname = "nobind"\nbinding = "none"\n')
    suite = load(str(f))
    assert suite.sizes == (8, 1024)
    assert suite.variants[0].binding == "none"


@pytest.mark.parametrize("text, message", [
    ('benchmarks = ["pingpong"', "not valid TOML"),
    ('benchmarks = ["warp"]', "unknown benchmark warp"),
    ('benchmarks = ["pingpong"]\nnp = [0]', "rank counts must be 1 or more"),
    ('benchmarks = ["pingpong"]\nsizes = "8..x"', "not a message size"),
    ('sizes = "8"', "missing field"),
    ('benchmarks = ["pingpong"]\nup_to_cores = "yes"', "'up_to_cores' must be true or false"),
    ('benchmarks = ["pingpong"]\nnp = "two"',
     r"'np' must be a list of integers, e.g. np = \[2, 4\], got 'two'"),
    ('benchmarks = ["pingpong"]\nnp = 2', "'np' must be a list of integers"),
    ('benchmarks = "pingpong"', "'benchmarks' must be a list of strings"),
    ('benchmarks = ["pingpong"]\nobservations = "many"', "'observations' must be an integer"),
    ('benchmarks = ["pingpong"]\ntarget_time = "1ms"', "'target_time' must be a number"),
    ('benchmarks = ["pingpong"]\nobservation = 5', "unknown field 'observation'; the fields are"),
    ('benchmarks = ["pingpong"]\nvariant = "x"', "'variant' must be a list of tables"),
    ('benchmarks = ["pingpong"]\n[[variant]]\nimpl = "mpich"\nname = "x"\nenv = "A=1"',
     "'env' must be a table"),
    ('benchmarks = ["pingpong"]\n[[variant]]\nimpl = "mpich"\nname = "x"\nexclusive = "no"',
     "'exclusive' must be true or false"),
    ('benchmarks = ["pingpong"]\n[[variant]]\nimpl = "mpich"\nname = "x"\nenvs = {}',
     "variant 'x': unknown field 'envs'; the fields are impl, name, env"),
])
def test_bad_suite_files_say_what_is_wrong(tmp_path, text, message):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(ArenaError, match=message):
        load(str(f))


def test_missing_suite_names_the_choices():
    with pytest.raises(ArenaError, match="quick"):
        load("/no/such/suite.toml")


def _nps(db: str) -> list[int]:
    return json.loads(mpiarena("export", "--format", "json", "--db", db).stdout)["run"][
        "settings"]["nps"]


@pytest.mark.skipif(os.cpu_count() != 2 or not IMPLS, reason="needs 2 cores, one implementation")
@pytest.mark.mpi
def test_default_suite_caps_ranks_at_the_cores_unless_np_asks(tmp_path):
    impl = next((i.id for i in IMPLS if i.family == "openmpi"), IMPLS[0].id)  # yields at 3 ranks
    args = ["run", "--suite", "default", "--impl", impl, "--bench", "barrier",
            "--launches", "1", "--observations", "2"]
    done = mpiarena(*args, "--db", str(tmp_path / "capped.db"))
    assert done.returncode == 0, done.stderr
    notes = [ln for ln in done.stderr.splitlines() if ln.startswith("note:")]
    assert notes == ["note: suite default: ranks 2, not 2,4: this machine has 2 cores, and polling "
                     "libraries with more ranks than cores measure the scheduler; --np 2,4 runs "
                     "them all"], done.stderr
    assert _nps(str(tmp_path / "capped.db")) == [2]
    asked = mpiarena(*args, "--np", "3", "--tables", "--db", str(tmp_path / "asked.db"))
    assert asked.returncode == 0, asked.stderr
    assert "note:" not in asked.stderr and "(3 ranks) [oversubscribed" in asked.stdout
    assert _nps(str(tmp_path / "asked.db")) == [3]
    for name in ("capped.db", "asked.db"):  # measured, not only planned
        statuses = sqlite3.connect(tmp_path / name).execute("SELECT status FROM cells")
        assert {s for (s,) in statuses} == {"ok"}, name


@pytest.mark.skipif(not IMPLS, reason="needs one implementation")
@pytest.mark.mpi
def test_on_a_hosts_file_the_cap_is_its_slots(tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("127.0.0.1 slots=3\n")
    # Open MPI yields at 3 ranks on 2 cores; MPICH's 3 polling ranks hung past the 60 s
    # timeout at start-up as often as not, and the test passed on the failed job
    impl = next((i.id for i in IMPLS if i.family == "openmpi"), IMPLS[0].id)
    done = mpiarena("run", "--suite", "default", "--impl", impl, "--bench", "wtime",
                    "--launches", "1", "--observations", "2", "--hosts", str(hosts),
                    "--db", str(tmp_path / "hosts.db"))
    assert done.returncode == 0, done.stderr
    notes = [ln for ln in done.stderr.splitlines() if ln.startswith("note:")]
    assert notes == ["note: suite default: ranks 2, 3, not 2,4: hosts:hosts has 3 cores, and "
                     "polling libraries with more ranks than cores measure the scheduler; --np "
                     "2,4 runs them all"], done.stderr
    assert _nps(str(tmp_path / "hosts.db")) == [2, 3]
    statuses = sqlite3.connect(tmp_path / "hosts.db").execute(
        "SELECT np, status FROM cells").fetchall()
    assert sorted(statuses) == [(2, "ok"), (3, "ok")], done.stdout
