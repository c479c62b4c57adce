"""mpiarena tune: the algorithm lists read from each library, the selection, the files in each
library's own format, and --verify, which must show a planted slow choice as slower."""

from __future__ import annotations

import io
import json
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import IMPLS, mpiarena
from rich.console import Console

from mpiarena.analysis.comparison import Comparison
from mpiarena.analysis.library_tuning import Choice, Gain, ranges
from mpiarena.analysis.verdicts import Judgement, Speed, TuningEffect
from mpiarena.base import users
from mpiarena.cluster.topology import Where
from mpiarena.impls import family_of
from mpiarena.impls.base import Algorithm, Rule
from mpiarena.impls.impi import _offered
from mpiarena.impls.mpich import _listed, library_selection, selection_json
from mpiarena.impls.openmpi import _enumerated, rules_text
from mpiarena.platform.plan import make_plan
from mpiarena.report.library_tuning import gain_line
from mpiarena.runner.library_tuning import Measure, tune, write_manifest
from mpiarena.runner.session import RunContext
from mpiarena.store import Store
from mpiarena.suites import Suite, VariantSpec, check

OMPI = next((i for i in IMPLS if i.family == "openmpi"), None)
MPICH4 = next((i for i in IMPLS if i.family == "mpich" and i.version.startswith("4")), None)
MPICH5 = next((i for i in IMPLS if i.family == "mpich" and i.version.startswith("5")), None)
IMPI = next((i for i in IMPLS if i.family == "impi"), None)


