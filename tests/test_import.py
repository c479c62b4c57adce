"""`mpiarena import`: real output of IMB, NetPIPE, OSU and ReproMPI, read into the store and
judged by show and compare as mpiarena's own runs; wrong files refused with one line naming file
and line, nothing stored.

IMB-MPI1 is built once per library from ../shared/imb in a scratch copy (bench/imb_cross_check's
build_imb and launch_imb) and run here with MPICH and Open MPI; IMB-NBC's and IMB-RMA's tables are
read as recorded (tests/suite-output/imb-2021: two more C++ builds took 27 s of the 62 s here,
for tables that only the import reads; bench/imb_nbc.py and bench/imb_rma.py build and run them
live); NetPIPE is Debian's NPmpich2, run
here. OSU 5.3's osu_latency, osu_bw, osu_allreduce, osu_put_latency and osu_ibcast are compiled
with MPICH's mpicc from ../shared/osu-micro-benchmarks, ReproMPI's mpibenchmark built with MPICH's
wrappers from ../shared/reprompi (CMake, GSL), and run here when those sources are there; where
they are not, the tests read the same programs' output recorded on this kind of machine
(tests/suite-output/README.md says how).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import IMPLS, leftovers, mpiarena

from mpiarena.base import units, users
from mpiarena.base.records import Cell, Datatype
from mpiarena.base.sizes import format_size
from mpiarena.impls import Implementation
from mpiarena.store import Store
from mpiarena.store.results import load

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))
from imb_cross_check import build_imb, launch_imb, lengths_file  # noqa: E402

# the project's shared sources beside the checkout, or where MPIARENA_SHARED says
SHARED = Path(os.environ.get("MPIARENA_SHARED",
                             Path(__file__).resolve().parents[1].parent / "shared"))
OSU = SHARED / "osu-micro-benchmarks" / "mpi"
REPRO = SHARED / "reprompi"
BY_ID = {i.id: i for i in IMPLS}
MPICH, OPENMPI = BY_ID.get("mpich-4.0.2"), BY_ID.get("openmpi-4.1.4")
# IMB-MPI1 built with MPICH and Open MPI took 57 s of a fresh clone's 68 s here: make test keeps
# the builds between its runs (the Makefile's TEST_HOME), as it keeps Intel MPI
BUILDS = os.environ.get("MPIARENA_TEST_BUILDS")
LAUNCHES = 4  # the fewest a side that compare decides from (stats.MIN_LAUNCHES)
SIZES = [8, 4096]
IMB_ARGS = ["PingPong", "Allreduce", "-iter", "200", "-iter_policy", "off", "-npmin", "2"]
pytestmark = pytest.mark.skipif(MPICH is None or OPENMPI is None,
                                reason="needs Debian's MPICH 4.0.2 and Open MPI 4.1.4")


RECORDED = Path(__file__).parent / "suite-output"  # OSU's and ReproMPI's, recorded here


@dataclass(frozen=True)
class Imb:
    """Real IMB output: per library, LAUNCHES IMB-MPI1 runs; IMB-NBC's and IMB-RMA's (MPICH)."""

    runs: dict[str, list[Path]]
    parts: dict[str, Path]


@dataclass(frozen=True)
class NetPipe:
    """Two NetPIPE runs with MPICH: their np.out files, and what the first printed."""

    files: list[Path]
    stdout: Path


def _env() -> dict[str, str]:
    return dict(os.environ)


def _imb_builds(where: Path) -> Path:
    """Where IMB-MPI1 is built: under MPIARENA_TEST_BUILDS (make test's, kept between its runs),
    one folder per content of IMB's sources (their times change each time the shared folder is
    laid out again, 49 s of builds then); else the module's scratch folder."""
    if not BUILDS:
        return where
    state = hashlib.sha256()
    for path in sorted(p for p in (SHARED / "imb").rglob("*") if p.is_file()):
        state.update(f"{path.relative_to(SHARED)}\0".encode())
        state.update(path.read_bytes())
    folder = Path(BUILDS) / f"imb-{state.hexdigest()[:16]}"
    folder.mkdir(parents=True, exist_ok=True)
    for made in (Path(BUILDS), folder):
        made.chmod(0o755)  # the rank user runs what is built there
    return folder


