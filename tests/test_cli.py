"""The command line for real: a run, the store it leaves, exports, and every bad input."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import sqlite3
import sys
from dataclasses import fields, replace
from pathlib import Path

import click
import pytest
from conftest import IMPLS, leftovers, mpiarena

from mpiarena.base.errors import ArenaError
from mpiarena.base.records import RunSettings
from mpiarena.platform.build import Build, build_cores

TWO = [i.id for i in IMPLS[:2]]


@pytest.mark.alone  # reads measured figures: on a quiet machine only
def test_run_list_show_export(db):
    args = [f"--impl={i}" for i in TWO]
    done = mpiarena("run", "--launches", "2",
                    *args, "--bench", "pingpong,bcast", "--sizes", "8,64K",
                    "--observations", "4", "--validate", "--db", db)
    assert done.returncode == 0, done.stderr
    if len(TWO) == 2:  # its 4 comparisons at 2 launches a side: said before measuring
        assert "note: 4 comparisons: 2 launches a side cannot decide any" in \
            " ".join(done.stderr.split())
    assert "note: --launches 2 turns suite quick's budget (105 s) off: only these launches are " \
        "measured; add --budget 105s" in " ".join(done.stderr.split()), done.stderr
    stored = json.loads(sqlite3.connect(db).execute("SELECT settings FROM runs").fetchone()[0])
    assert set(stored) <= {f.name for f in fields(RunSettings)}  # the reports read every key
    assert RunSettings.read(stored).launches == 2 and RunSettings.read(stored).validate
    # the answer first, the tables on request
    assert "Who is fastest" in done.stdout and "pingpong: half round trip" not in done.stdout
    assert "mpiarena show 1 --tables" in " ".join(done.stdout.split())
    tables = mpiarena("show", "latest", "--tables", "--db", db).stdout
    assert "pingpong: half round trip" in tables
    if len(TWO) == 2:
        assert "faster than" in tables or "indistinguishable" in tables
    listed = mpiarena("list", "--db", db)  # named for what it measured, not for suite quick
    assert "complete" in listed.stdout and "quick" not in listed.stdout
    assert done.stdout.startswith("Run 1 (complete) cells of pingpong and bcast at 8 B and "
                                  "64 KiB, ")
    assert json.loads(mpiarena("list", "--json", "--db", db).stdout)[0]["suite"] == \
        "cells of pingpong and bcast at 8 B and 64 KiB"
    rows = list(csv.DictReader(io.StringIO(mpiarena("export", "latest", "--db", db).stdout)))
    # pingpong at 2 sizes + bcast at 2 sizes, 2 launches of 4 observations, 2 ranks, per impl
    # (the machine floor measured beside a comparison named with --impl: its own rows)
    rows = [r for r in rows if r["variant"] != "floor"]
    assert len(rows) == len(TWO) * 4 * 2 * 4 * 2
    assert {r["status"] for r in rows} == {"ok"}
    assert all(float(r["seconds_per_iteration"]) > 0 for r in rows)
    for r in rows:  # the figure is in the tables' unit: pingpong reports half the round trip
        if r["bench"] == "pingpong" and r["rank"] == "0":
            assert float(r["figure"]) == pytest.approx(float(r["seconds_per_iteration"]) / 2,
                                                       rel=0.5)
    assert {r["unit"] for r in rows} == {"seconds"} and {r["launch"] for r in rows} == {"0", "1"}
    doc = json.loads(mpiarena("export", "1", "--format", "json", "--db", db).stdout)
    assert doc["run"]["status"] == "complete"
    assert doc["run"]["machine"]["cores"] >= 1
    assert {i["impl_id"] for i in doc["implementations"]} - {"floor"} == set(TWO)
    assert all(j["ranks"] and j["ranks"][0]["cpus"] for j in doc["jobs"])
    shown = mpiarena("show", "latest", "--all", "--db", db)
    assert shown.returncode == 0 and "bcast 64 KiB" in shown.stdout
    # piped, the tables are narrow: their titles must still be whole lines
    lines = shown.stdout.splitlines()
    assert "bcast: MPI_Bcast from rank 0 (2 ranks)" in lines, shown.stdout
    assert "pingpong: half round trip between ranks 0 and 1 (2 ranks)" in lines, shown.stdout
    _summary_export_matches_the_tables(db, shown.stdout)


def _summary_export_matches_the_tables(db: str, shown: str) -> None:
    """The summary export validates against its schema and says what the tables say."""
    import jsonschema

    from mpiarena.report.summary_export import SCHEMA

    doc = json.loads(mpiarena("export", "latest", "--summary", "--format", "json",
                              "--db", db).stdout)
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    records = {(r["variant"], r["bench"], r["size"]): r for r in doc["records"]
               if r["variant"] != "floor"}
    assert len(records) == len(TWO) * 4
    for (variant, _, _), r in records.items():
        assert r["launches"] == 2 and r["observations"] == 8 and r["unit"] == "seconds"
        assert r["ci_low"] <= r["figure"] <= r["ci_high"]
        assert r["ci_confidence"] == 0.5  # two launches: their range holds the median half the time
        # both the range, the rerun's widened by the run-to-run spread
        assert r["rerun_low"] < r["ci_low"] and r["ci_high"] < r["rerun_high"]
        assert r["rerun_confidence"] == 0.0  # of two launches, which a rerun's may both miss
        if r["verdict"] is not None:
            assert r["fastest"] != variant and r["ratio_to_fastest"] >= 1
    rows = list(csv.DictReader(io.StringIO(mpiarena("export", "latest", "--summary", "--db",
                                                    db).stdout)))
    assert len(rows) == len(records) and float(rows[0]["figure"]) > 0
    from mpiarena.base import units

    pingpong = records[TWO[0], "pingpong", 8]
    assert units.seconds(pingpong["figure"]) in shown  # the table's own figure


def _broken_prefix(tmp_path: Path, version_banner: str) -> Path:
    bin_dir = tmp_path / "broken" / "bin"
    bin_dir.mkdir(parents=True)
    for name in ("mpicc", "mpiexec"):
        script = bin_dir / name
        script.write_text(f"#!/bin/sh\necho '{version_banner}'\necho 'cc1: fatal error: "
                          "mpi.h: No such file or directory' >&2\nexit 1\n")
        script.chmod(0o755)
    return tmp_path / "broken"


@pytest.mark.parametrize("args, message", [
    (["run", "--impl", "nosuch-1.0"], "unknown implementation 'nosuch-1.0'"),
    (["run", "--sizes", "1,x"], "'x' is not a message size"),
    (["run", "--sizes", "64..8"], "runs backwards"),
    (["run", "--np", "0"], "rank counts must be 1 or more"),
    (["run", "--np", "two"], "bad rank count list"),
    (["run", "--bench", "pingpong,warp"], "unknown benchmark warp"),
    (["run", "--suite", "/no/such.toml"], "suite '/no/such.toml' not found"),
    (["run", "--suite", "/"], "cannot read suite file"),
    (["show", "42"], "no store at"),
    (["run", "--sizes", ""], "empty size list"),
    (["run", "--bench", ""], "--bench '' has an empty benchmark name"),
    (["run", "--bench", "pingpong,,bcast"], "has an empty benchmark name"),
    (["run", "--np", ""], "bad rank count list ''"),
    (["run", "--timeout", "-1"],
     "'-1' is not a duration above 0; give seconds or a unit, e.g. --timeout 90s, 3m or 1h"),
    (["run", "--timeout", "soon"], "'soon' is not a duration above 0"),
    (["run", "--max-time", "0"], "'0' is not a duration above 0; give seconds or a unit, e.g. "
     "--max-time 90s"),
    (["reproduce", "cleary2006", "--timeout", "-1"], "is not a duration above 0"),
    (["run", "--timeout", "inf"], "'inf' is not a duration above 0"),
    (["run", "--budget", "3x"], "'3x' is not a duration above 0; give seconds or a unit, e.g. "
     "--budget 90s, 3m or 1h, or off for none"),
    (["program", "--np", "2,4", "--", "prog"], "this command runs at one rank count"),
    (["export", "--format", "xml"], "'xml' is not one of"),
])
def test_bad_input_is_one_line_and_exit_2(args, message, db):
    done = mpiarena(*args, "--db", db)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and message in lines[0], done.stderr
    assert leftovers() == []


def test_suite_variant_for_no_known_implementation(tmp_path, db):
    suite = tmp_path / "v.toml"
    suite.write_text('benchmarks = ["pingpong"]\n[[variant]]\nimpl = "nosuch"\nname = "x"\n')
    done = mpiarena("run", "--suite", str(suite), "--db", db)
    assert done.returncode == 2, done.stdout
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, done.stderr
    assert f"suite {suite}: variant 'x' is for impl 'nosuch', which is neither a family " \
        "(mpich, openmpi, impi, lam, pvm, tcp, floor) nor an implementation found here (" \
        in lines[0]
    assert all(i.id in lines[0] for i in IMPLS)


def test_wrapper_that_is_no_mpi(tmp_path, db):
    prefix = _broken_prefix(tmp_path, "hello")
    done = mpiarena("run", "--impl", f"broken={prefix}", "--db", db)
    assert done.returncode == 2
    assert "implementation 'broken' is not usable" in done.stderr


def test_wrapper_that_cannot_compile(tmp_path, db):
    prefix = _broken_prefix(tmp_path, "mpicc for MPICH version 9.9")
    done = mpiarena("run", "--impl", f"broken={prefix}", "--db", db)
    assert done.returncode == 2
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "building the core" in lines[0] and "mpi.h" in lines[0]
    assert not list(Path(tmp_path).glob("**/.build-*"))


def test_a_data_directory_that_is_a_file_is_one_line(tmp_path, db):
    home = tmp_path / "home"
    home.write_text("not a directory")
    done = mpiarena("run", "--impl", TWO[0], "--bench", "pingpong", "--db", db,
                    env={"MPIARENA_HOME": str(home)})
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"mpiarena: error: {home} is not a directory, so mpiarena cannot keep {home / 'impls'} "
        "there: remove it, or set MPIARENA_HOME to a directory"]


def test_cores_build_side_by_side_each_with_its_own_outcome(tmp_path, monkeypatch):
    monkeypatch.setenv("MPIARENA_HOME", str(tmp_path / "home"))  # nothing built yet
    broken = replace(IMPLS[0], id="broken", wrapper=Path("/bin/false"))
    built = build_cores([IMPLS[0], broken, IMPLS[1]])
    assert [type(b) for b in built] == [Build, ArenaError, Build]
    assert [b.impl.id for b in built if isinstance(b, Build)] == [IMPLS[0].id, IMPLS[1].id]
    assert "broken: building the core with /bin/false failed" in str(built[1])


def test_store_survives_bad_input(db):
    assert mpiarena("run", "--launches", "2",
                    "--impl", TWO[0], "--bench", "pingpong", "--sizes", "8",
                    "--observations", "2", "--db", db).returncode == 0
    assert mpiarena("run", "--impl", "nosuch", "--db", db).returncode == 2
    assert sqlite3.connect(db).execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1


@pytest.mark.alone  # reads measured figures: on a quiet machine only
def test_adaptive_sampling_adds_launches_until_the_precision_or_says_so(db):
    done = mpiarena("run", f"--impl={TWO[0]}", "--bench", "pingpong", "--sizes", "8,64K",
                    "--launches", "2", "--observations", "3", "--precision", "5%",
                    "--max-time", "3", "--db", db)
    assert done.returncode == 0, done.stderr
    assert "Adaptive sampling to +-5.0%" in done.stdout
    con = sqlite3.connect(db)
    launches = [n for (n,) in con.execute(
        "SELECT COUNT(DISTINCT launch) FROM cells WHERE status='ok' GROUP BY size")]
    # two launches can never give a 95% interval over launches: adaptive sampling adds some
    assert len(launches) == 2 and all(n >= 3 for n in launches), launches
    reached = "2 of 2 cells reached it" in done.stdout
    assert reached or "never" in done.stdout
    bad = mpiarena("run", "--precision", "150%", "--db", db)
    assert bad.returncode == 2 and "between 0% and 100%" in bad.stderr


@pytest.mark.alone  # decides from measured figures: on a quiet machine only
def test_compare_calls_a_regression_across_runs(tmp_path, db):
    openmpi = next((i.id for i in IMPLS if i.family == "openmpi"), None)
    if openmpi is None:
        pytest.skip("needs Open MPI for its TCP transport")
    suite = tmp_path / "tcp.toml"
    suite.write_text('benchmarks = ["pingpong"]\nsizes = "8,1K"\nobservations = 4\n'
                     'launches = 6\ninit_launches = 0\n'
                     '[[variant]]\nimpl = "openmpi"\nname = "tcp"\n'
                     'env = { OMPI_MCA_btl = "self,tcp" }\n')
    assert mpiarena("run", "--impl", openmpi, "--suite", str(suite), "--db", db).returncode == 0
    same = mpiarena("compare", "1", "1", "--db", db)
    assert same.returncode == 0 and "0 regression, 0 improvement" in same.stdout
    done = mpiarena("compare", "1", "1", "--pair", f"{openmpi}={openmpi}:tcp", "--db", db)
    assert done.returncode == 0, done.stderr
    assert f"regression pingpong 8 B, 2 ranks, {openmpi} -> {openmpi}:tcp" in done.stdout
    bad = mpiarena("compare", "1", "1", "--pair", "nosuch=other", "--db", db)
    assert bad.returncode == 2 and "share no cell" in bad.stderr


def test_raw_tcp_is_a_reference_not_a_ceiling(db):
    mpich = next((i.id for i in IMPLS if i.family == "mpich"), None)
    if mpich is None or "tcp" not in {i.id for i in IMPLS}:
        pytest.skip("needs MPICH and raw TCP")
    done = mpiarena("run", "--impl", mpich, "--impl", "tcp", "--bench", "pingpong", "--sizes",
                    "1K", "--launches", "2", "--observations", "3", "--tables", "--db", db)
    assert done.returncode == 0, done.stderr
    found = re.search(rf"^{mpich}: (\d+\.\d\d) times the pingpong bandwidth of tcp "
                      r"\(the reference\) at 1 KiB$", done.stdout, re.M)
    assert found, done.stdout
    # shared memory beats loopback TCP (0.4-0.7 us against 35-45 us here): more than raw TCP
    assert float(found.group(1)) > 1
    assert "ceiling" not in done.stdout and "% of raw TCP" not in done.stdout


def test_where_options_reach_each_command_as_one_choice(tmp_path, db):
    """--cluster, --hosts and --slurm are one record in run, tune and reproduce: two at once is
    one line naming all three, before anything runs."""
    hosts = tmp_path / "hosts"
    hosts.write_text("localhost\n")
    for argv in (["run"], ["tune", "--dir", str(tmp_path / "tuned")], ["reproduce", "nevin1996"]):
        bad = mpiarena(*argv, "--cluster", "emulated:nodes=2", "--hosts", str(hosts), "--db", db)
        assert bad.returncode == 2, (argv, bad.stderr)
        assert bad.stderr.strip() == ("mpiarena: error: choose one of --cluster, --hosts and "
                                      "--slurm"), (argv, bad.stderr)
    assert not Path(db).exists()


def test_a_run_without_iproute2_compares_and_says_nothing_of_ip(db, tmp_path):
    """Containers and minimal images have no `ip`: a run that makes no emulated cluster must not
    need it (the orphan sweep asked `ip netns list` unconditionally: a traceback)."""
    bare = tmp_path / "bin"
    bare.mkdir()
    for folder in ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"):
        for exe in Path(folder).iterdir() if Path(folder).is_dir() else ():
            if exe.name != "ip" and not (bare / exe.name).exists():
                (bare / exe.name).symlink_to(exe)
    assert shutil.which("ip", path=str(bare)) is None
    done = mpiarena("run", "--impl", "tcp", "--bench", "pingpong", "--sizes", "8", "--launches",
                    "1", "--db", db, env={"PATH": f"{Path(sys.executable).parent}:{bare}"})
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "Run 1 (complete)" in done.stdout


@pytest.mark.parametrize("command", [("list",), ("show", "latest"), ("export", "latest"),
                                     ("compare", "1", "2"), ("history",),
                                     ("explain", "latest", "a", "b")])
def test_a_reading_command_never_makes_a_store(tmp_path, command):
    db = tmp_path / "missing.db"
    done = mpiarena(*command, "--db", str(db))
    assert done.returncode == 2 and f"no store at {db}" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not db.exists()


OSU_LATENCY = Path(__file__).parent / "suite-output" / "osu-5.3" / "osu_latency.out"


@pytest.fixture
def imported(db: str) -> str:
    """A store of one imported OSU latency run (no MPI job): run 1, variant mpich-4.0.2."""
    done = mpiarena("import", "osu", str(OSU_LATENCY), "--impl", "mpich-4.0.2", "--db", db)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == f"stored run 1 in {Path(db).resolve()}"
    return db


# each old spelling: its arguments, what says the new one took its value, the notice
OLD_SPELLINGS = {
    "history --size": (["history", "--size", "8"], "pingpong 8 B", "--size is now --sizes"),
    "plot -o": (["plot", "1", "-o", "{tmp}/plots"], "files to {tmp}/plots",
                "-o/--output is now --dir"),
    "show --output": (["show", "1", "--output"], "--launch-output shows the output of an",
                      "--output is now --launch-output"),
    "tune --coll": (["tune", "--impl", "mpich-4.0.2", "--coll", "barrierx", "--dir", "{tmp}/t"],
                    "--bench barrierx: mpiarena tunes", "--coll is now --bench"),
    "tune -o": (["tune", "-o", "{tmp}/t"], "tune needs --impl ID", "-o/--output is now --dir"),
    "run --time 30": (["run", "--time", "30"], "go with --sbatch",
                      "--time is now --sbatch-time"),
    "profile --build": (["profile", "--impl", "mpich-4.0.2", "--build", "{tmp}/nosuch.c", "--",
                         "x"], "--compile {tmp}/nosuch.c: no such file",
                        "--build is now --compile"),
}


@pytest.mark.parametrize("spelling", sorted(OLD_SPELLINGS))
def test_an_old_spelling_still_works_with_a_one_line_notice(spelling, imported, tmp_path):
    args, took, notice = OLD_SPELLINGS[spelling]
    done = mpiarena(*(a.format(tmp=tmp_path) for a in args), "--db", imported)
    said = done.stdout + done.stderr
    assert took.format(tmp=tmp_path) in said, said
    notices = [ln for ln in done.stderr.splitlines() if ln.startswith("mpiarena: deprecated:")]
    assert len(notices) == 1 and notice in notices[0], done.stderr


def test_one_duration_parser_a_bare_number_is_seconds():
    from mpiarena.commands.durations import DURATION, DURATION_OR_OFF, SlurmTime

    assert [DURATION.convert(t, None, None) for t in ("90", "90s", "1.5m", "1h")] == \
        [90.0, 90.0, 90.0, 3600.0]
    assert DURATION_OR_OFF.convert("off", None, None) == 0.0
    with pytest.raises(click.BadParameter, match="not a duration above 0"):
        DURATION.convert("off", None, None)
    # --sbatch-time is Slurm's: its own forms kept (a bare number is its minutes), a unit
    # converted to H:MM:SS (rounded up to a second)
    assert [SlurmTime().convert(t, None, None) for t in ("1:30:00", "2-12", "90s", "1.5h",
                                                         "30")] == \
        ["1:30:00", "2-12", "0:01:30", "1:30:00", "30"]
    with pytest.raises(click.BadParameter, match="not a Slurm time limit"):
        SlurmTime().convert("1.5", None, None)


def test_np_is_one_rank_count_list_everywhere():
    from mpiarena.commands.suite_options import ONE_RANK_COUNT, RANK_COUNTS

    assert RANK_COUNTS.convert("2,4", None, None) == (2, 4)
    assert ONE_RANK_COUNT.convert("4", None, None) == (4,)
    with pytest.raises(click.BadParameter, match="runs at one rank count"):
        ONE_RANK_COUNT.convert("2,4", None, None)
    commands = dict(_option_types())
    assert {commands[c] for c in commands} == {"ranks"}, commands


def _option_types():
    """(command, the type of its --np) for every command that has one."""
    from mpiarena.commands import all_commands

    for command in all_commands():
        for p in command.params:
            if isinstance(p, click.Option) and "--np" in p.opts:
                yield command.name, p.type.name


def test_run_help_says_percent_once():
    done = mpiarena("run", "--help")
    text = " ".join(done.stdout.split())
    assert "95% CI" in text and "e.g. 2%" in text and "%%" not in text


def test_dry_run_prints_the_plan_and_an_estimate_and_measures_nothing(db):
    args = ["run", "--impl", TWO[0], "--bench", "pingpong", "--sizes", "8,64K", "--launches",
            "3", "--observations", "2", "--seed", "7", "--db", db]
    fresh = mpiarena(*args, "--dry-run")
    assert fresh.returncode == 0, fresh.stderr
    assert fresh.stdout.splitlines()[:5] == [
        "Plan of cells of pingpong at 8 B and 64 KiB (nothing measured; seed 7):",
        f"  variants (1): {TWO[0]}",
        "  cells: 2 (benchmarks pingpong; sizes 8 B, 64 KiB; ranks 2)",
        "  launches: 3 of each variant per rank count, 3 in all with the start-up launches; 6 "
        "cell-launches",
        "  comparisons: 0"]
    assert "budget: none" in fresh.stdout and "estimate: none: no earlier run" in fresh.stdout
    assert not Path(db).exists()  # nothing measured, no store made
    done = mpiarena(*args)
    assert done.returncode == 0, done.stderr
    wall = json.loads(sqlite3.connect(db).execute("SELECT harness FROM runs").fetchone()[0])["wall"]
    again = mpiarena(*args, "--dry-run")
    said = re.findall(r"estimate: about (\d+) s for these launches \(from 1 earlier run on this "
                      r"machine in ", again.stdout)
    assert said and wall / 3 - 1 <= int(said[0]) <= wall * 3 + 1, (wall, again.stdout)
    assert sqlite3.connect(db).execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1


def test_the_old_spelling_of_program_runs_it_with_a_notice():
    res = mpiarena("app", "--help")
    assert res.returncode == 0
    assert res.stdout.startswith("Usage: mpiarena program ")
    assert res.stderr.strip() == ("mpiarena: deprecated: 'mpiarena app' is now 'mpiarena "
                                  "program' (the old spelling goes in the next release)")
