"""The sums' datatype (run --datatype): chosen, measured as asked, stored and said wherever a
figure's datatype matters; other suites' imports record theirs, and sums of different datatypes
are never compared."""

from __future__ import annotations

import json
from html import unescape
from pathlib import Path

import jsonschema
import pytest
from conftest import IMPLS, mpiarena
from test_core import measure, running

from mpiarena.base.records import Cell, Datatype
from mpiarena.report.summary_export import SCHEMA
from mpiarena.store import Store
from mpiarena.store.results import load

BY_ID = {i.id: i for i in IMPLS}
MPICH = BY_ID.get("mpich-4.0.2")
needs_mpich = pytest.mark.skipif(MPICH is None, reason="needs Debian's MPICH 4.0.2")
TITLE = "allreduce: MPI_Allreduce, sum of size bytes of the run's datatype ({}, 2 ranks)"
OSU7 = """# OSU MPI Allreduce Latency Test v7.1
{datatype}# Size       Avg Latency(us)
1024                  3.10
1048576             900.00
"""


def _run(db: str, datatype: str, sizes: str) -> str:
    done = mpiarena("run", "--impl", "mpich-4.0.2", "--bench", "allreduce", "--sizes", sizes,
                    "--np", "2", "--datatype", datatype, "--launches", "2", "--observations",
                    "3", "--validate", "--db", db)
    assert done.returncode == 0, done.stderr
    return done.stderr


@needs_mpich
def test_a_run_sums_the_datatype_asked_and_says_so(db: str, tmp_path: Path):
    assert "rounded up" not in _run(db, "char", "1K,1M")  # whole elements
    said = _run(db, "double", "4,1K,1M")
    assert "note: allreduce at 4 B: not a whole number of MPI_DOUBLE (8 B): rounded up to " \
        "whole elements" in " ".join(said.split())
    for run, datatype in ((1, Datatype.CHAR), (2, Datatype.DOUBLE)):
        data = load(Store(Path(db)), run)
        assert data.settings.datatype == datatype
        for size in (1024, 1 << 20):  # measured, and the received sums checked
            assert data.cells[Cell("allreduce", size, 2)]["mpich-4.0.2"].status == "ok"
        tables = mpiarena("show", str(run), "--tables", "--db", db).stdout
        assert TITLE.format(datatype.mpi) in tables.splitlines(), tables
        method = " ".join(mpiarena("show", str(run), "--method", "--db", db).stdout.split())
        assert f"Reductions: {datatype.mpi} sums (allreduce), sizes in bytes, " \
            f"{datatype.size} B an element" in method
        doc = json.loads(mpiarena("export", str(run), "--summary", "--format", "json",
                                  "--db", db).stdout)
        jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
        assert doc["run"]["datatype"] == {"sums": datatype.mpi, "blocks": datatype.mpi,
                                          "asked": datatype.value}
        assert {r["datatype"] for r in doc["records"]} == {datatype.mpi}
        html = tmp_path / f"{run}.html"
        assert mpiarena("report", str(run), "-o", str(html), "--db", db).returncode == 0
        page = unescape(html.read_text())
        assert "<small>MPI_Allreduce, sum of size bytes of the run's datatype " \
            f"({datatype.mpi})</small>" in page
        assert f"Reductions: {datatype.mpi} sums (allreduce)" in page
    assert "4 B rounded up to whole elements" in " ".join(
        mpiarena("show", "2", "--method", "--db", db).stdout.split())
    # char against double: not like with like, said in one line, nothing compared
    compared = mpiarena("compare", "1", "2", "--db", db)
    warned = [ln for ln in compared.stderr.splitlines() if "summed" in ln]
    assert warned == ["warn: run 1 summed MPI_CHAR and run 2 MPI_DOUBLE: allreduce not compared "
                      "(the datatype changes the figure); measure with --datatype double to "
                      "compare like with like"], compared.stderr
    assert compared.returncode == 2 and "share no cell" in compared.stderr
    history = mpiarena("history", "--db", db)
    assert "warn: sums of different datatypes are not compared (the datatype changes the " \
        "figure): 1 (MPI_CHAR) to 2 (MPI_DOUBLE): allreduce" in history.stderr
    # OSU 7's allreduce (MPI_CHAR, its default) beside the measured runs
    osu = tmp_path / "osu_allreduce.out"
    osu.write_text(OSU7.format(datatype="# Datatype: MPI_CHAR.\n"))
    done = mpiarena("import", "osu", str(osu), "--impl", "mpich-4.0.2", "--np", "2", "--db", db)
    assert done.returncode == 0, done.stderr
    assert load(Store(Path(db)), 3).settings.datatype == Datatype.CHAR
    assert "summed" not in mpiarena("compare", "3", "1", "--db", db).stderr
    assert "warn: run 3 summed MPI_CHAR and run 2 MPI_DOUBLE: allreduce not compared (the " \
        "datatype changes the figure); measure with --datatype char" in \
        mpiarena("compare", "3", "2", "--db", db).stderr