def _imb(impl: Implementation, where: Path) -> list[Path]:
    builds = _imb_builds(where)
    with open(builds / ".lock", "w") as lock:  # one build at a time in a kept folder
        fcntl.flock(lock, fcntl.LOCK_EX)
        binary, why = build_imb(impl, builds)
    assert binary is not None, why
    lengths = lengths_file(where, SIZES)
    files = []
    for i in range(LAUNCHES):
        out = where / f"imb-{impl.id}-{i}.out"
        out.write_text(launch_imb(impl, binary, [*IMB_ARGS, "-msglen", str(lengths)], _env()))
        files.append(out)
    return files


def _rank_dir(path: Path) -> Path:
    """A directory the ranks can write in (they run as the rank user when this is root)."""
    path.mkdir()
    user = users.for_ranks()
    if user is not None:
        os.chown(path, user.uid, user.gid)
    return path


def _netpipe(impl: Implementation, where: Path) -> tuple[list[Path], Path]:
    files, stdout = [], where / "np.stdout"
    for i in range(2):
        run = _rank_dir(where / f"netpipe-{i}")
        # its per-size lines go to stderr: a shell per rank joins them to what comes back
        said = launch_imb(impl, Path("/bin/sh"), ["-c", "exec /usr/bin/NPmpich2 -u 65536 -n 50 "
                                                        "-o np.out 2>&1"], _env(), cwd=run)
        files.append(run / "np.out")
        if i == 0:
            stdout.write_text(said)
    return files, stdout


def _osu(impl: Implementation, where: Path) -> dict[str, Path]:
    out = {}
    for program, helper, args in (("pt2pt/osu_latency", "pt2pt/osu_pt2pt", ["-i", "100"]),
                                  ("pt2pt/osu_bw", "pt2pt/osu_pt2pt", ["-i", "10"]),
                                  ("collective/osu_allreduce", "collective/osu_coll",
                                   ["-f", "-m", "4096", "-i", "100"]),
                                  ("one-sided/osu_put_latency", "one-sided/osu_1sc",
                                   ["-s", "fence", "-i", "100"]),
                                  ("collective/osu_ibcast", "collective/osu_coll",
                                   ["-m", "1024", "-i", "50"])):
        name = program.split("/")[1]
        binary = where / name
        subprocess.run([str(impl.wrapper), "-O2", '-DPACKAGE_VERSION="5.3"',
                        f"-I{OSU / program.split('/')[0]}", str(OSU / f"{program}.c"),
                        str(OSU / f"{helper}.c"), "-o", str(binary), "-lm"],
                       env=impl.environ(), check=True, capture_output=True, timeout=120)
        binary.chmod(0o755)
        out[name] = where / f"{name}.out"
        out[name].write_text(launch_imb(impl, binary, args, _env()))
    return out


