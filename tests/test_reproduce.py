"""`mpiarena reproduce`: the studies as data, their short mode end to end, conclusions checked."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import IMPLS, leftovers, mpiarena
from test_cluster import CAN_EMULATE

from mpiarena import studies
from mpiarena.analysis.claims import check
from mpiarena.analysis.quantities import value
from mpiarena.analysis.reproduction import evaluate
from mpiarena.analysis.verdicts import ClaimResult
from mpiarena.base.errors import ArenaError
from mpiarena.base.records import ImplementationRecord, RunSettings
from mpiarena.cluster.topology import Where
from mpiarena.report.reproduction_text import markdown, published
from mpiarena.runner import reproduce
from mpiarena.store.results import Group, RunData
from mpiarena.studies import Quantity, QuantityKind

SEEDS = Path(__file__).parent / "seeds"  # excerpts of the seed texts (seeds/README.md)
FAMILIES = {i.family for i in IMPLS}


# --- the studies as data --------------------------------------------------------------------


@pytest.mark.parametrize("name", ["nevin1996", "chau2001", "dimitrov2002", "cleary2006"])
def test_every_study_loads_with_its_source(name: str) -> None:
    study = studies.load(name)
    assert study.citation and study.seed.endswith(".txt")
    assert study.experiments and study.claims
    for claim in study.claims:  # a check that cannot run says why
        assert claim.check != "cannot" or len(claim.params.get("why", "")) > 20


@pytest.mark.parametrize("name", ["nevin1996", "chau2001", "dimitrov2002", "cleary2006"])
def test_published_numbers_are_the_seeds_numbers(name: str) -> None:
    """Every number a figure quotes occurs in the study's text (Table 2: 61, 77.44...)."""
    study = studies.load(name)
    text = (SEEDS / study.seed).read_text().replace(",", "")  # 3,213 s
    for fig in study.figures:
        for pub in fig.published.values():
            for number in (pub.value, pub.spread):
                if number is not None:  # as printed, or in seconds where we show ms
                    assert any(re.search(rf"(?<![\d.]){re.escape(f'{n:g}')}0*(?!\d)", text)
                               for n in (number, number / 1000)), (fig.what, number)
            for printed in pub.text.split(" ± "):  # the digits the study printed, no fewer
                assert printed in text or f"{float(printed) / 1000:g}" in text, pub.text


def test_published_figures_are_shown_as_published_and_differences_said() -> None:
    chau, nevin = studies.load("chau2001"), studies.load("nevin1996")
    shown = {(r.what, r.library): published(r) for r in evaluate(chau, {}, {}).figures}
    assert shown["peak throughput", "LAM/MPI 6.3.2 (C2C)"] == "77.44 Mbit/s"
    assert shown["TCP/IP peak throughput", "TCP/IP (NetPIPE)"] == "89.76 Mbit/s"
    barrier = evaluate(nevin, {}, {}).figures[0]
    assert published(barrier) == "5.185 ± 0.957 ms"
    report = markdown(evaluate(nevin, {}, {}), {}, {}, [], "r.db")
    assert "## How this rerun differs from the study" in report
    assert "rank 0's time" in report and "-c2c -nger -O" in report


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
    with pytest.raises(ArenaError, match=re.escape("check 'all' and [[claim.part]] go together")):
        studies.parse("bad", {**good, "claim": [{**claim, "check": "all"}]}, "bad.toml")
    with pytest.raises(ArenaError, match="published value of lam is a number"):
        studies.parse("bad", {**good, "figure": [{"what": "w", "source": "s", "unit": "us",
                                                  "why": "gone", "published": {"lam": True}}]},
                      "bad.toml")


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


FAMILY = {"lam-7.1.4": "lam", "mpich-4.0.2": "mpich", "mpich-5.0.2": "mpich",
          "pvm-3.4.6": "pvm", "tcp": "tcp", "impi-2021.19.0": "impi"}
FE = "emulated:fast-ethernet,nodes=2,link=100mbit,mtu=1500"
FDDI = "emulated:fddi,nodes=2,link=100mbit,mtu=4352"