def test_a_bad_datatype_is_one_line(db: str):
    done = mpiarena("run", "--datatype", "long", "--db", db)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert "--datatype" in done.stderr and "'long' is not one of" in done.stderr
    assert not Path(db).exists()


SUMS = ["scan", "reduce_scatter_block", "allreduce=reduce_scatter_block+allgather",
        "scan=exscan+reduce_local", "iallreduce", "allreduce_init", "accumulate-fence",
        "get_accumulate-lock"]


@needs_mpich
@pytest.mark.parametrize("datatype", ["char", "double"])
def test_every_sum_adds_up_the_datatype_asked(datatype: str):
    """Each sum of the core, and the datatype benchmarks' blocks, with the type asked: the data
    checked on every rank that receives (chars stay below overflow)."""
    assert MPICH is not None
    with running(MPICH, 3, {"ARENA_DATATYPE": datatype}) as job:
        cells = {b: measure(job, b, 4096, obs=1) for b in [*SUMS, "bcast-indexed"]}
    for bench, cell in cells.items():
        assert cell.status == "ok", (bench, cell.reason)


FAMILIES = [i for i in IMPLS if i.family in ("pvm", "lam", "tcp")]


@pytest.mark.parametrize("impl", FAMILIES, ids=[i.id for i in FAMILIES])
def test_a_family_that_cannot_sum_chars_says_why(impl):
    with running(impl, 2, {"ARENA_DATATYPE": "char"}) as job:
        chars = measure(job, "reduce", 64)
    with running(impl, 2, {"ARENA_DATATYPE": "float"}) as job:
        floats = measure(job, "reduce", 64)
    assert chars.status == "na"
    if impl.family == "tcp":  # no collective at all, whatever the type
        assert chars.reason == floats.reason == "not expressible in this family"
        return
    assert floats.status == "ok", floats.reason
    assert chars.reason == {
        "pvm": "PVM has no sum of chars: pvm_reduce's PvmSum takes every type but PVM_BYTE "
               "(its manual page)",
        "lam": "LAM/MPI 7.1.4 has no sum of MPI_CHAR (MPI 1.2 sums integers and floating "
               "point, not characters)"}[impl.family]


@pytest.mark.parametrize("header, datatype", [
    ("# Datatype: MPI_INT.\n", Datatype.INT),  # osu_allreduce -T mpi_int
    ("", Datatype.CHAR),  # OSU 7 without its line: its default
])
def test_osu_7_records_the_datatype_it_summed(tmp_path: Path, db: str, header: str,
                                              datatype: Datatype):
    osu = tmp_path / "osu_allreduce.out"
    osu.write_text(OSU7.format(datatype=header))
    done = mpiarena("import", "osu", str(osu), "--impl", "mpich-4.0.2", "--np", "2", "--db", db)
    assert done.returncode == 0, done.stderr
    data = load(Store(Path(db)), 1)
    assert data.settings.datatype == datatype
    assert data.cells[Cell("allreduce", 1 << 20, 2)]["mpich-4.0.2"].values == \
        pytest.approx([900e-6])


def test_osu_sums_of_two_datatypes_are_two_imports(tmp_path: Path, db: str):
    files = []
    for name in ("char", "int"):
        files.append(tmp_path / f"{name}.out")
        files[-1].write_text(OSU7.format(datatype=f"# Datatype: MPI_{name.upper()}.\n"))
    done = mpiarena("import", "osu", *map(str, files), "--impl", "mpich-4.0.2", "--np", "2",
                    "--db", db)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "sums of different datatypes: MPI_CHAR in" in done.stderr
    assert "import them as separate runs" in done.stderr
    both = tmp_path / "both.out"
    both.write_text("".join(f.read_text() for f in files))
    done = mpiarena("import", "osu", str(both), "--impl", "mpich-4.0.2", "--np", "2", "--db", db)
    assert done.returncode == 2
    assert "OSU sums of different datatypes (MPI_CHAR, MPI_INT): import them separately" in \
        done.stderr
