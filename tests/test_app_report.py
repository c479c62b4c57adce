"""A program run in show, report (HTML in Chromium, Markdown), export (raw and summary), compare and
list, from real runs of NetPIPE built against two libraries."""

from __future__ import annotations

import csv
import html
import io
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from conftest import IMPLS, mpiarena
from test_report import _chromium, images_in_chromium

from mpiarena.analysis.program import ProgramFigure, ProgramResult, analyze, function_calls
from mpiarena.analysis.program_compare import compare_programs
from mpiarena.base.records import RunRecord
from mpiarena.report.program import change_line, program_text
from mpiarena.report.summary_export import SCHEMA
from mpiarena.store import Store

PAIR = ("mpich-4.0.2", "openmpi-4.1.4")
NETPIPE = Path(os.environ.get("MPIARENA_TEST_PROGRAMS", "/var/lib/mpiarena/test-programs"),
               "netpipe-3.7.2")
pytestmark = [
    pytest.mark.skipif(not set(PAIR) <= {i.id for i in IMPLS}, reason=f"needs {PAIR}"),
    pytest.mark.skipif(not (NETPIPE / "makefile").is_file(),
                       reason=f"no {NETPIPE}: run scripts/fetch-test-programs.sh as root"),
]
METRICS = ["--metric", r"lat=^\s*0:\s+1 bytes.*in\s+(\S+) usec",
           "--metric", r"bw=65536 bytes\s+\d+ times -->\s+(\S+) Mbps", "--higher", "bw"]


def collapse(text: str) -> str:
    return " ".join(text.split())


def app_run(db: str, launches: int, warmup: int) -> None:
    done = mpiarena("program", *(f"--impl={i}" for i in PAIR), "--src", str(NETPIPE),
                    "--build", "make mpi MPICC=$MPICC", "--np", "2", "--launches", str(launches),
                    "--warmup", str(warmup), *METRICS, "--db", db, "--",
                    "NPmpi", "-u", "65536", "-p", "0", "-n", "200")
    assert done.returncode == 0, done.stderr


@dataclass
class Runs:
    db: str
    result: ProgramResult  # run 1, the program run the tests read


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    """Run 1: a program run with a warm-up; run 2: a benchmark run (in the same store)."""
    db = str(tmp_path_factory.mktemp("app-report") / "results.db")
    app_run(db, 6, 1)
    done = mpiarena("run", f"--impl={PAIR[0]}", "--bench", "pingpong", "--sizes", "8",
                    "--np", "2", "--launches", "1", "--observations", "3", "--db", db)
    assert done.returncode == 0, done.stderr
    store = Store(Path(db))
    try:
        return Runs(db, analyze(store, 1))
    finally:
        store.close()


def test_show_is_the_app_text(runs: Runs):
    done = mpiarena("show", "1", "--db", runs.db)
    assert done.returncode == 0, done.stderr
    shown = collapse(done.stdout)
    t = program_text(runs.result)
    for line in [t.title, *t.verdicts, *t.decompositions, *t.overheads]:
        assert collapse(line) in shown, line
    assert len(t.verdicts) == 3  # wall, lat and bw: two libraries each


def test_show_output_lists_every_launch_and_its_output(runs: Runs):
    done = mpiarena("show", "1", "--launch-output", "--lines", "40", "--db", runs.db)
    assert done.returncode == 0, done.stderr
    heads = re.findall(r"^launch (\d+): (\S+) (timed|warmup|profiled) (\d+), ok", done.stdout,
                       re.M)
    assert [int(h[0]) for h in heads] == [x.id for x in runs.result.launches]
    assert len(heads) == 2 * (1 + 1 + 6)  # a profiled, a warm-up and 6 timed launches each
    assert done.stdout.count("65536 bytes") >= len(heads)  # NetPIPE's last line, every launch
    short = mpiarena("show", "1", "--launch-output", "--lines", "1", "--db", runs.db).stdout
    assert "(last 1 of" in short and len(short) < len(done.stdout)


def test_show_output_of_a_benchmark_run_is_one_error_line(runs: Runs):
    done = mpiarena("show", "2", "--launch-output", "--db", runs.db)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "mpiarena: error: run 2 is not a program run: --launch-output shows the output of an "
        "'mpiarena program' run's launches"]