def _run(cells: dict, topology: str = "local") -> RunData:
    """A run from cells of variant -> observations (or a Group, for per-rank figures)."""
    groups = {k: {v: g if isinstance(g, Group) else Group(values=list(g)) for v, g in cell.items()}
              for k, cell in cells.items()}
    variants = sorted({v for cell in cells.values() for v in cell})
    impls = [ImplementationRecord(run_id=1, impl_id=i, family=f, version="", version_string="",
                                  origin="", prefix=None, wrapper="", launcher="", wrapper_flags="",
                                  cflags="")
             for i, f in FAMILY.items() if any(v.split(":")[0] == i for v in variants)]
    return RunData(run_id=1, run={}, status="complete", implementations=impls, variants=variants,
                   jobs=[], settings=RunSettings(topology=topology), cells=groups)


def _netpipe(mbps: dict[str, dict[int, float]], bench: str = "pingpong") -> dict:
    """Ping-pong cells from each variant's NetPIPE throughput (Mbit/s) per size."""
    cells: dict = {}
    for v, curve in mbps.items():
        for size, rate in curve.items():
            cells.setdefault((bench, size, 2), {})[v] = [size * 8 / (rate * 1e6)] * 3
    return cells


def _claim(study: studies.Study, words: str) -> studies.Claim:
    return next(c for c in study.claims if words in c.text)


def _launches(levels: list[float], per: int = 3, spread: float = 0.01) -> Group:
    """A cell measured in one launch per level: `per` observations around each level."""
    values = [x * (1 + spread * (i - 1)) for x in levels for i in range(per)]
    return Group(values=values, launches=[n for n in range(len(levels)) for _ in range(per)])


def test_a_claim_on_launches_is_decided_by_their_interval() -> None:
    """With 3 launches or more a comparison is decided by the ratio's interval over launches:
    a point figure 6x ahead whose launches straddle the margin is undecided, not 'holds'."""
    study = studies.load("cleary2006")
    sendrecv = _claim(study, "Sendrecv")  # "over five-fold": at least 5x
    cell = ("sendrecv", 4000, 2)

    def run(lam: list[float], mpich: list[float]) -> RunData:
        return _run({cell: {"lam-7.1.4": _launches(lam), "mpich-4.0.2": _launches(mpich)}})

    steady = run([1e-5] * 6, [6e-5] * 6)
    row = check(sendrecv, study, {"calls": steady}, {})
    assert row.result == ClaimResult.HOLDS and "95% CI over launches: lam-7.1.4 over mpich-4.0.2 " \
        in row.detail, row.detail
    # the same medians (6x), but launches at 2x to 12x: the interval reaches below 5x
    straddling = run([1e-5] * 6, [2e-5, 3e-5, 6e-5, 6e-5, 9e-5, 12e-5])
    row = check(sendrecv, study, {"calls": straddling}, {})
    assert row.result == ClaimResult.UNDECIDED, row.detail
    # every launch 3x: the whole interval lies below 5x, so it does not hold
    row = check(sendrecv, study, {"calls": run([1e-5] * 6, [3e-5] * 6)}, {})
    assert row.result == ClaimResult.FAILS, row.detail


def test_a_similarity_on_launches_is_decided_by_their_interval() -> None:
    """'The same time' holds over launches only when the interval of largest over smallest
    stays within the claim's 5%; launches scattered 0.5x-2x leave it undecided."""
    study = studies.load("chau2001")
    md = _claim(study, "Molecular dynamics takes the same time")
    cell = ("app-md", 256, 2)

    def run(lam: list[float], mpich: list[float]) -> dict:
        return {"md": _run({cell: {"lam-7.1.4": _launches(lam),
                                   "mpich-4.0.2": _launches(mpich)}})}

    row = check(md, study, run([1.0] * 6, [1.0] * 6), {})
    assert row.result == ClaimResult.HOLDS and "95% CI over launches" in row.detail, row.detail
    row = check(md, study, run([1.0] * 6, [0.5, 0.7, 1.0, 1.0, 1.4, 2.0]), {})
    assert row.result == ClaimResult.UNDECIDED, row.detail
    row = check(md, study, run([1.0] * 6, [1.5] * 6), {})
    assert row.result == ClaimResult.FAILS, row.detail


