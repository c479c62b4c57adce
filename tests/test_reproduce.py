"""`mpiarena reproduce`: the studies as data, their short mode end to end, conclusions checked."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import IMPLS, leftovers, mpiarena
from test_cluster import CAN_EMULATE

from mpiarena import reproduce, studies
from mpiarena.cluster.topology import Where
from mpiarena.errors import ArenaError
from mpiarena.report.claims import CANNOT, FAILS, HOLDS, PARTLY, check
from mpiarena.report.quantities import value
from mpiarena.results import Group, RunData
from mpiarena.studies import Quantity

SEEDS = Path(__file__).resolve().parents[2] / "shared" / "seeds"
STATUSES = (HOLDS, FAILS, PARTLY, CANNOT)
FAMILIES = {i.family for i in IMPLS}


# --- the studies as data --------------------------------------------------------------------


@pytest.mark.parametrize("name", ["nevin1996", "chau2001", "dimitrov2002", "cleary2006"])
def test_every_study_loads_with_its_source(name: str) -> None:
    study = studies.load(name)
    assert study.citation and study.seed.endswith(".txt")
    assert study.experiments and study.claims
    for claim in study.claims:  # a check that cannot run says why
        assert claim.check != "cannot" or len(claim.params.get("why", "")) > 20


@pytest.mark.skipif(not SEEDS.exists(), reason="the seed texts are not beside this checkout")
@pytest.mark.parametrize("name", ["nevin1996", "chau2001", "dimitrov2002"])
def test_published_numbers_are_the_seeds_numbers(name: str) -> None:
    """Every number a figure quotes occurs in the study's text (Table 2: 61, 77.44...)."""
    study = studies.load(name)
    text = (SEEDS / study.seed).read_text().replace(",", "")  # 3,213 s
    for fig in study.figures:
        for value_, spread in fig.published.values():
            for number in (value_, spread):
                if number is not None:  # as printed, or in seconds where we show ms
                    assert any(re.search(rf"(?<![\d.]){re.escape(f'{n:g}')}0*(?!\d)", text)
                               for n in (number, number / 1000)), (fig.what, number)


def test_a_bad_study_file_is_one_line() -> None:
    good = {"title": "t", "citation": "c", "seed": "s.txt", "network": "n",
            "cluster": "emulated:fast-ethernet", "libraries": {"lam": {"name": "LAM"}},
            "experiment": [{"name": "e", "what": "w", "families": ["lam"],
                            "suite": {"benchmarks": ["pingpong"]}}]}
    claim = {"text": "x", "source": "s", "check": "best", "experiment": "e", "expect": "mpich",
             "among": ["lam", "mpich"]}
    with pytest.raises(ArenaError, match="libraries mpich are not in"):
        studies.parse("bad", {**good, "claim": [claim]}, "bad.toml")
    with pytest.raises(ArenaError, match="check 'guess' is not one of"):
        studies.parse("bad", {**good, "claim": [{**claim, "check": "guess"}]}, "bad.toml")
    with pytest.raises(ArenaError, match="experiment 'nope' is not defined"):
        studies.parse("bad", {**good, "claim": [{**claim, "experiment": "nope"}]}, "bad.toml")


def test_ranks_are_scaled_to_the_machine_and_said_so() -> None:
    nevin = studies.load("nevin1996")
    steps = {s.experiment.name: s for s in reproduce.steps(nevin, False, Where(), 2)}
    coll = steps["collectives"]
    assert coll.suite.nps == (2,)
    assert "the study ran up to 8 ranks" in coll.notes[0] and "--max-ranks is 2" in coll.notes[0]
    assert coll.where == Where("emulated:fddi,nodes=2")
    assert steps["p2p"].notes == ()  # 2 ranks, as in the study


