"""mpiarena history, compare's CI options and the perflog export, on a real series of runs:
MPICH as it comes beside a variant of it that from run 3 on carries its messages over loopback
TCP instead of shared memory (a real slowdown of the same library, about 10x at 8 B here)."""

from __future__ import annotations

import re
import sqlite3
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from conftest import IMPLS, mpiarena

from mpiarena.analysis.history import Filter, history
from mpiarena.analysis.stats import ALPHA
from mpiarena.base.records import Cell, RunRecord, RunSettings
from mpiarena.store import Store
from mpiarena.store.results import Group, RunData, load

LIB = "mpich-4.0.2"  # its launches take 0.1 s here, Open MPI's 0.45 s
PROBE = f"{LIB}:probe"
SUITE = """description = "history test: MPICH as it comes and a probe variant"
benchmarks = ["pingpong"]
sizes = "8"
np = [2]
launches = 6
observations = 5
init_launches = 0

[[variant]]
impl = "{impl}"
name = "probe"
env = {{ {env} }}
"""
RUNS = 4
SLOW_FROM = 3  # runs from here on carry the probe's messages over TCP
PERFLOG = re.compile(r"^(?P<time>[^|]+)\|mpiarena [^|]+\|(?P<test>\w+) on [^|:]+:default using "
                     r"(?P<env>[^|]+)\|jobid=(?P<job>\d+)\|(?P<var>\w+)=(?P<value>[0-9.e+-]+)\|"
                     r"ref=0 \(l=None, u=None\)\|(?P<unit>s)$")

needs_lib = pytest.mark.skipif(LIB not in {i.id for i in IMPLS}, reason=f"needs {LIB}")