def test_flatness_on_a_fitted_line_is_decided_by_its_launch_replicates() -> None:
    """Cleary's 'MPI_Wtime does not change with the ranks', judged on t = a + b * ranks over 1,
    3 and 5 ranks: flat when every launch replicate's line grows under 25%, not flat when all
    grow 2x, undecided when the replicates straddle the bound."""
    study = studies.load("cleary2006")
    flat = _claim(study, "judged on a line fitted over the rank counts")

    def run(growth: list[float]) -> dict:
        cells = {("wtime", 0, n): {v: _launches([1e-7 * (1 + (g - 1) * (n - 1) / 4)
                                                 for g in growth])
                                   for v in ("lam-7.1.4", "mpich-4.0.2")} for n in (1, 3, 5)}
        return {"wtime": _run(cells)}

    row = check(flat, study, run([1.0, 1.02, 0.99, 1.01, 1.0, 1.03]), {})
    assert row.result == ClaimResult.HOLDS and "lam-7.1.4 1 to 5 ranks x1 " in row.detail, \
        row.detail
    assert "95% interval" in row.detail and "6 launch replicates" in row.detail
    row = check(flat, study, run([2.0] * 6), {})
    assert row.result == ClaimResult.FAILS and "x2" in row.detail, row.detail
    row = check(flat, study, run([1.0, 1.1, 1.2, 1.3, 1.5, 1.6]), {})
    assert row.result == ClaimResult.UNDECIDED, row.detail


def test_a_claim_holds_only_beyond_the_noise_margin() -> None:
    study = studies.load("cleary2006")
    sendrecv = _claim(study, "Sendrecv")  # "over five-fold": at least 5x
    fast = _run({("sendrecv", 4000, 2): {"lam-7.1.4": [1e-5] * 5, "mpich-4.0.2": [6e-5] * 5}})
    row = check(sendrecv, study, {"calls": fast}, {})
    assert row.result == ClaimResult.HOLDS and "6x" in row.detail and "published 5x" in row.detail
    three = _run({("sendrecv", 4000, 2): {"lam-7.1.4": [1e-5] * 5, "mpich-4.0.2": [3e-5] * 5}})
    row = check(sendrecv, study, {"calls": three}, {})
    assert row.result == ClaimResult.FAILS and "by 3x" in row.detail and "needs 5x" in row.detail
    row = check(sendrecv, study, {}, {"calls": "no implementation found"})
    assert row.result == ClaimResult.CANNOT and "no implementation found" in row.detail


def test_the_best_beats_every_rival() -> None:
    """LAM at 43 us beats PVM but not MPICH at 9 us: 'LAM has the lowest latency' does not
    hold (it read 'partly' when each pair counted); within 5% of a rival is no win either."""
    study = studies.load("chau2001")
    lowest = _claim(study, "lowest latency")

    def latency(lam: float) -> RunData:
        us = {"lam-7.1.4": lam, "mpich-4.0.2": 9.07, "mpich-5.0.2": 11.5, "pvm-3.4.6": 108}
        return _run({("pingpong", 1, 2): {v: [t * 1e-6] * 3 for v, t in us.items()}}, FE)

    row = check(lowest, study, {"netpipe": latency(43.1)}, {})
    assert row.result == ClaimResult.FAILS
    assert "lam-7.1.4 does not beat mpich-4.0.2, mpich-5.0.2" in row.detail
    # 3% ahead
    assert check(lowest, study, {"netpipe": latency(8.8)}, {}).result == ClaimResult.FAILS
    assert check(lowest, study, {"netpipe": latency(8.0)}, {}).result == ClaimResult.HOLDS


def test_an_order_holds_step_by_step() -> None:
    study = studies.load("chau2001")
    pi = _claim(study, "Pi:")  # LAM, then PVM, then MPICH

    def times(lam: float, pvm: float, mpich: float) -> dict:
        return {"apps": _run({("app-pi", 10_000_000, 2): {
            "lam-7.1.4": [lam] * 2, "pvm-3.4.6": [pvm] * 2, "mpich-4.0.2": [mpich] * 2}})}

    assert check(pi, study, times(1.0, 1.4, 1.9), {}, ).result == ClaimResult.HOLDS
    row = check(pi, study, times(1.0, 1.9, 1.4), {})
    assert row.result == ClaimResult.PARTLY and "lam before pvm by 1.9x: yes" in row.detail
    assert "pvm before mpich by 0.737x: no" in row.detail
    assert check(pi, study, times(1.9, 1.4, 1.0), {}).result == ClaimResult.FAILS