def test_mtu_experiments_need_a_network() -> None:
    chau = studies.load("chau2001")
    emulated = {s.experiment.name: s for s in reproduce.steps(chau, True, Where(), 2)}
    assert emulated["mtu1000"].where == Where("emulated:fast-ethernet,nodes=2,mtu=1000")
    local = {s.experiment.name: s for s in reproduce.steps(chau, True, Where("local"), 2)}
    assert "about the network" in local["mtu1300"].skip
    assert local["netpipe"].where == Where() and not local["netpipe"].skip
    real = {s.experiment.name: s for s in reproduce.steps(chau, True, Where(hosts="lab.txt"), 2)}
    assert real["mtu1000"].where == Where(hosts="lab.txt")
    assert "mtu1000: hosts file lab.txt has its own MTU, not 1000" in real["mtu1000"].notes


# --- conclusions against known measurements -------------------------------------------------


def _run(cells: dict, topology: str = "local") -> RunData:
    impls = [{"impl_id": "lam-7.1.4", "family": "lam"}, {"impl_id": "mpich-4.0.2",
                                                         "family": "mpich"}]
    groups = {k: {v: Group(values=vals) for v, vals in cell.items()} for k, cell in cells.items()}
    variants = sorted({v for cell in cells.values() for v in cell})
    return RunData(1, {}, "complete", impls, variants, [], {"topology": topology,
                                                            "window": 64}, groups)


def test_a_claim_holds_only_beyond_the_noise_margin() -> None:
    study = studies.load("cleary2006")
    sendrecv = next(c for c in study.claims if "Sendrecv" in c.text)
    fast = _run({("sendrecv", 4000, 2): {"lam-7.1.4": [1e-5] * 5, "mpich-4.0.2": [3e-5] * 5}})
    row = check(sendrecv, study, {"calls": fast}, {})
    assert row.status == HOLDS and "3x" in row.detail and "published 5x" in row.detail
    close = _run({("sendrecv", 4000, 2): {"lam-7.1.4": [1e-5] * 5, "mpich-4.0.2": [1.03e-5] * 5}})
    assert check(sendrecv, study, {"calls": close}, {}).status == FAILS
    row = check(sendrecv, study, {}, {"calls": "no implementation found"})
    assert row.status == CANNOT and "no implementation found" in row.detail


def test_throughput_the_emulated_link_flatters_is_not_a_peak() -> None:
    """tbf's bucket lets a 1 KiB message through at host speed: 164 Mbit/s on a 100 Mbit/s
    link is left out of the peak (sizes under 42765 B are); on this machine alone it counts."""
    cells = {("pingpong", 1024, 2): {"lam-7.1.4": [0.05e-3] * 3},  # 164 Mbit/s
             ("pingpong", 1 << 20, 2): {"lam-7.1.4": [86e-3] * 3}}  # 97.5 Mbit/s
    q = Quantity("netpipe", "peak", "pingpong")
    emulated = _run(cells, "emulated:fast-ethernet,nodes=2,link=100mbit,mtu=1500")
    assert value(emulated, q, "lam-7.1.4") * 8e-6 == pytest.approx(97.5, rel=0.01)
    assert value(_run(cells), q, "lam-7.1.4") * 8e-6 == pytest.approx(163.8, rel=0.01)


# --- end to end, the short mode -------------------------------------------------------------


def _ids(*families: str) -> list[str]:
    """--impl options for the study's families, one MPICH (Debian's) to keep the tests short."""
    return [f"--impl={i.id}" for i in IMPLS if i.family in families and not (
        i.family == "mpich" and i.origin != "debian")]


def _short(name: str, tmp_path: Path, *extra: str) -> tuple[str, str]:
    out = tmp_path / f"{name}.md"
    r = mpiarena("reproduce", name, "--quick", "--db", str(tmp_path / "r.db"), "-o", str(out),
                 "--timeout", "20", *extra, timeout=600)  # a finalize hang costs 20 s, not 60
    assert r.returncode == 0, r.stderr[-2000:]
    assert leftovers() == []
    return out.read_text(), r.stdout


def _claim_rows(report: str) -> list[str]:
    section = report.split("## Conclusions checked", 1)[1]
    return [line for line in section.splitlines() if line.startswith("| **")]