@pytest.fixture(scope="module")
def where() -> Iterator[Path]:
    """The module's scratch directory, the rank user's to write in."""
    path = Path(tempfile.mkdtemp(prefix="mpiarena-import-", dir="/var/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)
    assert leftovers() == []


@pytest.fixture(scope="module")
def imb(where: Path) -> Imb:
    if not (SHARED / "imb").is_dir():
        pytest.skip(f"needs the Intel MPI Benchmarks' sources in {SHARED / 'imb'} "
                    "(set MPIARENA_SHARED)")
    assert MPICH is not None and OPENMPI is not None
    return Imb({i.id: _imb(i, where) for i in (MPICH, OPENMPI)},
               {target: RECORDED / "imb-2021" / f"{target}.out" for target in ("IMB-NBC",
                                                                              "IMB-RMA")})


@pytest.fixture(scope="module")
def netpipe(where: Path) -> NetPipe:
    assert MPICH is not None
    return NetPipe(*_netpipe(MPICH, where))


@pytest.fixture(scope="module")
def osu(where: Path) -> dict[str, Path]:
    """OSU's output: built and run here from the sources, else as recorded."""
    if not OSU.is_dir():
        return {f.stem: f for f in (RECORDED / "osu-5.3").glob("*.out")}
    assert MPICH is not None
    return _osu(MPICH, where)


def _imb_figures(path: Path) -> dict[tuple[str, int], float]:
    """IMB's PingPong t and Allreduce t_max per size, in seconds, read here independently."""
    got, bench = {}, None
    for line in path.read_text().splitlines():
        words = line.split()
        if line.startswith("# Benchmarking "):
            bench = {"PingPong": "pingpong", "Allreduce": "allreduce"}[words[2]]
        elif bench and words and words[0].isdigit():
            got[bench, int(words[0])] = float(words[2 if bench == "pingpong" else 3]) * 1e-6
    return got


def _runs(db: str) -> int:
    if not Path(db).exists():
        return 0
    with sqlite3.connect(db) as c:
        return int(c.execute("SELECT COUNT(*) FROM runs").fetchone()[0])


def test_imb_runs_become_launches_that_show_and_compare_judge(imb: Imb, db: str):
    mpich, ompi = imb.runs["mpich-4.0.2"], imb.runs["openmpi-4.1.4"]
    done = mpiarena("import", "imb", *map(str, mpich), "--impl", "mpich-4.0.2", "--db", db)
    assert done.returncode == 0, done.stderr
    assert f"imported {LAUNCHES} files of imb output ({LAUNCHES} launches" in done.stderr
    done = mpiarena("import", "imb", *map(str, ompi), "--impl", "openmpi-4.1.4", "--into", "1",
                    "--db", db)
    assert done.returncode == 0, done.stderr
    data = load(Store(Path(db)), 1)
    assert data.variants == ["mpich-4.0.2", "openmpi-4.1.4"]
    assert data.settings.launches == LAUNCHES
    # IMB's reductions sum MPI_FLOAT, as its header says
    assert "# MPI_Datatype for reductions    :   MPI_FLOAT" in mpich[0].read_text()
    assert data.settings.datatype == Datatype.FLOAT
    for variant, files in (("mpich-4.0.2", mpich), ("openmpi-4.1.4", ompi)):
        for bench, size in [("pingpong", s) for s in SIZES] + [("allreduce", s) for s in SIZES]:
            group = data.cells[Cell(bench, size, 2)][variant]
            assert group.timing == ("imb-t" if bench == "pingpong" else "imb-t_max")
            expected = [_imb_figures(f)[bench, size] for f in files]
            assert [float(x[0]) for x in group.nested] == pytest.approx(expected, rel=1e-12)
    shown = mpiarena("show", "1", "--tables", "--method", "--db", db)
    assert shown.returncode == 0, shown.stderr
    assert "Timed by IMB's t (PingPong" in shown.stdout
    assert "IMB's t_max" in shown.stdout
    assert "Imported from imb output, not measured by mpiarena" in shown.stdout
    assert f"up to {LAUNCHES} a variant" in shown.stdout
    for line in ("pingpong (2 ranks)", "allreduce (2 ranks)"):
        assert line in shown.stdout
    # the same files again, as a second run: each file one launch, the same figures
    again = mpiarena("import", "imb", *map(str, mpich), "--impl", "mpich-4.0.2", "--db", db)
    assert again.returncode == 0, again.stderr
    same = mpiarena("compare", "1", "2", "--all", "--db", db)
    assert same.returncode == 0, same.stderr
    assert same.stdout.count("x1.00 time") == 4, same.stdout
    assert same.stdout.count(f"p=1, launches {LAUNCHES}/{LAUNCHES}") == 4, same.stdout
    assert "0 regression, 0 improvement" in same.stdout
    # one library's launches against the other's: the same verdict pipeline, paired
    paired = mpiarena("compare", "2", "1", "--pair", "mpich-4.0.2=openmpi-4.1.4", "--all",
                      "--db", db)
    assert paired.returncode == 0, paired.stderr
    assert paired.stdout.count("mpich-4.0.2 -> openmpi-4.1.4") == 4, paired.stdout
    assert "of 4 cells" in paired.stdout


def test_imb_figure_choice_is_the_timing_method(imb: Imb, db: str):
    done = mpiarena("import", "imb", str(imb.runs["mpich-4.0.2"][0]), "--impl",
                    "mpich-4.0.2", "--figure", "t_avg", "--db", db)
    assert done.returncode == 0, done.stderr
    group = load(Store(Path(db)), 1).cells[Cell("allreduce", 4096, 2)]["mpich-4.0.2"]
    assert group.timing == "imb-t_avg"
    text = imb.runs["mpich-4.0.2"][0].read_text().splitlines()
    row = next(ln.split() for ln in text[text.index(next(ln for ln in text if "Allreduce"
                                                          in ln and "Benchmarking" in ln)):]
               if ln.split()[:1] == ["4096"])
    assert group.values == pytest.approx([float(row[4]) * 1e-6])


def test_netpipe_np_out_and_stdout(netpipe: NetPipe, db: str):
    done = mpiarena("import", "netpipe", *map(str, netpipe.files), "--impl", "mpich-4.0.2",
                    "--db", db)
    assert done.returncode == 0, done.stderr
    data = load(Store(Path(db)), 1)
    # NetPIPE stops early where a size takes too long (a loaded machine): sizes may differ
    runs = [{int(w[0]): float(w[2]) for w in (ln.split() for ln in f.read_text().splitlines())
             if w} for f in netpipe.files]
    assert len(runs[0]) > 20
    for size in set(runs[0]) | set(runs[1]):
        group = data.cells[Cell("pingpong", size, 2)]["mpich-4.0.2"]
        assert group.timing == "netpipe-best"
        assert [float(x[0]) for x in group.nested] == \
            pytest.approx([r[size] for r in runs if size in r], rel=1e-12)
    done = mpiarena("import", "netpipe", str(netpipe.stdout), "--impl", "mpich-4.0.2",
                    "--db", db)
    assert done.returncode == 0, done.stderr
    stdout = load(Store(Path(db)), 2)
    assert {k.size for k in stdout.cells} == set(runs[0])


def test_osu_point_to_point_and_collective(osu: dict[str, Path], db: str):
    done = mpiarena("import", "osu", str(osu["osu_latency"]), str(osu["osu_bw"]), "--impl",
                    "mpich-4.0.2", "--db", db)
    assert done.returncode == 0, done.stderr
    data = load(Store(Path(db)), 1)
    latency = {int(w[0]): float(w[1]) for w in
               (ln.split() for ln in osu["osu_latency"].read_text().splitlines())
               if w and w[0].isdigit()}
    bandwidth = {int(w[0]): float(w[1]) for w in
                 (ln.split() for ln in osu["osu_bw"].read_text().splitlines())
                 if w and w[0].isdigit()}
    assert len(latency) > 10 and len(bandwidth) > 10
    for size, us in latency.items():
        assert data.cells[Cell("pingpong", size, 2)]["mpich-4.0.2"].values == \
            pytest.approx([us * 1e-6])
    for size, mbs in bandwidth.items():  # time per message: size over OSU's MB/s
        group = data.cells[Cell("ping", size, 2)]["mpich-4.0.2"]
        assert group.timing == "osu-mean"
        assert group.values == pytest.approx([size / (mbs * 1e6)])
    # one library's import answers with its figures, as a run of one library does
    shown = mpiarena("show", "1", "--db", db)
    assert shown.returncode == 0, shown.stderr
    assert "Figures of mpich-4.0.2 (median of launch medians" in shown.stdout, shown.stdout
    smallest = units.seconds(latency[min(latency)] * 1e-6)
    assert f"pingpong (2 ranks): {format_size(min(latency))} {smallest}" in shown.stdout
    # a collective: OSU does not say how many ranks ran it
    refused = mpiarena("import", "osu", str(osu["osu_allreduce"]), "--impl", "mpich-4.0.2",
                       "--db", db)
    assert refused.returncode == 2
    first = next(i for i, ln in enumerate(osu["osu_allreduce"].read_text().splitlines(), 1)
                 if ln[:1].isdigit())
    assert f"{osu['osu_allreduce']}:{first}:" in refused.stderr and "--np N" in refused.stderr
    done = mpiarena("import", "osu", str(osu["osu_allreduce"]), "--impl", "mpich-4.0.2",
                    "--np", "2", "--figure", "max", "--db", db)
    assert done.returncode == 0, done.stderr
    row = next(ln.split() for ln in osu["osu_allreduce"].read_text().splitlines()
               if ln.startswith("4096 "))
    group = load(Store(Path(db)), 2).cells[Cell("allreduce", 4096, 2)]["mpich-4.0.2"]
    assert group.timing == "osu-mean-max"
    # OSU 5 sums floats (OSU 7: MPI_CHAR unless -T, test_datatype.py)
    assert "v5." in next(ln for ln in osu["osu_allreduce"].read_text().splitlines()
                         if ln.startswith("# OSU"))
    assert load(Store(Path(db)), 2).settings.datatype == Datatype.FLOAT
    assert group.values == pytest.approx([float(row[3]) * 1e-6])
    done = mpiarena("import", "osu", str(osu["osu_put_latency"]), "--impl", "mpich-4.0.2",
                    "--db", db)
    assert done.returncode == 0, done.stderr
    assert "# Synchronization: MPI_Win_fence" in osu["osu_put_latency"].read_text()
    assert {k.bench for k in load(Store(Path(db)), 3).cells} == {"put-fence"}
    # a non-blocking collective: its Pure Comm. column, the call then its wait
    done = mpiarena("import", "osu", str(osu["osu_ibcast"]), "--impl", "mpich-4.0.2", "--np", "2",
                    "--db", db)
    assert done.returncode == 0, done.stderr
    text = osu["osu_ibcast"].read_text().splitlines()
    header = next(ln for ln in text if ln.startswith("# Size"))
    assert "Pure Comm.(us)" in header
    pure = [ln.split() for ln in text if ln[:1].isdigit()]
    column = re.split(r"\s{2,}", header.lstrip("# ")).index("Pure Comm.(us)")
    cells = load(Store(Path(db)), 4).cells
    for row in pure:
        group = cells[Cell("ibcast", int(row[0]), 2)]["mpich-4.0.2"]
        assert group.values == pytest.approx([float(row[column]) * 1e-6])


@pytest.fixture(scope="module")
def repro() -> Iterator[dict[str, Path]]:
    """ReproMPI's mpibenchmark built with MPICH's wrappers, run once with MPI_Barrier between
    repetitions and once in windows on HCA's global clock; as recorded without its sources."""
    if not (REPRO.exists() and Path("/usr/include/gsl").exists() and shutil.which("cmake")):
        yield {name: RECORDED / "reprompi" / f"repro-{name}.out" for name in ("barrier", "window")}
        return
    assert MPICH is not None
    where = Path(tempfile.mkdtemp(prefix="mpiarena-repro-", dir="/var/tmp"))
    where.chmod(0o755)
    try:
        env = MPICH.environ({**os.environ, "CC": str(MPICH.wrapper),
                             "CXX": str(MPICH.wrapper.with_name("mpicxx.mpich"))})
        for step in (["cmake", str(REPRO), "-DCMAKE_BUILD_TYPE=Release",
                      f"-DFETCHCONTENT_SOURCE_DIR_MPITS={REPRO.parent / 'mpi-time-sync'}",
                      "-DFETCHCONTENT_FULLY_DISCONNECTED=ON"], ["make", "-j2", "mpibenchmark"]):
            subprocess.run(step, cwd=where, env=env, check=True, capture_output=True,
                           timeout=300)
        binary = where / "bin" / "mpibenchmark"
        calls = ["--calls-list=MPI_Allreduce,MPI_Bcast", "--msizes-list=8,1024", "--nrep=8"]
        out = {}
        for name, how in (("barrier", []), ("window", ["--clock-sync=HCA", "--proc-sync=window",
                                                        "--window-size=100",
                                                        "--runtime-type=global"])):
            out[name] = where / f"repro-{name}.out"
            out[name].write_text(launch_imb(MPICH, binary, [*calls, *how], _env()))
        yield out
    finally:
        shutil.rmtree(where, ignore_errors=True)


def _repro_rows(path: Path) -> list[list[str]]:
    return [ln.split() for ln in path.read_text().splitlines()
            if ln.split()[:1] in (["MPI_Allreduce"], ["MPI_Bcast"])]


def test_repro_repetitions_are_one_launchs_observations(repro: dict[str, Path], db: str):
    done = mpiarena("import", "repro", str(repro["barrier"]), "--impl", "mpich-4.0.2",
                    "--db", db)
    assert done.returncode == 0, done.stderr
    data = load(Store(Path(db)), 1)
    rows = _repro_rows(repro["barrier"])
    for call, bench in (("MPI_Allreduce", "allreduce"), ("MPI_Bcast", "bcast")):
        for size in (8, 1024):
            group = data.cells[Cell(bench, size, 2)]["mpich-4.0.2"]
            assert group.timing == "repro-MPI_Barrier-local"
            assert len(group.nested) == 1  # one launch, a repetition per observation
            assert group.values == pytest.approx(
                [float(r[3]) for r in rows if r[0] == call and r[2] == str(size)], abs=1e-10)
    # the window method: a repetition that missed its window (errorcode not 0) is left out
    done = mpiarena("import", "repro", str(repro["window"]), "--impl", "mpich-4.0.2",
                    "--db", db)
    assert done.returncode == 0, done.stderr
    rows = _repro_rows(repro["window"])
    kept = {(r[0], int(r[2])): [] for r in rows}
    for r in rows:
        if r[3] == "0":
            kept[r[0], int(r[2])].append(float(r[4]))
    data = load(Store(Path(db)), 2)
    for (call, size), values in kept.items():
        bench = {"MPI_Allreduce": "allreduce", "MPI_Bcast": "bcast"}[call]
        group = data.cells.get(Cell(bench, size, 2), {}).get("mpich-4.0.2")
        assert (group.values if group else []) == pytest.approx(values, abs=1e-10)
        assert group is None or group.timing == "repro-window-global"
    # the two methods in one run would pool different figures: refused, nothing stored
    both = mpiarena("import", "repro", str(repro["barrier"]), str(repro["window"]), "--impl",
                    "mpich-4.0.2", "--db", db)
    assert both.returncode == 2 and "import them as separate runs" in both.stderr
    assert _runs(db) == 2


def test_imported_and_measured_cells_are_never_compared(imb: Imb, db: str):
    for datatype in ("float", "int"):  # IMB's sums, then mpiarena's own
        run = mpiarena("run", "--bench", "allreduce", "--sizes", "4K", "--np", "2", "--impl",
                       "mpich-4.0.2", "--launches", "1", "--observations", "3", "--sync",
                       "barrier", "--datatype", datatype, "--db", db)
        assert run.returncode == 0, run.stderr
    done = mpiarena("import", "imb", str(imb.runs["mpich-4.0.2"][0]), "--impl",
                    "mpich-4.0.2", "--db", db)
    assert done.returncode == 0, done.stderr
    both = mpiarena("compare", "1", "3", "--db", db)
    assert both.returncode == 2
    assert "timed by barrier in run 1 and by imb-t_max in run 3" in both.stderr
    assert "summed" not in both.stderr
    both = mpiarena("compare", "2", "3", "--db", db)
    assert both.returncode == 2
    assert "warn: run 2 summed MPI_INT and run 3 MPI_FLOAT: allreduce not compared (the " \
        "datatype changes the figure); measure with --datatype float" in both.stderr


def test_a_wrong_file_is_one_line_and_nothing_is_stored(imb: Imb, osu: dict[str, Path],
                                                        where: Path, db: str):
    first = imb.runs["mpich-4.0.2"][0]
    claimed = mpiarena("import", "osu", str(first), "--impl", "mpich-4.0.2", "--db", db)
    assert claimed.returncode == 2
    assert claimed.stderr.count("\n") == 1 and f"{first}:1:" in claimed.stderr
    cut = where / "cut.out"
    text = first.read_text().splitlines()
    row = next(i for i, ln in enumerate(text) if ln.split()[:1] == ["4096"])
    cut.write_text("\n".join([*text[:row], text[row][:20]]))
    garbled = mpiarena("import", "imb", str(first), str(cut), "--impl", "mpich-4.0.2", "--db", db)
    assert garbled.returncode == 2
    assert f"{cut}:{row + 1}:" in garbled.stderr and "cut or garbled" in garbled.stderr
    assert garbled.stderr.count("\n") == 1
    latency = osu["osu_latency"].read_text().splitlines()
    row = next(i for i, ln in enumerate(latency) if ln.startswith("8 "))
    latency[row] = "8                         0.3O"
    typo = where / "typo.out"
    typo.write_text("\n".join(latency))
    refused = mpiarena("import", "osu", str(typo), "--impl", "mpich-4.0.2", "--db", db)
    assert refused.returncode == 2
    assert f"{typo}:{row + 1}: '0.3O' is not a number" in refused.stderr
    bad_id = mpiarena("import", "imb", str(first), "--impl", "my mpi", "--db", db)
    assert bad_id.returncode == 2 and "--impl 'my mpi'" in bad_id.stderr
    assert not Path(db).exists()  # the good first file was not stored either
    free = mpiarena("import", "imb", str(first), "--impl", "mvapich2-2.3.7", "--db", db)
    assert free.returncode == 0, free.stderr
    impl = Store(Path(db)).implementations(1)[0]
    assert (impl.family, impl.version, impl.origin) == ("mvapich2", "2.3.7", "imported")


def test_imb_nbc_and_rma_tables(imb: Imb, db: str):
    for i, target in enumerate(("IMB-NBC", "IMB-RMA"), start=1):
        done = mpiarena("import", "imb", str(imb.parts[target]), "--impl", "mpich-4.0.2",
                        "--db", db)
        assert done.returncode == 0, done.stderr
        data = load(Store(Path(db)), i)
        text = imb.parts[target].read_text()
        if target == "IMB-NBC":  # Iallreduce's overlap table: t_pure; Ibcast_pure: t_max
            assert data.cells[Cell("iallreduce", 16, 2)]["mpich-4.0.2"].timing == "imb-t_pure"
            assert data.cells[Cell("ibcast", 16, 2)]["mpich-4.0.2"].timing == "imb-t_max"
        else:  # non-aggregate mode only: one operation then MPI_Win_flush
            assert "Unidir_put (aggregate mode)" in done.stderr
            table = text[text.index("NON-AGGREGATE"):]
            row = next(ln.split() for ln in table.splitlines() if ln.split()[:1] == ["16"])
            group = data.cells[Cell("put-lockall", 16, 2)]["mpich-4.0.2"]
            assert (group.timing, group.values) == ("imb-t", pytest.approx([float(row[2]) * 1e-6]))


def test_runs_in_one_file_are_launches_unless_per_file(netpipe: NetPipe, where: Path, db: str):
    both = where / "np-both.out"
    both.write_text(netpipe.files[0].read_text() + netpipe.files[1].read_text())
    for args in ([], ["--launch-per-file"]):
        done = mpiarena("import", "netpipe", str(both), *args, "--impl", "mpich-4.0.2",
                        "--db", db)
        assert done.returncode == 0, done.stderr
    runs = load(Store(Path(db)), 1), load(Store(Path(db)), 2)
    split, joined = (r.cells[Cell("pingpong", 1024, 2)]["mpich-4.0.2"] for r in runs)
    assert [len(x) for x in split.nested] == [1, 1]
    assert [len(x) for x in joined.nested] == [2]
    assert sorted(split.values) == sorted(joined.values)


def test_a_figure_the_suite_does_not_give_is_one_line(db: str):
    osu_bw = RECORDED / "osu-5.3" / "osu_bw.out"
    for suite, figures in (("imb", "t_max, t_avg, t_min"), ("osu", "avg, min, max")):
        done = mpiarena("import", suite, str(osu_bw), "--impl", "mpich-4.0.2", "--figure", "p99",
                        "--db", db)
        assert done.returncode == 2
        assert done.stderr.strip().splitlines() == [
            f"mpiarena: error: {osu_bw}: {suite.upper()} has no figure 'p99'; --figure takes "
            f"{figures}"]
    assert not Path(db).exists()


def test_netpipe_stdout_with_counters_split_from_their_lines_reads_the_same():
    """NetPIPE's counter "N:" and the rest of its line are two writes: another process's output
    (its other rank's, the launcher's) may split or stack them (once here: '15: 0: vm'), or land
    in the middle of a line."""
    from mpiarena.imports import netpipe
    from mpiarena.imports.records import Choices

    clean = ("0: vm\n1: vm\nNow starting the main loop\n"
             "  0:       1 bytes  28433 times -->      0.35 Mbps in      21.73 usec\n"
             "  1:       2 bytes   4602 times -->      0.70 Mbps in      21.66 usec\n")
    split = ("0: vm\n1: vm\n15: 0: vm\n15: Now starting the main loop\n  0:\n"
             "      1 bytes  28433 times -->      0.35 Mbps in      21.73 usec\n"
             "15: 16:  1:       2 bytes   4602 times -->      0.70 Mbps in      21.66 usec\n")
    # mid-line, as a fresh clone's test run read it: rank 1's two lines between the parts
    mid = ("0: vm\nNow starting the main loop\n"
           "  0:       1 bytes  28433 times -->      0.35 Mbps in      21.73 usec\n"
           "  1:       2 bytes   4602 times --> Sending output to np.out\n1: vm\n"
           "      0.70 Mbps in      21.66 usec\n")
    # a size cut short (no tail before the next head) is no figure
    cut = clean.replace("  0:       1 bytes",
                        "  7:       9 bytes   50 times --> \n  0:       1 bytes")
    read = [netpipe.parse(Path("np.stdout"), text, Choices()).runs
            for text in (clean, split, mid, cut)]
    figures = [[[(f.size, f.value) for f in r.figures] for r in runs] for runs in read]
    assert figures[0] == figures[1] == figures[2] == figures[3] == \
        [[(1, pytest.approx(21.73e-6)), (2, pytest.approx(21.66e-6))]]