def test_a_stated_magnitude_must_be_met_within_its_tolerance() -> None:
    """Nevin's barrier: rank 0's means, as the study reported, 1.40x within 1.23-1.59x; the
    right direction by 1.1x does not hold, and the slowest rank would have read otherwise."""
    study = studies.load("nevin1996")
    barrier = _claim(study, "barrier")

    def run(lam0: float, mpich0: float) -> dict:
        def g(rank0: float) -> Group:  # rank 1 is slow in every observation
            return Group(values=[9e-3] * 4, per_rank=[[rank0, 9e-3]] * 4)
        return {"collectives": _run({("barrier", 0, 2): {"lam-7.1.4": g(lam0),
                                                         "mpich-4.0.2": g(mpich0)}}, FDDI)}

    row = check(barrier, study, run(5.2e-3, 7.3e-3), {})
    assert row.result == ClaimResult.HOLDS and "by 1.4x (published 1.4x)" in row.detail
    assert "needs 1.23-1.59x" in row.detail
    row = check(barrier, study, run(5.2e-3, 5.7e-3), {})
    assert row.result == ClaimResult.FAILS and "by 1.1x" in row.detail
    # 1.73x: too much
    assert check(barrier, study, run(5.2e-3, 9.0e-3), {}).result == ClaimResult.FAILS
    # Dimitrov: "about 10%" of peak bandwidth is 5-15%
    dimitrov = studies.load("dimitrov2002")
    about = _claim(dimitrov, "about 10%")
    for wait, result in ((99.0, ClaimResult.HOLDS), (117.0, ClaimResult.FAILS),
                         (92.0, ClaimResult.FAILS)):
        curves = {"mpich-4.0.2": {1 << 20: 90.0}, "impi-2021.19.0:wait": {1 << 20: wait}}
        row = check(about, dimitrov, {"bandwidth": _run(_netpipe(curves))}, {})
        assert row.result == result, (wait, row.detail)


def test_a_switch_is_at_its_size_and_not_the_links_bend() -> None:
    """On emulated FDDI every curve bends where messages outgrow the bucket (4-6 KiB, the cost
    per byte turning into the link's); LAM's 8 KiB switch is a jump between 8 and 10 KiB, which
    the 16 KiB claim of MPICH does not take for its own."""
    study = studies.load("nevin1996")
    lam8k, mpich16k = _claim(study, "LAM switches"), _claim(study, "MPICH switches")
    sizes = [1, 1024, 2048, 4096, 6144, 8192, 10240, 12288, 16384, 20480, 24576, 32768, 49152,
             65536, 131072]

    def run(jump_after: int | None) -> dict:
        def t(s: int, i: int) -> float:
            wire = 20e-6 + max(0, s - 4400) * 8 / 100e6  # host speed inside the bucket
            jump = 150e-6 if jump_after is not None and s > jump_after else 0.0
            return (wire + jump) * (1 + 0.01 * (i % 3 - 1))
        cells = {("pingpong", s, 2): {"lam-7.1.4": [t(s, i)] * 3, "mpich-4.0.2": [t(s, i)] * 3}
                 for i, s in enumerate(sizes)}
        return {"p2p": _run(cells, FDDI)}

    row = check(lam8k, study, run(None), {})
    assert row.result == ClaimResult.FAILS \
        and "the link's: messages outgrow its bucket" in row.detail
    assert check(lam8k, study, run(8192), {}).result == ClaimResult.HOLDS
    assert check(mpich16k, study, run(8192), {}).result == ClaimResult.FAILS


def test_zero_byte_broadcasts_in_two_parts() -> None:
    study = studies.load("nevin1996")
    zero = _claim(study, "zero bytes")

    def run(lam0: float) -> dict:
        return {"collectives": _run({
            ("bcast-ack", 0, 2): {"lam-7.1.4": [lam0] * 3, "mpich-4.0.2": [10e-6] * 3},
            ("bcast-ack", 1, 2): {"lam-7.1.4": [20e-6] * 3, "mpich-4.0.2": [20e-6] * 3}})}

    row = check(zero, study, run(19e-6), {})
    assert row.result == ClaimResult.HOLDS and row.detail.count(": holds (") == 2
    row = check(zero, study, run(10e-6), {})  # LAM skips them too
    assert row.result == ClaimResult.PARTLY and "LAM's 0-byte broadcast" in row.detail
    assert check(zero, study, {}, {}).result == ClaimResult.CANNOT


def test_peaks_at_32_to_64k_use_what_the_link_cannot_flatter() -> None:
    """A 16 KiB ping-pong at 180 Mbit/s is the bucket's, not a peak outside 32-64 KiB; a curve
    that rises to its plateau neither peaks there nor falls after."""
    study = studies.load("chau2001")
    peaks = _claim(study, "most effectively")
    peaked = {16384: 180.0, 49152: 96.0, 65536: 95.0, 1 << 20: 85.0}
    plateau = {16384: 180.0, 49152: 93.0, 65536: 94.0, 1 << 20: 94.1}
    for curve, result in ((peaked, ClaimResult.HOLDS), (plateau, ClaimResult.FAILS)):
        cells = _netpipe({v: curve for v in ("lam-7.1.4", "mpich-4.0.2", "pvm-3.4.6")})
        row = check(peaks, study, {"netpipe": _run(cells, FE)}, {})
        assert row.result == result, row.detail
    assert "sizes under 42765 B are left out" in row.detail


