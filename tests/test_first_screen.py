"""The first screen of `mpiarena show` answers the question a person asks ("which MPI library
should I use here?") in its first 12 lines at 100 columns, read from a real run as a person
would: the answer's statements, how many comparisons it decided, its scope; then the ranking
with intervals, what is not MPI and why."""

from __future__ import annotations

import io
import itertools
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import ARGV, IMPLS, mpiarena
from rich.console import Console
from test_analysis import run_data

from mpiarena.analysis.run import analyse
from mpiarena.base.records import Cell
from mpiarena.report import terminal
from mpiarena.report.summary import answer_lines, scoreboard_lines
from mpiarena.report.text import wrapped
from mpiarena.store import Store
from mpiarena.store.results import load

MPI = [i.id for i in IMPLS if i.family in ("mpich", "openmpi")][:2]
TCP = [i.id for i in IMPLS if i.family == "tcp"]
pytestmark = pytest.mark.skipif(len(MPI) < 2 or not TCP, reason="needs two MPI libraries and tcp")


@pytest.fixture(scope="module")
def run_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("first") / "r.db"
    done = mpiarena("run", *[f"--impl={i}" for i in [*MPI, *TCP]], "--bench",
                    "pingpong,allreduce", "--sizes", "8,64K", "--launches", "5",
                    "--observations", "3", "--budget", "off", "--db", str(db))
    assert done.returncode == 0, done.stderr
    return db


def _screen(db: Path, width: int = 100, **flags: bool) -> list[str]:
    out = io.StringIO()
    terminal.render(load(Store(db), 1), Console(file=out, width=width, highlight=False), **flags)
    return out.getvalue().splitlines()


def test_the_first_twelve_lines_answer(run_db: Path) -> None:
    """The answer, how many comparisons it decided and where it holds in the first twelve
    lines; the ranking and what is not MPI right after."""
    lines = _screen(run_db)
    first = lines[:12]
    text = "\n".join(first)
    assert all(len(line) <= 100 for line in lines), [x for x in lines if len(x) > 100]
    # named for what it measured (--bench and --sizes without --suite): two lines at 100 columns
    assert re.match(r"Run 1 \(complete\) cells of pingpong and allreduce at 8 B and 64 KiB, .*, "
                    r"took \d+ (s|min)", " ".join(x.strip() for x in first[:2])), first[:2]
    # the answer: at most four statements by the verdict rule, never naming what is not MPI
    said = [line for line in first if line.startswith("Fastest ")]
    assert 1 <= len(said) <= 4 and not any(t in x for t in TCP for x in said), said
    assert "Holds for 2 ranks on 1 host (this machine" in text
    assert re.search(r"Decided: \d+ of \d+ comparisons between MPI libraries", text)
    assert sum(line.startswith("Decided:") for line in lines) == 1
    # then the ranking, labelled as a geometric mean: both MPI libraries with a time ratio, the
    # leader at 1.00x, the other with its interval (the answer's four lines may push it down)
    first = lines[:16]
    heading = next(i for i, line in enumerate(first) if line.startswith("Ranked by geometric "
                                                                       "mean over "))
    ranked = [re.match(r"  (\S+) +(\d+\.\d\d)x(?: \((\d+\.\d\d)-(\d+\.\d\d)\))?$", line)
              for line in first[heading + 1:heading + 3]]
    assert all(ranked), first
    assert {m.group(1) for m in ranked if m} == set(MPI)
    leader, other = ranked[0], ranked[1]
    assert leader and other and leader.group(2) == "1.00" and other.group(3) is not None
    assert float(other.group(3)) <= float(other.group(2)) <= float(other.group(4))
    # raw TCP is not MPI: beside the ranking, not in it, and said why
    beside = next(line for line in first if line.startswith("Not MPI, so beside the ranking: "))
    assert TCP[0] in beside and re.search(rf"{TCP[0]} \d+\.\d\dx", beside)
    # versions, the machine and the method wait for --method
    assert not any(line.startswith(("Machine:", "Timed by")) for line in lines)
    assert any(line.startswith("Machine:") for line in _screen(run_db, method=True))


def test_a_wrapped_line_hangs_and_keeps_sizes_whole() -> None:
    text = ("  pingpong (2 ranks): 0 B: lam-7.1.4; 1 B-8 B: openmpi-4.1.4; 64 B-4 KiB: "
            "lam-7.1.4; 32 KiB: openmpi-4.1.4; 256 KiB-1 MiB: openmpi-4.1.4 (undecided vs "
            "mpich-5.0.2, mpich-4.0.2)")
    for width in range(30, 110):
        lines = wrapped(text, width)
        assert " ".join(" ".join(lines).split()) == " ".join(text.split())
        assert all(line.startswith("    ") for line in lines[1:])  # two more than the first
        for before, after in itertools.pairwise(lines):
            assert not (re.search(r"\d$", before) and re.match(r" *(B|KiB|MiB)\b", after)), \
                (width, before, after)