def test_show_views_of_a_benchmark_run_show_an_app_run_s_summary(runs: Runs):
    summary = mpiarena("show", "1", "--db", runs.db)
    for view in ("--config", "--models"):
        done = mpiarena("show", "1", view, "--db", runs.db)
        assert done.returncode == 0, done.stderr
        assert done.stdout == summary.stdout, view


def test_perflog_of_an_app_run_is_one_error_line(runs: Runs):
    done = mpiarena("export", "1", "--format", "perflog", "--db", runs.db)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.strip().splitlines() == [
        "mpiarena: error: run 1 is a program run; --format perflog writes a benchmark run's "
        "figures (export a program run as csv or json)"]


def test_list_counts_an_app_run_s_launches(runs: Runs):
    done = mpiarena("list", "--db", runs.db)
    assert done.returncode == 0, done.stderr
    assert re.search(r"│ 1 .*│ app +│ 16 launches │", done.stdout)
    assert re.search(r"│ 2 .*│ cells of pingpong at 8 B +│ 1 +│", done.stdout), done.stdout


@pytest.fixture(scope="module")
def page(runs: Runs, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("app-html") / "app.html"
    done = mpiarena("report", "1", "--db", runs.db, "-o", str(out))
    assert done.returncode == 0, done.stderr
    return out


def test_html_has_the_app_text_and_both_figures(page: Path, runs: Runs):
    text = page.read_text()
    assert "<script" not in text and "http://" not in text and "https://" not in text
    assert text.count('<img src="data:image/png;base64,') == 2
    words = collapse(html.unescape(re.sub(r"<[^>]+>", " ", text)))
    t = program_text(runs.result)
    for line in [t.title, *t.method, *t.verdicts, *t.decompositions, *t.overheads,
                 *t.failures, *t.warnings, *t.header, *(c for row in t.rows for c in row)]:
        assert collapse(line) in words, line
    assert "hollow ones the warm-up launches; profiled and failed launches are left out" in words


def test_html_renders_in_chromium_with_its_figures(page: Path, tmp_path: Path):
    from PIL import Image

    images = images_in_chromium(page.read_text(), tmp_path)
    assert len(images) == 2 and all(ok and w > 300 and h > 200 for ok, w, h in images), images
    shot = tmp_path / "app.png"
    done = _chromium(f"--screenshot={shot}", "--window-size=1300,2000", page.as_uri(),
                     tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    grey = np.asarray(Image.open(shot).convert("L"), dtype=float)
    assert grey.std() > 20 and (grey < 200).mean() > 0.03


def test_markdown_has_the_app_text(runs: Runs, tmp_path: Path):
    done = mpiarena("report", "1", "--format", "md", "--db", runs.db, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    md = (tmp_path / "report.md").read_text()
    t = program_text(runs.result)
    assert md.startswith(f"# {t.title}")
    assert "| library | wall | lat | bw (higher is better) |" in md
    listed = [collapse(ln[2:]).replace("\\", "") for ln in md.splitlines() if ln.startswith("- ")]
    assert listed == [collapse(x) for x in [*t.verdicts, *t.decompositions, *t.overheads,
                                            *(f"failed: {y}" for y in t.failures),
                                            *(f"warning: {y}" for y in t.warnings)]]


def test_raw_export_has_every_launch_and_call(runs: Runs):
    r = runs.result
    calls = sum(len(cs) for cs in r.profiles.values())
    assert calls > 0
    done = mpiarena("export", "1", "--db", runs.db)
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    launches = [x for x in rows if x["record"] == "launch"]
    assert [int(x["launch"]) for x in launches] == [x.id for x in r.launches]
    assert [float(x["wall"]) for x in launches] == [x.wall for x in r.launches]
    assert [float(x["metric.bw"]) for x in launches] == [x.metrics["bw"] for x in r.launches]
    assert sum(x["record"] == "call" for x in rows) == calls
    assert all(x["function"].startswith("MPI_") for x in rows if x["record"] == "call")
    doc = json.loads(mpiarena("export", "1", "--format", "json", "--db", runs.db).stdout)
    assert [x["metrics"]["lat"] for x in doc["launches"]] == \
        [x.metrics["lat"] for x in r.launches]
    assert {x["kind"] for x in doc["launches"]} == {"timed", "warmup", "profiled"}
    assert len(doc["calls"]) == calls
    profiled = {x.id for x in r.launches if x.kind == "profiled"}
    assert {c["launch"] for c in doc["calls"]} == profiled


def test_summary_export_validates_and_says_what_show_says(runs: Runs):
    import jsonschema

    r = runs.result
    done = mpiarena("export", "1", "--summary", "--format", "json", "--db", runs.db)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    app = doc["app"]
    assert doc["records"] == [] and len(app["runs"]) == len(r.launches)
    assert [f["name"] for f in app["figures"]] == ["wall", "lat", "bw"]
    for f, fig in zip(app["figures"], r.figures, strict=True):
        assert f["medians"] == {v: fig.center(v) for v in r.variants}
        assert [(v["fast"], v["slow"], v["outcome"]) for v in f["verdicts"]] == \
            [(v.fast, v.slow, v.outcome) for v in fig.verdicts]
    for v in r.variants:
        assert {m["function"]: m["calls"] for m in app["mpi"] if m["variant"] == v} == \
            function_calls(r, v)
    assert len(app["decompositions"]) == len(r.decompositions) == 1
    assert [o["variant"] for o in app["overheads"]] == list(PAIR)
    rows = list(csv.DictReader(io.StringIO(
        mpiarena("export", "1", "--summary", "--db", runs.db).stdout)))
    assert [(x["figure"], x["variant"]) for x in rows] == \
        [(f, v) for f in ("wall", "lat", "bw") for v in r.variants]


@pytest.fixture(scope="module")
def second(runs: Runs) -> int:
    """Run 3: the same program run again, shorter."""
    app_run(runs.db, 4, 0)
    return 3


def test_compare_two_app_runs(runs: Runs, second: int):
    done = mpiarena("compare", "1", str(second), "--all", "--db", runs.db)
    assert done.returncode == 0, done.stderr
    store = Store(Path(runs.db))
    try:
        a, b = analyze(store, 1), analyze(store, second)
    finally:
        store.close()
    changes = compare_programs(a, b)
    assert len(changes) == 6  # three figures, two libraries
    shown = collapse(done.stdout)
    for c in changes:
        assert collapse(change_line(c)) in shown
    assert f"of {len(changes)} figures and libraries" in shown
    paired = mpiarena("compare", "1", str(second), "--all", "--pair",
                      f"{PAIR[0]}={PAIR[1]}", "--db", runs.db)
    assert paired.returncode == 0, paired.stderr
    assert f"wall, {PAIR[0]} -> {PAIR[1]}: x" in paired.stdout
    assert "of 3 figures and libraries" in paired.stdout


@pytest.mark.parametrize("order", [("1", "2"), ("2", "1")])
def test_an_app_run_and_a_benchmark_run_are_not_compared(runs: Runs, order: tuple[str, str]):
    done = mpiarena("compare", *order, "--db", runs.db)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "mpiarena: error: run 1 is a program run and run 2 is not: compare two program runs, or "
        "two benchmark runs"]


def _result(run_id: int, wall: list[float], bw: list[float]) -> ProgramResult:
    run = RunRecord(id=run_id, started="", finished=None, status="complete", suite="app",
                    command="", seed=0, version="", machine={}, settings={"np": 2}, pid=0, host="",
                    note=None)
    figures = [ProgramFigure("wall", False, {"x": wall}, [], {"x": 0}),
               ProgramFigure("bw", True, {"x": bw}, [], {"x": 0})]
    return ProgramResult(run, 2, ["x"], [], figures, [], [], {}, {})


def test_compare_leaves_out_a_rate_without_a_positive_value():
    a = _result(1, [1.0] * 6, [5.0] * 6)
    b = _result(2, [1.0] * 6, [0.0] * 6)
    changes = compare_programs(a, b)
    assert [(c.figure, c.outcome) for c in changes] == [("wall", "indistinguishable")]