@pytest.fixture(scope="module")
def series(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four short runs in one store; the probe variant is slow from run 3 on."""
    where = tmp_path_factory.mktemp("history")
    fast, slow = where / "fast.toml", where / "slow.toml"
    fast.write_text(SUITE.format(impl=LIB, env=""))
    # every rank as if on another node, and UCX over TCP only
    slow.write_text(SUITE.format(impl=LIB, env='MPIR_CVAR_NOLOCAL = "1", UCX_TLS = "tcp,self"'))
    db = where / "h.db"
    for run in range(1, RUNS + 1):
        # --timeout 5: Debian's MPICH 4.0.2 over UCX's TCP now and then hangs in MPI_Finalize
        # until the job's timeout (docs/clusters.md): once, the default 60 s took this fixture
        # from 6 s to 67 s, and 10 s to 16 s in a fresh clone's run; each cell here answers in
        # milliseconds, and a job starts in under a second
        done = mpiarena("run", "--impl", LIB, "--suite", str(slow if run >= SLOW_FROM else fast),
                        "--timeout", "5", "--db", str(db))
        assert done.returncode == 0, done.stderr
    return db


@needs_lib
def test_the_slowdown_is_a_regression_at_run_3_and_nothing_else_is(series: Path, tmp_path: Path):
    store = Store(series)
    # Runs cannot be interleaved: a change of load between two of them moves a 250 ns figure by
    # up to about 2x here, which is the machine, not the library (by over 100% once: a fresh
    # clone's make test read plain MPICH twice as fast from run 3 to run 4). The planted
    # slowdown is about 10x, so judge by over 200%, as a CI job on a shared machine would.
    h = history([load(store, run.id) for run, _ in store.runs()], threshold=2.0)
    assert {(s.cell.variant, s.cell.size) for s in h.series} == {(LIB, 8), (PROBE, 8)}
    for s in h.series:
        assert len(s.points) == RUNS and all(p.ci_low <= p.figure <= p.ci_high for p in s.points)
        outcomes = [step.outcome for step in s.steps]
        if s.cell.variant == PROBE:  # TCP loopback: several times slower than shared memory
            assert outcomes[SLOW_FROM - 2] == "regression"
            # first against last: a regression, or held by the drift the other steps show (one
            # fresh clone's runs drifted 163% between consecutive runs: the 10x of two runs apart
            # stays within what that drift allows), never an improvement
            assert s.overall is not None and s.overall.outcome in ("regression", "undecided")
            assert s.overall.outcome == "regression" or (
                s.overall.change is not None and s.overall.change.held)
            assert s.points[SLOW_FROM - 1].figure > 2 * s.points[0].figure
            outcomes.pop(SLOW_FROM - 2)
        assert "regression" not in outcomes and "improvement" not in outcomes, (s.cell, outcomes)

    junit, page = tmp_path / "h.xml", tmp_path / "h.html"
    done = mpiarena("history", "--db", str(series), "--fail-on-regression", "--threshold", "200%",
                    "--junit", str(junit), "--html", str(page))
    assert done.returncode == 3, done.stderr
    assert f"pingpong 8 B, 2 ranks, {PROBE}" in done.stdout
    assert re.search(r"\b[12] regression", done.stdout)  # at run 3 (and first against last)
    suite = ET.parse(junit).getroot()
    assert suite.tag == "testsuites" and suite.get("failures") == "1"
    cases = suite.findall("testsuite/testcase")
    assert len(cases) == 2 and suite.find("testsuite").get("tests") == "2"
    failed = {c.get("name"): c.find("failure") for c in cases if c.find("failure") is not None}
    assert set(failed) == {f"pingpong 8 B, 2 ranks, {PROBE}"}
    for failure in failed.values():
        assert failure.get("message").startswith("run 2 -> run 3: regression x")
    html = page.read_text()
    assert html.count("data:image/png;base64,") == 2 and html.count('class="regression"') >= 1


@needs_lib
def test_identical_runs_pass_and_compare_fails_on_the_regression(series: Path, tmp_path: Path):
    # the same run in two stores: a history across stores, nothing to call
    twin = tmp_path / "twin.db"
    with sqlite3.connect(series) as source, sqlite3.connect(twin) as copy:
        source.backup(copy)
    junit = tmp_path / "h.xml"
    calm = mpiarena("history", "--db", str(series), "--db", str(twin), "--since", str(RUNS),
                    "--fail-on-regression", "--junit", str(junit))
    assert calm.returncode == 0, calm.stderr
    assert f"h:{RUNS}" in calm.stdout and f"twin:{RUNS}" in calm.stdout
    assert "0 regression" in calm.stdout
    assert ET.parse(junit).getroot().get("failures") == "0"
    since = mpiarena("history", "--db", str(series), "--since", "2", "--fail-on-regression")
    assert since.returncode == 3 and "run 2 -> run 3: regression" in since.stderr
    junit = tmp_path / "c.xml"
    worse = mpiarena("compare", "2", "3", "--db", str(series), "--fail-on-regression",
                     "--junit", str(junit))
    assert worse.returncode == 3
    assert f"regression: pingpong 8 B, 2 ranks, {PROBE}: regression" in worse.stderr
    cases = ET.parse(junit).getroot().findall("testsuite/testcase")
    assert {c.get("name") for c in cases if c.find("failure") is not None} >= \
        {f"pingpong 8 B, 2 ranks, {PROBE}"}  # the plain variant may drift between runs
    # a threshold above the slowdown: decided, but not beyond it
    lenient = mpiarena("compare", "2", "3", "--db", str(series), "--fail-on-regression",
                       "--threshold", "5000%")
    assert lenient.returncode == 0, lenient.stderr
    bad = mpiarena("compare", "2", "3", "--db", str(series), "--threshold", "5")
    assert bad.returncode == 2 and "bad --threshold '5'" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


@needs_lib
def test_perflog_lines_parse_and_carry_the_summary_figures(series: Path):
    done = mpiarena("export", "3", "--db", str(series), "--format", "perflog")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    parsed = [PERFLOG.match(line) for line in lines]
    assert all(parsed), [line for line, m in zip(lines, parsed, strict=True) if not m]
    assert len(lines) == 2 * 3  # 2 variants: the figure and its interval's bounds
    got = {(m["test"], m["env"], m["var"]): float(m["value"]) for m in parsed if m}
    data = load(Store(series), 3)
    from mpiarena.analysis.stats import summarize

    s = summarize(data.cells[Cell("pingpong", 8, 2)][PROBE].nested)
    assert got["pingpong_8_np2", PROBE, "time"] == pytest.approx(s.median, rel=1e-9)
    assert got["pingpong_8_np2", PROBE, "time_ci_low"] <= s.median
    assert {m["job"] for m in parsed if m} == {"3"}


def test_history_refuses_bad_input_in_one_line(tmp_path: Path):
    missing = mpiarena("history", "--db", str(tmp_path / "none.db"))
    assert missing.returncode == 2 and "no store at" in missing.stderr
    Store(tmp_path / "empty.db").close()
    empty = mpiarena("history", "--db", str(tmp_path / "empty.db"))
    assert empty.returncode == 2 and "no benchmark runs" in empty.stderr
    since = mpiarena("history", "--db", str(tmp_path / "empty.db"), "--since", "last week")
    assert since.returncode == 2 and "bad --since 'last week'" in since.stderr
    follow = mpiarena("history", "--db", str(tmp_path / "empty.db"), "--follow", "mpich")
    assert follow.returncode == 2 and "--follow 'mpich': give OLD=NEW" in follow.stderr
    for done in (missing, empty, since, follow):
        assert len(done.stderr.strip().splitlines()) == 1


# --- identical runs, simulated ----------------------------------------------------------------

def _run(run_id: int, cells: dict[Cell, list[np.ndarray]], variant: str = "x") -> RunData:
    """A RunData as `results.load` builds it: one variant, observations per launch."""
    groups = {k: {variant: Group(values=[float(v) for a in launches for v in a],
                                 launches=[i for i, a in enumerate(launches) for _ in a])}
              for k, launches in cells.items()}
    run = RunRecord(id=run_id, started=f"2026-01-01T00:00:{run_id:02d}+00:00", finished=None,
                    status="complete", suite="", command="", seed=0, version="",
                    machine={"cores": 2}, settings={}, pid=0, host="", note=None)
    return RunData(run_id=run_id, run=run, status="complete", implementations=[],
                   variants=[variant], jobs=[], settings=RunSettings.read({}), cells=groups)


def _launches(rng: np.random.Generator, level: float, n: int = 8) -> list[np.ndarray]:
    """n launches whose level varies 10% between launches and 2% inside one."""
    return [level * np.exp(rng.normal(0, 0.1) + rng.normal(0, 0.02, 5)) for _ in range(n)]


def test_identical_runs_are_called_changed_in_under_alpha_of_histories_a_planted_one_found():
    """One family per history: the chance that a history of identical runs calls any change
    is at most ALPHA (the correction's), and the threshold makes it rarer still."""
    rng = np.random.default_rng(31)
    keys = [Cell("pingpong", s, 2) for s in (8, 4096, 65536)]
    histories, called, found = 200, 0, 0
    for _ in range(histories):
        same = [_run(i, {k: _launches(rng, 1e-6) for k in keys}) for i in range(1, 6)]
        h = history(same)
        called += any(step.outcome in ("regression", "improvement")
                      for s in h.series for step in s.judged())
    assert called / histories <= ALPHA / 2  # 15 changes each; 1% seen
    for _ in range(20):  # 1.5x slower from run 3 on in one cell
        runs = [_run(i, {k: _launches(rng, 1e-6 * (1.5 if i >= 3 and k.size == 8 else 1))
                         for k in keys}) for i in range(1, 6)]
        h = history(runs, Filter(sizes=(8,)))
        steps = h.series[0].steps
        found += steps[1].outcome == "regression"
        assert all(s.outcome != "regression" for i, s in enumerate(steps) if i != 1)
    assert found >= 18


def test_follow_continues_a_series_with_the_upgraded_library():
    rng = np.random.default_rng(32)
    key = Cell("pingpong", 8, 2)
    runs = [_run(i, {key: _launches(rng, 1e-6 * (1.5 if i >= 3 else 1))},
                 "mpich-4.0.2" if i < 3 else "mpich-5.0.2") for i in range(1, 5)]
    apart = history(runs).series  # two libraries: no change from run 2 to run 3
    assert [(s.cell.variant, [(x.before, x.after) for x in s.steps]) for s in apart] == \
        [("mpich-4.0.2", [(0, 1)]), ("mpich-5.0.2", [(2, 3)])]
    h = history(runs, follow={"mpich-5.0.2": "mpich-4.0.2"})
    [s] = h.series
    assert [p.variant for p in s.points] == ["mpich-4.0.2"] * 2 + ["mpich-5.0.2"] * 2
    assert [step.outcome for step in s.steps][1] == "regression"
    assert s.steps[1].change is not None and s.steps[1].change.other == "mpich-5.0.2"
