"""The conventions of a command-line tool: -q/--quiet and -v/--verbose, colour off with NO_COLOR
or --no-color, click's shell completion, and --json where scripts read a listing (list, impls,
doctor)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ARGV, mpiarena

OSU = Path(__file__).parent / "suite-output" / "osu-5.3" / "osu_latency.out"
COLOUR = "\x1b[32m"  # doctor's green "ok"


def _imported(db: Path, *conventions: str) -> subprocess.CompletedProcess[str]:
    return mpiarena(*conventions, "import", "osu", str(OSU), "--impl", "mpich-4.0.2", "--db",
                    str(db))


def test_quiet_says_nothing_on_stderr_before_or_after_the_command(tmp_path):
    said = _imported(tmp_path / "a.db")
    assert said.returncode == 0 and "stored run 1" in said.stderr, said.stderr
    for where in (["-q"], ["--quiet"]):
        quiet = _imported(tmp_path / "a.db", *where)
        assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
        assert quiet.stdout.startswith("Run ")
    after = mpiarena("list", "--db", str(tmp_path / "a.db"), "-q")
    assert after.returncode == 0 and "imported osu" in after.stdout
    missing = mpiarena("-q", "list", "--db", str(tmp_path / "none.db"))
    assert missing.returncode == 2 and "no store at" in missing.stderr  # errors still said


def test_verbose_shows_an_internal_errors_traceback(tmp_path):
    planted = ("import mpiarena.commands.stores as o\n"
               "def broken(db): raise RuntimeError('planted bug')\n"
               "o.existing_store = broken\n"
               "from mpiarena.commands import main; main()\n")
    done = subprocess.run([sys.executable, "-c", planted, "-v", "list"], capture_output=True,
                          text=True, timeout=60, check=False,
                          env={**os.environ, "MPIARENA_HOME": str(tmp_path)})
    assert done.returncode == 70
    assert done.stderr.startswith("Traceback") and "in broken" in done.stderr, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("mpiarena: internal error:")


@pytest.mark.parametrize(("args", "env"), [([], {}), (["--no-color"], {}),
                                           ([], {"NO_COLOR": "1"})],
                         ids=["colour", "--no-color", "NO_COLOR"])
def test_colour_is_off_with_no_color(args, env):
    """In a fresh interpreter: the consoles read FORCE_COLOR and NO_COLOR when made."""
    done = subprocess.run([*ARGV, "doctor", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "FORCE_COLOR": "1", "COLUMNS": "200", **env},
                          check=False)
    assert done.returncode == 0, done.stderr
    assert (COLOUR in done.stdout) == (not args and not env), done.stdout[:400]


def test_shell_completion_is_clicks():
    done = mpiarena(env={"_MPIARENA_COMPLETE": "bash_complete", "COMP_WORDS": "mpiarena ru",
                         "COMP_CWORD": "1"})
    assert done.returncode == 0 and done.stdout.split() == ["plain,run"], done.stdout
    source = mpiarena(env={"_MPIARENA_COMPLETE": "bash_source"})
    assert "complete -o nosort -F _mpiarena_completion mpiarena" in source.stdout


@pytest.mark.mpi
def test_list_impls_and_doctor_print_json(tmp_path):
    db = tmp_path / "j.db"
    assert _imported(db).returncode == 0
    runs = json.loads(mpiarena("list", "--json", "--db", str(db)).stdout)
    assert [(r["id"], r["suite"], r["cells"], r["launches"]) for r in runs] == \
        [(1, "imported osu", runs[0]["cells"], None)] and runs[0]["cells"] > 0
    impls = json.loads(mpiarena("impls", "--json").stdout)
    mpich = next(i for i in impls if i["id"] == "mpich-4.0.2")
    assert mpich["usable"] is True and mpich["library_version"].startswith("MPICH Version")
    assert Path(mpich["wrapper"]).is_file() and Path(mpich["launcher"]).is_file()
    doctor = json.loads(mpiarena("doctor", "--json").stdout)
    checks = {c["name"]: c for c in doctor["checks"]}
    assert checks["C compiler"]["ok"] is True and checks["simgrid"]["gives"]
    assert Path(doctor["data_directory"]).is_absolute()


def test_a_reader_that_stops_reading_ends_the_command_quietly(tmp_path):
    """`mpiarena export | head -1`: a closed pipe is neither an internal error nor rich's 1,
    whether Python's stdout or rich's console met it."""
    db = tmp_path / "p.db"
    assert mpiarena("import", "osu", *[str(OSU)] * 16, "--impl", "mpich-4.0.2", "--db",
                    str(db)).returncode == 0
    for args in (["export", "--format", "json", "--db", str(db)], ["impls"]):
        proc = subprocess.Popen([*ARGV, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout is not None and proc.stdout.read(1)
        proc.stdout.close()
        _, said = proc.communicate(timeout=120)
        assert proc.returncode == 0 and said == b"", (args, proc.returncode, said)
