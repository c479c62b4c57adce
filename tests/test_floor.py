"""The machine floor (impls/floor.py, kernels/mod_floor.c), read from a real short run of two
MPI libraries beside it: its launches interleaved and stored like any variant's, kept out of
every verdict and ranking, the answer's floor line, and no library's figure below its floor."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import pytest
from conftest import IMPLS, mpiarena
from rich.console import Console

from mpiarena.analysis.answer import answer, cell_lead
from mpiarena.analysis.floor import (
    LinkFloor,
    Multiple,
    floor_variants,
    latency_terms,
    multiples,
    steadiness,
)
from mpiarena.analysis.models import fit_models
from mpiarena.analysis.run import analyse
from mpiarena.analysis.stats import launch_medians
from mpiarena.base.records import Cell
from mpiarena.cluster.spec import parse as parse_spec
from mpiarena.impls import discover, family_of
from mpiarena.platform.plan import make_plan
from mpiarena.report import terminal
from mpiarena.report.summary import below_text, multiple_text
from mpiarena.store import Store
from mpiarena.store.results import load
from mpiarena.suites import load as load_suite

MPI = [i.id for i in IMPLS if i.family in ("mpich", "openmpi")][:2]
FLOOR = next((f.impl for f in discover({}, Path("/nonexistent"))
              if f.impl is not None and family_of(f.impl).floor), None)
LAUNCHES = 5
CAN_EMULATE = os.geteuid() == 0 and Path("/usr/sbin/sshd").exists()
needs_run = pytest.mark.skipif(len(MPI) < 2 or FLOOR is None,
                               reason="needs two MPI libraries and a C compiler")


@pytest.fixture(scope="module")
def run_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("floor") / "r.db"
    assert FLOOR is not None
    done = mpiarena("run", *[f"--impl={i}" for i in MPI], "--bench",  # the floor: beside them
                    "pingpong,sendrecv,allreduce", "--sizes", "8,64K,1M", "--launches",
                    str(LAUNCHES), "--observations", "3", "--budget", "off", "--validate",
                    "--db", str(db))
    assert done.returncode == 0, done.stderr
    return db


@needs_run
def test_the_floors_launches_are_interleaved_and_stored_like_any_variants(run_db: Path) -> None:
    data = load(Store(run_db), 1)
    assert floor_variants(data) == ["floor"]
    order = [j.variant for j in sorted(data.jobs, key=lambda j: j.id)]
    assert order.count("floor") == LAUNCHES
    first, last = order.index("floor"), len(order) - 1 - order[::-1].index("floor")
    assert set(order[first:last]) - {"floor"}, order  # the libraries' launches between its own
    for key in (Cell("pingpong", 8, 2), Cell("sendrecv", 65536, 2), Cell("allreduce", 8, 2)):
        group = data.cells[key]["floor"]
        assert len(set(group.launches)) == LAUNCHES, group.launches
        assert len(group.values) == 3 * LAUNCHES


@needs_run
def test_the_floor_is_out_of_every_verdict_and_ranking(run_db: Path) -> None:
    a = analyse(load(Store(run_db), 1))
    assert a.floor is not None and a.floor.variant == "floor"
    assert "floor" not in a.data.variants and all("floor" not in c for c in a.data.cells.values())
    verdicts = [v for vs in a.judged.values() for v in vs]
    assert verdicts and all("floor" not in (v.fast, v.slow) for v in verdicts)
    ans = answer(a)
    assert ans is not None and {s.variant for s in ans.ranked} == set(MPI)
    assert all(b.variant != "floor" for b in ans.beside)


FLOOR_SAID = re.compile(
    r"(?P<cell>pingpong [\d.]+ [KM]?i?B): (?:(?P<lib>\S+)(?: \(within 5%: [^)]*\))? "
    r"(?P<fig>[\d.]+ [nmu]?s), (?P<times>[\d.]+)x the floor's (?P<floor>[\d.]+ [nmu]?s)"
    r"(?P<below> \(below the floor[^)]*\))?|none the verdicts call fastest; floor "
    r"[\d.]+ [nmu]?s)")


@needs_run
def test_the_answer_says_how_far_the_fastest_library_is_from_the_floor(run_db: Path) -> None:
    """The run named its libraries (--impl) and got the floor beside them; the floor line names,
    at latency and at bandwidth, the library the verdicts call fastest there (or says there is
    none), and its multiple is the printed figure over the printed floor."""
    out = io.StringIO()
    data = load(Store(run_db), 1)
    terminal.render(data, Console(file=out, width=250, highlight=False))
    first = out.getvalue().splitlines()[:8]
    line = next((x for x in first if x.startswith("Against the machine floor")), None)
    assert line is not None, first
    said = list(FLOOR_SAID.finditer(line))
    assert [m.group("cell") for m in said] == ["pingpong 8 B", "pingpong 1 MiB"], line
    a = analyse(data)
    for m in said:
        key = Cell("pingpong", 8 if m.group("cell").endswith(" 8 B") else 1 << 20, 2)
        lead = cell_lead(a, key, MPI)
        if m.group("lib") is None:
            assert lead is None or not lead.leaders, (line, lead)
            continue
        assert lead is not None and m.group("lib") == lead.best, (line, lead)
        times, ratio = float(m.group("times")), _seconds(m.group("fig")) / _seconds(
            m.group("floor"))
        assert abs(times - ratio) <= 0.02 * ratio, line
        assert (times < 1) == (m.group("below") is not None), line  # below: a reason beside it


def _seconds(text: str) -> float:
    value, unit = text.split()
    return float(value) * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]


@needs_run
def test_no_figure_sits_below_its_floor(run_db: Path) -> None:
    """Each library's best launch against the floor's best observation, in every cell both
    measured (other work on a shared machine only slows a launch, and the floor's fastest
    observation is the least slowed): one below by more than 10% means the floor is wrong
    there. The reports apply the interval rule (`Multiple.below`)."""
    a = analyse(load(Store(run_db), 1))
    assert a.floor is not None
    found = multiples(a.data, a.floor)
    assert len(found) == len(MPI) * 3 * 3
    below = []
    for m in found:
        best = float(launch_medians(a.data.cells[m.key][m.variant].nested).min())
        floor = min(a.floor.cells[m.key].values)
        if best < 0.9 * floor:
            below.append(f"{m.key} {m.variant}: best launch {best:.3g} s, floor {floor:.3g} s")
    assert not below, below


@needs_run
def test_each_library_gets_a_latency_term_against_the_floors_and_the_floors_spread(
        run_db: Path) -> None:
    data = load(Store(run_db), 1)
    models = fit_models(data)
    terms = latency_terms(data, models)
    assert {t.variant for t in terms} == set(MPI)
    assert {t.floor for t in terms} == {models["floor"].regimes[0].alpha.value}
    assert all(t.software == t.alpha - t.floor for t in terms)
    a = analyse(data)
    assert a.floor is not None
    spread = steadiness(a.data, a.floor)
    assert spread is not None and spread.cells == 9 and spread.floor >= 0 and spread.library >= 0


def test_a_figure_below_the_floor_is_said_with_its_reason() -> None:
    def ratio(times: float, low: float, high: float, placement: str = "") -> Multiple:
        return Multiple(Cell("pingpong", 8, 2), "lib", times * 1e-7, 1e-7, times, low, high,
                        placement)
    assert ratio(0.8, 0.7, 0.9).below and ratio(0.8, 0.7, 0.9).wrong
    assert ratio(0.9, 0.7, 1.1).below and not ratio(0.9, 0.7, 1.1).wrong  # within its interval
    assert not ratio(1.5, 1.2, 1.9).below
    assert below_text(ratio(1.5, 1.2, 1.9)) == "" and multiple_text(ratio(1.5, 1.2, 1.9)) == \
        "1.5x floor"
    assert "by more than its interval" in below_text(ratio(0.8, 0.7, 0.9))
    assert "launches of its own" in below_text(ratio(0.9, 0.7, 1.1))
    assert "other CPUs" in below_text(ratio(0.9, 0.7, 1.1, "its ranks ran on CPUs 0 | 1"))
    assert multiple_text(ratio(0.93, 0.7, 1.1)).startswith("0.93x floor (below: ")


@pytest.mark.skipif(FLOOR is None, reason="needs a C compiler")
def test_the_plan_gives_the_floor_only_its_benchmarks_and_no_start_up_launches() -> None:
    assert FLOOR is not None
    tcp = next(f.impl for f in discover({}, Path("/nonexistent"))
               if f.impl is not None and f.impl.family == "tcp")
    plan = make_plan(load_suite("quick"), [tcp, FLOOR], seed=1)
    floor = family_of(FLOOR)
    turns = [(asked.cell.bench, v.id) for r in plan.rounds for s in r.sessions
             for asked, v in s.turns]
    assert {b for b, v in turns if v == FLOOR.id} == set(floor.benchmarks)
    assert {b for b, v in turns if v == tcp.id} > set(floor.benchmarks)
    startups = [v.id for r in plan.rounds for v in r.startups]
    assert startups and FLOOR.id not in startups


def test_an_emulated_links_floor_is_its_payload_rate_less_the_bucket() -> None:
    """100 Mbit/s, MTU 1500: full frames carry 1448 of 1538 wire bytes (94.1 Mbit/s of payload,
    NetPIPE's Fast Ethernet limit); the first bucket's bytes pass at host speed."""
    link = LinkFloor(parse_spec("emulated:nodes=2,link=100mbit,mtu=1500"))
    assert link.spec.payload_limit == pytest.approx(94.15e6, rel=1e-3)
    one_way = link.figure(Cell("pingpong", 1 << 20, 2))
    assert one_way is not None
    at_payload_rate = (1 << 20) * 8 / link.spec.payload_limit
    assert at_payload_rate - 2e-4 < one_way < at_payload_rate  # the bucket: 2163 B, 0.17 ms
    assert link.figure(Cell("pingpong", 1024, 2)) is None  # within the bucket: no floor
    assert link.figure(Cell("allreduce", 1 << 20, 2)) is None


@pytest.mark.skipif(not CAN_EMULATE or not MPI, reason="needs root, sshd and an MPI library")
def test_on_an_emulated_cluster_the_link_as_set_is_the_floor(tmp_path: Path) -> None:
    """A real short run on a 100 Mbit/s emulated link: the machine floor is left out with a
    note, the answer sets the largest pingpong against the link's floor, and no library's best
    launch beats the link as set."""
    db = str(tmp_path / "e.db")
    done = mpiarena("run", "--cluster", "emulated:nodes=2,link=100mbit", "--impl",
                    f"{MPI[0]},floor", "--bench", "pingpong", "--sizes", "64K,1M", "--launches",
                    "2", "--budget", "off", "--db", db, env={"COLUMNS": "250"})
    assert done.returncode == 0, done.stderr
    assert "note: the machine floor left out: it is measured on this machine only" in \
        " ".join(done.stderr.split())
    said = " ".join(done.stdout.split())
    assert re.search(r"Against the link's floor \(100mbit set: 94\.1 Mbit/s of TCP payload in "
                     r"full 1500-byte frames, less tbf's 2163-byte bucket; no delay emulated\): "
                     rf"pingpong 1 MiB: {re.escape(MPI[0])} [\d.]+ ms, \d\.\d\dx link floor of "
                     r"88\.9 ms\.", said), said
    a = analyse(load(Store(db), 1))
    assert a.floor is None and a.link is not None
    for key in (Cell("pingpong", 65536, 2), Cell("pingpong", 1 << 20, 2)):
        floor = a.link.figure(key)
        best = float(launch_medians(a.data.cells[key][MPI[0]].nested).min())
        assert floor is not None and best >= 0.97 * floor, (key, best, floor)


@needs_run
def test_the_budget_buys_the_floor_no_launches(tmp_path: Path) -> None:
    """The libraries' comparisons left open get the budget's launches; the floor keeps the
    suite's (it is in no comparison)."""
    db = tmp_path / "b.db"
    assert FLOOR is not None
    done = mpiarena("run", *[f"--impl={i}" for i in [*MPI, FLOOR.id]], "--bench",
                    "pingpong,sendrecv", "--sizes", "8,1K", "--launches", "4", "--budget", "5",
                    "--db", str(db))
    assert done.returncode == 0, done.stderr
    launches = {v: sum(j.variant == v for j in load(Store(db), 1).jobs) for v in [*MPI, "floor"]}
    assert launches["floor"] == 4, launches
    assert max(launches[v] for v in MPI) > 4, launches  # the budget bought some