def test_thresholds_compare_where_they_differ() -> None:
    """96 to 256 KiB, where the 64, 128 and 256 KiB thresholds send messages differently."""
    study = studies.load("chau2001")
    threshold = _claim(study, "short-message threshold")
    names = ("lam-7.1.4:short64k", "lam-7.1.4:short128k", "lam-7.1.4:short256k")
    same = {s: 80.0 for s in (96 << 10, 192 << 10, 256 << 10, 1 << 20)}
    row = check(threshold, study, {"threshold": _run(_netpipe({v: same for v in names}))}, {})
    assert row.result == ClaimResult.HOLDS and "at 192 KiB: 1x" in row.detail
    faster = {**same, 192 << 10: 90.0}  # the 256 KiB threshold sends 192 KiB short
    curves = {v: faster if v.endswith("256k") else same for v in names}
    row = check(threshold, study, {"threshold": _run(_netpipe(curves))}, {})
    assert row.result == ClaimResult.PARTLY and "at 192 KiB: 1.12x" in row.detail


def test_startup_is_launch_and_finalize() -> None:
    study = studies.load("chau2001")
    startup = _claim(study, "launches, ends and clears up")

    def run(lam_finalize: float) -> dict:
        return {"netpipe": _run({
            ("init", 0, 2): {"lam-7.1.4": [0.1] * 3, "mpich-4.0.2": [0.3] * 3},
            ("finalize", 0, 2): {"lam-7.1.4": [lam_finalize] * 3, "mpich-4.0.2": [0.01] * 3}})}

    assert check(startup, study, run(0.001), {}).result == ClaimResult.HOLDS
    row = check(startup, study, run(0.05), {})
    assert row.result == ClaimResult.PARTLY and "ends and clears up" in row.detail


def test_polling_against_blocking_within_one_library() -> None:
    """Each stand-in against its own other mode: Intel MPI polling 30 us against waiting 35 us,
    LAM usysv 1 us against tcp 25 us holds, although Intel MPI polling is slower than LAM tcp;
    the alltoall's CPU is the one the study quotes."""
    study = studies.load("dimitrov2002")
    latency = _claim(study, "latency of short messages")
    us = {"impi-2021.19.0": 30, "impi-2021.19.0:wait": 35, "lam-7.1.4": 1, "lam-7.1.4:tcp": 25}
    run = _run({("pingpong", 8, 2): {v: [t * 1e-6] * 3 for v, t in us.items()}})
    row = check(latency, study, {"bandwidth": run}, {})
    assert row.result == ClaimResult.HOLDS and "1.17-25x" in row.detail
    negligible = _claim(study, "negligible impact")
    curves = {v: {64 << 10: 94.0, 1 << 20: 94.0} for v in us}
    curves["lam-7.1.4:tcp"] = {64 << 10: 80.0, 1 << 20: 94.0}
    row = check(negligible, study, {"bandwidth": _run(_netpipe(curves))}, {})
    assert row.result == ClaimResult.PARTLY and "at 64 KiB lam-7.1.4: 1.18x" in row.detail
    cpu = _claim(study, "uses less CPU")
    cells = {("alltoall", 1 << 20, 2): {v: Group(values=[1e-3] * 2, extras=[{"cpu": [c, c]}] * 2)
                                        for v, c in (("mpich-4.0.2", 0.24),
                                                     ("impi-2021.19.0:wait", 0.09))}}
    row = check(cpu, study, {"alltoall": _run(cells)}, {})
    assert row.result == ClaimResult.HOLDS and "by 2.67x" in row.detail