needs_net = pytest.mark.skipif(not CAN_EMULATE, reason="needs root and sshd")


@needs_net
@pytest.mark.skipif(not {"lam", "mpich", "pvm", "tcp"} <= FAMILIES, reason="needs all four")
def test_chau2001_short_mode(tmp_path: Path) -> None:
    report, stdout = _short("chau2001", tmp_path, *_ids("lam", "mpich", "pvm", "tcp"))
    study = studies.load("chau2001")
    rows = _claim_rows(report)
    assert len(rows) == len(study.claims)
    assert all(any(f"**{s}**" in r for s in STATUSES) for r in rows)
    # Table 2 beside ours, and the emulated Fast Ethernet holds raw TCP under its rate
    assert "| 61 us |" in report and "| 77.4 Mbit/s |" in report
    tcp = re.search(r"TCP/IP \(NetPIPE\) \| 89.8 Mbit/s \| tcp: ([\d.]+) Mbit/s", report)
    assert tcp and 80 < float(tcp.group(1)) <= 104
    assert "TCP/IP gives the best performance with an MTU of 1500" in report
    assert "conclusions:" in stdout


@needs_net
def test_nevin1996_short_mode_on_fddi(tmp_path: Path) -> None:
    report, _ = _short("nevin1996", tmp_path, *_ids("lam", "mpich"))
    assert "emulated:fddi,nodes=2,link=100mbit,mtu=4352" in report
    assert "the study ran up to 8 ranks" in report
    barrier = re.search(r"LAM 6.0 \(client-to-client\) \| 5.18 ± 0.96 ms \| lam-[\d.]+: "
                        r"([\d.e+-]+) ± [\d.e+-]+ ms", report)
    assert barrier and 1e-4 < float(barrier.group(1)) < 5  # a 2-rank barrier, 0.1 us-5 ms
    assert len(_claim_rows(report)) == len(studies.load("nevin1996").claims)


def test_cleary2006_short_mode_on_this_machine(tmp_path: Path) -> None:
    report, _ = _short("cleary2006", tmp_path, "--cluster", "local")
    rows = _claim_rows(report)
    assert len(rows) == len(studies.load("cleary2006").claims)
    wtime = re.search(r"MPI_Wtime call, MPICH's minus LAM's .* \| 3 us \| (.*?) \|", report)
    assert wtime and "mpich" in wtime.group(1)
    assert sum("**cannot test**" in r for r in rows) == 0  # everything measurable here


@needs_net
def test_dimitrov2002_short_mode(tmp_path: Path) -> None:
    report, _ = _short("dimitrov2002", tmp_path, *_ids("lam", "impi", "mpich"))
    rows = _claim_rows(report)
    assert len(rows) == len(studies.load("dimitrov2002").claims)
    memory = re.search(r"MPICH 1.2.4 .*? \| 10 MB \| mpich-[\d.]+: ([\d.]+) MB", report)
    assert memory and 0.1 < float(memory.group(1)) < 200  # beyond a library-less process
    # Table 1 beside the profile of HPL's pattern: MPICH is the reference, 1x on both sides
    wait = re.search(r"MPI_Wait, total time .*? \| 1x \| mpich-[\d.]+: 1x \|", report)
    assert wait, "the profiler's MPI_Wait row is missing"
    progress = next(r for r in rows if "Independent progress" in r)
    assert re.search(r"mpich-[\d.]+:async", progress)


def test_unknown_study_and_bad_ranks_are_one_line(tmp_path: Path) -> None:
    r = mpiarena("reproduce", "smith1999", "--db", str(tmp_path / "r.db"))
    assert r.returncode == 2
    assert r.stderr.strip() == ("mpiarena: error: unknown study 'smith1999'; choose one of "
                                "chau2001, cleary2006, dimitrov2002, nevin1996")
    r = mpiarena("reproduce", "nevin1996", "--max-ranks", "1", "--db", str(tmp_path / "r.db"))
    assert r.returncode == 2 and "--max-ranks 1" in r.stderr