def test_piped_output_honours_columns(run_db: Path) -> None:
    shown = subprocess.run([*ARGV, "show", "latest", "--db", str(run_db)], capture_output=True,
                           text=True, env={**os.environ, "COLUMNS": "72"}, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert max(map(len, shown.stdout.splitlines())) <= 72


def test_a_cell_not_expressible_is_never_named_as_timed(run_db: Path) -> None:
    """Raw TCP has no allreduce (n/a): the method names the libraries that timed it, not tcp."""
    lines = _screen(run_db, width=1000, method=True)
    timed = [line for line in lines if line.startswith("Timed by") and "allreduce" in line]
    assert timed and not any(TCP[0] in line for line in timed), timed


def test_a_cost_per_byte_switch_says_how_its_slope_changed() -> None:
    """The time is continuous where the cost per byte changes: the slope's ratio is the figure
    (the time's, x1.0, said nothing)."""
    from mpiarena.analysis.curves import Jump, Switch
    from mpiarena.report.summary import switch_text

    slope = Switch(4096, Jump.PER_BYTE, 1e-10, 2.5e-10, 512, 1e-6, 1.01e-6)
    assert switch_text("x", slope).endswith("512 B and 4 KiB: cost per byte changes x2.5")
    step = Switch(4096, Jump.FIXED, 1e-6, 3e-6, 512, 1e-6, 2.4e-6)
    assert switch_text("x", step).endswith("fixed cost changes x2.4")


def _planted(cells: dict[tuple[str, int], dict[str, float]], launches: int = 12) -> list[str]:
    """The answer and scoreboard lines of a run whose figures are planted: each cell's variant
    at its level, launch to launch 2% apart."""
    rng = np.random.default_rng(1)
    data = run_data({Cell(bench, size, 2): {v: level * rng.lognormal(0, 0.02, launches)
                                           for v, level in cell.items()}
                     for (bench, size), cell in cells.items()}, per_launch=1)
    a = analyse(data)
    return [*answer_lines(a), *scoreboard_lines(a)]


def test_one_library_answers_with_its_figures_and_switches() -> None:
    """A run of one library (or an imported suite's output) opens with its figures per
    benchmark and size, with intervals, and the protocol switches its pingpong shows: no empty
    'Who is fastest' heading."""
    sizes = [2**i for i in range(6, 21)]
    cells = {("pingpong", s): {"mpich-4.0.2": (1e-6 if s < 16384 else 3e-6) + s * 1e-10}
             for s in sizes}
    cells[("allreduce", 1024)] = {"mpich-4.0.2": 2.3e-6}
    lines = _planted(cells)
    assert lines[0].startswith("Figures of mpich-4.0.2 (median of launch medians, 95% CI"), lines
    allreduce = next(line for line in lines if line.startswith("  allreduce (2 ranks): "))
    assert re.search(r"1 KiB 2\.\d+ us \(2\.\d+ us-2\.\d+ us\)", allreduce), allreduce
    switch = next(line for line in lines if line.startswith("Protocol switches on its pingpong: "))
    assert "between 8 KiB and 16 KiB: fixed cost changes" in switch, switch
    assert not any("Who is fastest" in line for line in lines), lines


def test_a_size_where_benchmarks_name_different_libraries_says_so() -> None:
    """Where one library is the fastest of every benchmark at most sizes but another decidedly
    wins a benchmark at one size, the answer says so of that size, by the verdicts."""
    cells = {}
    for size in (8, 64, 512, 4096):
        cells[("pingpong", size)] = {"a": 1.0, "b": 1.5}
        cells[("ping", size)] = {"a": 1.0, "b": 1.5}
        cells[("sendrecv", size)] = {"a": 1.0, "b": 1.5}
    cells[("bibw", 8)] = {"a": 1.0, "b": 0.6}
    lines = _planted(cells)
    assert lines[0] == "Fastest for point-to-point at 8 B: it differs by benchmark: a, b (see " \
        "below).", lines
    assert lines[1].startswith("Fastest for point-to-point at 64 B-4 KiB: a, ahead of b by 1."), \
        lines
    alone = _planted({k: v for k, v in cells.items() if k[0] != "bibw"})[0]
    assert alone.startswith("Fastest MPI library here, for point-to-point at every size: a, "
                            "ahead of b by 1."), alone