def test_reduce_differs_more_as_data_grow_and_scatter_does_not() -> None:
    study = studies.load("cleary2006")
    grows = _claim(study, "especially as the dataset grows")
    scatter = _claim(study, "For MPI_Scatter")

    def run(lam: list[float], mpich: list[float]) -> dict:
        cells = {("app-matvec", n, 3): {
            v: Group(values=[1.0] * 2, extras=[{"t_reduce": [t] * 3, "t_scatter": [t] * 3}] * 2)
            for v, t in (("lam-7.1.4", a), ("mpich-4.0.2", b))}
            for n, a, b in zip((200, 400, 800), lam, mpich, strict=True)}
        return {"matrix": _run(cells)}

    row = check(grows, study, run([1.2, 2.0, 4.0], [1.0] * 3), {})
    assert row.result == ClaimResult.HOLDS and "800: 4x" in row.detail
    # not growing
    assert check(grows, study, run([4.0] * 3, [1.0] * 3), {}).result == ClaimResult.FAILS
    assert check(scatter, study, run([1.0, 1.05, 1.0], [1.0] * 3), {}).result == ClaimResult.HOLDS
    assert check(scatter, study, run([1.0, 1.05, 1.5], [1.0] * 3), {}).result == ClaimResult.PARTLY


def test_throughput_the_emulated_link_flatters_is_not_a_peak() -> None:
    """tbf's bucket lets a 1 KiB message through at host speed: 164 Mbit/s on a 100 Mbit/s
    link is left out of the peak (sizes under 42765 B are); on this machine alone it counts."""
    cells = {("pingpong", 1024, 2): {"lam-7.1.4": [0.05e-3] * 3},  # 164 Mbit/s
             ("pingpong", 1 << 20, 2): {"lam-7.1.4": [86e-3] * 3}}  # 97.5 Mbit/s
    q = Quantity("netpipe", QuantityKind.PEAK, "pingpong")
    emulated = _run(cells, FE)
    assert value(emulated, q, "lam-7.1.4") * 8e-6 == pytest.approx(97.5, rel=0.01)
    assert value(_run(cells), q, "lam-7.1.4") * 8e-6 == pytest.approx(163.8, rel=0.01)


# --- end to end, the short mode -------------------------------------------------------------


def _ids(*families: str) -> list[str]:
    """--impl options for the study's families, one MPICH to keep the tests short: the PyPI one
    where installed, since Debian's 4.0.2 (ch4:ucx over TCP) hangs in MPI_Finalize across
    emulated nodes now and then (docs/clusters.md), which cost a test its 20 s timeout."""
    mpich = [i for i in IMPLS if i.family == "mpich"]
    one = next((i for i in mpich if i.origin == "pypi"), mpich[0] if mpich else None)
    return [f"--impl={i.id}" for i in IMPLS if i.family in families and
            (i.family != "mpich" or i == one)]


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
@pytest.mark.skipif("tcp" not in FAMILIES, reason="needs raw TCP")
def test_chau2001_short_mode(tmp_path: Path) -> None:
    """Raw TCP alone, enough for what is asserted here: every conclusion gets a row and the
    published tables stand beside ours (12 s; LAM/MPI's lamd and short-message variants, MPICH
    and PVM as the study ran them: bench/studies_short.py, 100 s)."""
    report, stdout = _short("chau2001", tmp_path, *_ids("tcp"))
    study = studies.load("chau2001")
    rows = _claim_rows(report)
    assert len(rows) == len(study.claims)
    assert all(any(f"**{s}**" in r for s in ClaimResult) for r in rows)
    # Table 2 beside ours, as printed; the emulated Fast Ethernet holds raw TCP under its rate
    # and carries most of it (a fresh clone's run on a VM whose host took CPU: 78.8 Mbit/s)
    assert "| 61 us |" in report and "| 77.44 Mbit/s |" in report
    tcp = re.search(r"TCP/IP \(NetPIPE\) \| 89.76 Mbit/s \| tcp: ([\d.]+) Mbit/s", report)
    assert tcp and 60 < float(tcp.group(1)) <= 100
    assert "TCP/IP gives the best performance with an MTU of 1500" in report
    assert "conclusions:" in stdout


@needs_net
def test_nevin1996_short_mode_on_fddi(tmp_path: Path) -> None:
    report, _ = _short("nevin1996", tmp_path, *_ids("lam"))  # what it asserts is LAM's
    assert "emulated:fddi,nodes=2,link=100mbit,mtu=4352" in report
    assert "the study ran up to 8 ranks" in report
    barrier = re.search(r"LAM 6.0 \(client-to-client\) \| 5.185 ± 0.957 ms \| lam-[\d.]+: "
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
    """MPICH alone on Gigabit Ethernet, enough for what is asserted here (its LAM/MPI and Intel
    MPI variants and the study's Fast Ethernet: bench/studies_short.py)."""
    report, _ = _short("dimitrov2002", tmp_path, *_ids("mpich"), "--cluster", "emulated:gige")
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