def _need(impl):
    return pytest.mark.skipif(impl is None, reason="not installed here")


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory the rank user can reach (pytest's own tmp_path is private to root)."""
    with tempfile.TemporaryDirectory(prefix="mpiarena-tune-") as d:
        Path(d).chmod(0o755)
        yield Path(d)


# --- the algorithm lists --------------------------------------------------------------------


@_need(OMPI)
def test_openmpi_lists_what_ompi_info_enumerates():
    assert OMPI is not None
    listed = _enumerated(OMPI)
    assert listed["allreduce"][4] == "ring" and 0 not in listed["allreduce"]
    algs = family_of(OMPI).algorithms(OMPI, "bcast")
    assert [a.name for a in algs] == [listed["bcast"][n] for n in sorted(listed["bcast"])]
    assert ("OMPI_MCA_coll_tuned_bcast_algorithm", algs[0].key) in algs[0].env


@_need(MPICH4)
def test_mpich4_lists_what_mpivars_enumerates():
    assert MPICH4 is not None
    assert set(_listed(MPICH4, "allreduce")) >= {"recursive_doubling",
                                                 "reduce_scatter_allgather", "nb"}
    assert "auto" not in _listed(MPICH4, "bcast")
    alg = family_of(MPICH4).algorithms(MPICH4, "bcast")[0]
    assert alg.key.startswith("MPIR_Bcast_")
    assert ("MPIR_CVAR_BCAST_INTRA_ALGORITHM", alg.name) in alg.env


@_need(MPICH5)
def test_mpich5_mpivars_lists_none_and_the_table_stands_in():
    assert MPICH5 is not None
    assert _listed(MPICH5, "allreduce") == []  # MPICH 5's mpivars leaves the enumeration out
    assert [a.name for a in family_of(MPICH5).algorithms(MPICH5, "allreduce")]


@_need(IMPI)
def test_impi_ids_are_capped_by_impi_info():
    assert IMPI is not None
    most = _offered(IMPI, "allreduce")
    assert most is not None and most >= 8
    algs = family_of(IMPI).algorithms(IMPI, "allreduce")
    assert [a.key for a in algs] == [str(i) for i in range(1, len(algs) + 1)]
    assert algs[0].env == (("I_MPI_ADJUST_ALLREDUCE", "1"),)


def test_a_variant_limited_to_a_benchmark_measures_only_it():
    impl = IMPLS[0]
    suite = check(Suite("t", "", ("allreduce", "bcast"), (8,), (2,), launches=1, variants=(
        VariantSpec(impl.id, "only", benchmarks=("bcast",)),)), "test")
    turns = [(c.cell.bench, v.id) for r in make_plan(suite, [impl], 1).rounds for s in r.sessions
             for c, v in s.turns]
    assert sorted(turns) == sorted([("allreduce", impl.id), ("bcast", impl.id),
                                    ("bcast", f"{impl.id}:only")])


# --- the selection --------------------------------------------------------------------------


def _choice(size: int, fastest: str, outcome: Judgement, ratio: float = 1.5) -> Choice:
    """The default's figure over the fastest algorithm's, judged `outcome`."""
    return Choice("x", "bcast", 2, size, fastest,
                  Comparison(ratio, ratio - 0.2, ratio + 0.2, 0.001, outcome, 10, 10, 0), True)


def test_ranges_switch_only_where_decided_and_merge_neighbours():
    picked = [_choice(8, "x:bcast=a", Judgement.OPEN), _choice(1024, "x:bcast=b", Judgement.ABOVE),
              _choice(65536, "x:bcast=b", Judgement.ABOVE),
              _choice(2**20, "x:bcast=c", Judgement.SAME, 1.01)]
    assert [c.outcome for c in picked] == [Speed.UNDECIDED, Speed.FASTER, Speed.FASTER,
                                           Speed.INDISTINGUISHABLE]
    got = [(r.lo, r.hi, r.variant) for r in ranges(picked)]
    assert got == [(0, 1024, None), (1024, 2**20, "x:bcast=b"), (2**20, None, None)]


@_need(OMPI)
def test_openmpi_rules_file_starts_each_size_list_at_zero():
    assert OMPI is not None
    ring = next(a for a in family_of(OMPI).algorithms(OMPI, "allreduce") if a.name == "ring")
    text = rules_text([Rule("allreduce", 2, 0, 1024, None),
                       Rule("allreduce", 2, 1024, None, ring)])
    numbers = [line.split("#")[0].split() for line in text.splitlines()]
    assert numbers == [["1"], ["2"], ["1"], ["2"], ["2"], ["0", "0", "0", "0"],
                       ["1024", ring.key, "0", "0"]]


@_need(MPICH4)
def test_mpich_json_keeps_every_other_collective_of_the_library():
    assert MPICH4 is not None
    tree = library_selection(MPICH4)
    ring = next(a for a in family_of(MPICH4).algorithms(MPICH4, "allgather")
                if a.name == "ring")
    out = selection_json(tree, [Rule("allgather", 2, 0, 4096, None),
                                Rule("allgather", 2, 4096, None, ring)])
    assert set(out) == set(tree) and out["collective=bcast"] == tree["collective=bcast"]
    branch = out["collective=allgather"]["comm_type=intra"]
    assert list(branch) == ["comm_size<3", "comm_size=any"]
    assert branch["comm_size<3"]["avg_msg_size=any"] == {"algorithm=MPIR_Allgather_intra_ring":
                                                         {}}
    assert branch["comm_size<3"]["avg_msg_size<=4095"] == \
        tree["collective=allgather"]["comm_type=intra"]


@_need(MPICH4)
def test_mpich_hands_a_switched_range_from_shared_memory_to_mpir(shared_dir):
    assert MPICH4 is not None
    binomial = next(a for a in family_of(MPICH4).algorithms(MPICH4, "bcast")
                    if a.name == "binomial")
    written = family_of(MPICH4).write_tuning(MPICH4, [Rule("bcast", 2, 0, 1024, None),
                                                      Rule("bcast", 2, 1024, None, binomial)],
                                             shared_dir)
    env = dict(written.env)
    shm = json.loads(Path(env["MPIR_CVAR_CH4_POSIX_COLL_SELECTION_TUNING_JSON_FILE"]).read_text())
    branch = shm["collective=bcast"]["comm_type=intra"]["comm_size<3"]
    assert list(branch["avg_msg_size=any"]) == ["is_multi_threaded=yes"]  # never matches
    assert "is_multi_threaded=no" in json.dumps(branch["avg_msg_size<=1023"])  # the library's
    mpir = json.loads(written.path.read_text())["collective=bcast"]["comm_type=intra"]
    assert mpir["comm_size<3"]["avg_msg_size=any"] == {"algorithm=MPIR_Bcast_intra_binomial": {}}
    # smp calls the collective again on the node: chosen there, it must not choose itself
    # (measured: MPICH 5.0.2 aborted with 'Internal error' at 3 ranks)
    smp = next(a for a in family_of(MPICH4).algorithms(MPICH4, "bcast") if a.name == "smp")
    tree = selection_json(library_selection(MPICH4), [Rule("bcast", 3, 0, None, smp)])
    chosen = tree["collective=bcast"]["comm_type=intra"]["comm_size<4"]["avg_msg_size=any"]
    assert chosen["comm_hierarchy=parent"] == {"algorithm=MPIR_Bcast_intra_smp": {}}
    assert "comm_hierarchy=any" in chosen


# --- files loaded by the library: a planted slow choice must show -------------------------

# (implementation, collective, algorithm known to be far slower than the default on 2 ranks
# here at the sizes given: measured by 'mpiarena tune', 3-35x; launches a side; whether the
# verification must decide the slowdown, or only read it as slower and never as a gain)
BOTH = (65536, 2**20)
PLANTED = [
    # Open MPI: 12 launches a side (its launches cost 0.4 s each; 2-3x slower, told at both sizes)
    pytest.param(OMPI, "bcast", "scatter_allgather", BOTH, 12, True, marks=_need(OMPI),
                 id="openmpi"),
    # alltoall: ch4's shared memory layer leaves it to MPIR, so the JSON file alone decides;
    # Bruck's rotations copy the whole buffer twice more than a pairwise exchange of 2 ranks
    pytest.param(MPICH4, "alltoall", "brucks", BOTH, 20, True, marks=_need(MPICH4), id="mpich4"),
    # MPICH 5.0.2 composes alltoall differently (the MPIR tree does not decide it at 2 ranks:
    # measured 0.87x and 1.09x); its bcast goes through both files, the shared-memory one
    # handing the range to MPIR and MPIR's choosing the algorithm; at 1 MiB that choice is not
    # slower than MPICH 5's default (0.98x on CI's machine, 1.25x faster here over 20 launches).
    # At 64 KiB alone, 0.43-0.56x, it is one cell too few to be decided on every run: a fresh
    # clone read 0.56x (95% CI 0.41-1.37) at 20 launches, undecided, after CI's machine had read
    # 0.43x (0.36-0.72). Here the file is read as loaded (below 0.8x) and never as a gain;
    # deciding a slowdown is the rule's, held in simulation (tests/test_rule_at_the_line.py)
    pytest.param(MPICH5, "bcast", "scatter_recursive_doubling_allgather", (65536,), 10, False,
                 marks=_need(MPICH5), id="mpich5"),
    # Intel MPI 2021.19: 0.64-0.67x at 64 KiB and 0.29-0.33x at 1 MiB, each decided at 8 launches
    # as at 20 (2026-11-28), before intervals allowed for reruns (issue 60); a fresh clone's run
    # under 9% steal read 0.62x (95% CI 0.29-0.98) and 0.58x at 10 launches, both undecided.
    # Deciding it on every run took 20 launches a side, 15 s of make test's lane alone (each
    # launch sleeps 0.25 s in MPI_Init, calibrating Intel's cycle timer): here the file is read
    # as loaded and never as a gain, and deciding is the rule's, as for MPICH 5
    pytest.param(IMPI, "allreduce", "topo_reduce_bcast", BOTH, 8, False, marks=_need(IMPI),
                 id="impi"),
]


@pytest.mark.alone  # a slowdown read from measured figures
@pytest.mark.parametrize(("impl", "coll", "slow", "sizes", "launches", "decided"), PLANTED)
def test_a_planted_slow_choice_loaded_through_the_file_is_slower(impl, coll, slow, sizes,
                                                                  launches, decided, shared_dir,
                                                                  db):
    alg = next(a for a in family_of(impl).algorithms(impl, coll) if a.name == slow)
    written = family_of(impl).write_tuning(impl, [Rule(coll, 2, 0, None, alg)], shared_dir)
    write_manifest(shared_dir, 0, Measure((coll,), (2,), sizes, 5, 3, Where(), 60),
                   {impl.id: written}, [])
    res = mpiarena("tune", "--verify", str(shared_dir), "--launches", str(launches), "--db", db)
    assert res.returncode == 0, res.stderr
    lines = [x for x in res.stdout.splitlines() if x.startswith(impl.id)]
    assert len(lines) == len(sizes)  # one line per cell
    ratios = [float(m.group(1)) for x in lines if (m := re.search(r": ([\d.]+)x", x))]
    # 0.35-0.7x here, 0.71x on CI's machine; busy spells left 5 launches undecided (CI
    # 0.18-1.66), and on CI's machine 10 (MPICH 5 at 64 KiB: 0.43x, CI 0.36-0.72, short of the
    # corrected test), hence 20 (12 for Open MPI). A busy machine can hide one size of two,
    # not both; the file shows as a decided slowdown and never as a gain
    assert len(ratios) == len(sizes) and min(ratios) < 0.8, res.stdout
    assert not decided or any("WORSE" in x for x in lines), res.stdout
    assert not any("faster with" in x for x in lines), res.stdout
    assert all(r < 1 for x, r in zip(lines, ratios, strict=True) if "WORSE" in x)


def test_a_cell_made_worse_says_so():
    worse = Gain("x", "bcast", 2, 65536, Comparison(0.2, 0.15, 0.3, 0.01, Judgement.BELOW, 5, 7, 0))
    assert worse.outcome == TuningEffect.WORSE
    line = gain_line(worse)
    assert line == ("x bcast 64 KiB, 2 ranks: WORSE with the tuning file: 0.20x the default's "
                    "speed (95% CI 0.15-0.30, 5 launches)")


# --- the command ----------------------------------------------------------------------------


@_need(OMPI)
def test_tune_measures_chooses_writes_and_reports(shared_dir, db, tmp_path):
    res = mpiarena("tune", "--impl", "openmpi-4.1.4", "--bench", "bcast", "--algorithms",
                   "scatter_allgather,pipeline", "--sizes", "64K,1M", "--launches", "2",
                   "--dir", str(shared_dir), "--db", db)
    assert res.returncode == 0, res.stderr
    manifest = json.loads((shared_dir / "tuning.json").read_text())
    rules = Path(manifest["files"]["openmpi-4.1.4"]["path"])
    assert rules.read_text().startswith("1  # collectives\n7  # bcast")
    assert "OMPI_MCA_coll_tuned_dynamic_rules_filename" in res.stdout
    # two launches can never back a switch: the default stays everywhere
    assert all(r["variant"] is None for r in manifest["ranges"])
    exported = mpiarena("export", "latest", "--summary", "--db", db).stdout
    assert "openmpi-4.1.4:bcast=scatter_allgather,bcast,65536" in exported  # in the store,
    assert "openmpi-4.1.4:bcast=pipeline,bcast,1048576" in exported  # beside the default
    report = mpiarena("report", "latest", "--db", db, "-o", str(tmp_path / "r.html"))
    assert report.returncode == 0, report.stderr
    assert "algorithms against the default" in (tmp_path / "r.html").read_text()


@_need(OMPI)
def test_an_algorithm_that_fails_is_reported_and_left_out(shared_dir, db, monkeypatch):
    """A library whose forced algorithm cannot start (planted: a transport that does not
    exist) must not stop the tuning, nor be chosen anywhere."""
    assert OMPI is not None
    family = family_of(OMPI)
    real = family.algorithms(OMPI, "bcast")
    broken = Algorithm("bcast", "broken", "99", (("OMPI_MCA_pml", "nonexistent"),))
    monkeypatch.setattr(type(family), "algorithms",
                        lambda self, impl, coll: [real[0], broken])
    m = Measure(("bcast",), (2,), (1024,), 2, 2, Where(), 30)
    done = tune([OMPI], m, None, shared_dir, RunContext(Store(Path(db)), users.for_ranks(),
                                                         "test", Console(file=io.StringIO()),
                                                         lambda _: None))
    assert any(line.startswith("openmpi-4.1.4:bcast=broken") for line in done.lost)
    assert all(r.variant != "openmpi-4.1.4:bcast=broken" for r in done.ranges)
    assert done.files["openmpi-4.1.4"].path.exists()


@pytest.mark.parametrize("args", [
    ("--impl", "openmpi-4.1.4", "--bench", "barrierx", "--dir", "/tmp/x"),
    ("--impl", "openmpi-4.1.4"),
    ("--verify", "/nonexistent-dir"),
])
def test_bad_input_is_one_line_and_status_2(args, db):
    res = mpiarena("tune", *args, "--db", db)
    assert res.returncode == 2
    assert len(res.stderr.strip().splitlines()) == 1 and "error" in res.stderr
