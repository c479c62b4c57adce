"""A user's program built once per MPI library (app_build): NetPIPE from its own source tree by
its own makefile, single sources in C, C++ and Fortran, Debian's prebuilt NetPIPE binaries, and
the check that each binary loads the library it is run with."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import IMPLS

from mpiarena.base import paths
from mpiarena.base.errors import ArenaError
from mpiarena.impls import Implementation
from mpiarena.model.programs import BuiltProgram
from mpiarena.platform import program_build as app_build
from mpiarena.platform.build import build_core
from mpiarena.platform.program_build import BuildRequest, build_programs, mpi_libraries

NETPIPE = Path(os.environ.get("MPIARENA_TEST_PROGRAMS", "/var/lib/mpiarena/test-programs"),
               "netpipe-3.7.2")
BY_ID = {i.id: i for i in IMPLS}
PAIR = ("mpich-4.0.2", "openmpi-4.1.4")
MAKE = 'printenv MPICC MPICXX MPIFC MPIF90 MPIF77 > wrappers.txt && make mpi MPICC="$MPICC"'

pytestmark = [
    pytest.mark.skipif(not all(i in BY_ID for i in PAIR), reason=f"needs {' and '.join(PAIR)}"),
    pytest.mark.skipif(not (NETPIPE / "makefile").is_file(),
                       reason=f"no {NETPIPE}: run scripts/fetch-test-programs.sh as root"),
]

HELLO_C = """#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int unused, rank;  /* a warning under -Wall: user code is not built with -Werror */
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("rank %d\\n", rank);
    MPI_Finalize();
    return 0;
}
"""
HELLO = {
    ".cc": """#include <mpi.h>
#include <iostream>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::cout << "rank " << rank << std::endl;
    MPI_Finalize();
}
""",
    ".f90": """program hello
  use mpi
  integer :: rank, ierr
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  print *, 'rank', rank
  call MPI_Finalize(ierr)
end program hello
""",
}


def pair() -> list[Implementation]:
    return [BY_ID[i] for i in PAIR]


def core_library(impl: Implementation) -> str:
    return str(mpi_libraries(build_core(impl).binary, impl)[0].path)


@dataclass
class NetPipe:
    first: dict[str, BuiltProgram]
    built: dict[str, int]  # each build's log as the first call left it (st_mtime_ns)
    again: dict[str, BuiltProgram]
    warnings: list[str]


def _log_of(built: BuiltProgram) -> Path:
    return Path(built.argv[0]).parent.parent / "build.log"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A data directory of its own: every build starts uncached, and goes with it."""
    path = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MPIARENA_HOME", str(path))
        yield path
    shutil.rmtree(path)


@pytest.fixture(scope="module")
def netpipe(home: Path) -> NetPipe:
    """NetPIPE built from source by its own makefile for both libraries, then asked again."""
    req = BuildRequest(["NPmpi", "-u", "1024"], src=NETPIPE, build=MAKE)
    warnings: list[str] = []
    for impl in pair():
        build_core(impl)  # the cores are built already when `mpiarena program` builds a program
    first = build_programs(pair(), req, warnings.append)
    built = {i: _log_of(b).stat().st_mtime_ns for i, b in first.items()}
    again = build_programs(pair(), req, warnings.append)
    return NetPipe(first, built, again, warnings)


def test_netpipe_is_built_from_source_against_each_library(netpipe: NetPipe):
    assert netpipe.warnings == []
    for impl in pair():
        built = netpipe.first[impl.id]
        assert (built.how, built.cached) == ("build", False)
        assert Path(built.argv[0]).name == "NPmpi" and Path(built.argv[0]).is_file()
        assert built.argv[1:] == ["-u", "1024"]
        assert built.links == core_library(impl)
    assert netpipe.first[PAIR[0]].links.endswith("libmpich.so.12")
    assert netpipe.first[PAIR[1]].links.endswith("libmpi.so.40")


def test_the_build_sees_the_library_s_wrappers(netpipe: NetPipe):
    for impl in pair():
        copy = Path(netpipe.first[impl.id].argv[0]).parent
        named = (copy / "wrappers.txt").read_text().split()
        assert named[0] == str(impl.wrapper)
        assert [Path(w).name.split(".")[-1] for w in named] == [impl.family] * 5
        assert "mpicc" in (copy.parent / "build.log").read_text()


def test_a_second_call_is_cached(netpipe: NetPipe):
    for impl in pair():
        assert netpipe.again[impl.id].cached
        assert netpipe.again[impl.id].argv == netpipe.first[impl.id].argv
        # nothing built again (a check of no clock: it held the parallel lane to a time bound)
        assert _log_of(netpipe.again[impl.id]).stat().st_mtime_ns == netpipe.built[impl.id]


def test_plain_mpicc_in_a_build_is_the_library_s(home: Path):
    """Debian's /usr/bin/mpicc is one library's; a build calling it gets the one it builds for."""
    got = build_programs(pair(), BuildRequest(["NPmpi"], src=NETPIPE, build="make mpi"),
                         pytest.fail)
    assert {got[i.id].links for i in pair()} == {core_library(i) for i in pair()}


def test_a_single_c_source_compiles_without_werror(home: Path, tmp_path: Path):
    source = tmp_path / "hello.c"
    source.write_text(HELLO_C)
    got = build_programs(pair(), BuildRequest([str(source), "x", "y"]), pytest.fail)
    for impl in pair():
        assert (got[impl.id].how, got[impl.id].cached) == ("source", False)
        assert Path(got[impl.id].argv[0]).name == "hello"
        assert got[impl.id].argv[1:] == ["x", "y"]
        assert got[impl.id].links == core_library(impl)
    again = build_programs(pair(), BuildRequest([str(source)]), pytest.fail)
    assert all(b.cached for b in again.values())


def test_a_source_that_does_not_compile_stops_with_the_compiler_s_words(home: Path,
                                                                       tmp_path: Path):
    source = tmp_path / "broken.c"
    source.write_text(HELLO_C.replace("MPI_Finalize();", "MPI_Finalize(;"))
    warnings: list[str] = []
    with pytest.raises(ArenaError, match=r"^the program was built for no library: mpich-4\.0\.2: "
                       r"compiling broken\.c with /usr/bin/mpicc\.mpich failed; openmpi-4\.1\.4: "):
        build_programs(pair(), BuildRequest([str(source)]), warnings.append)
    assert len(warnings) == 2 and all("error: expected expression" in w for w in warnings)
    assert list((home / "builds").glob("*broken*")) == []


@pytest.mark.parametrize("suffix", sorted(HELLO))
def test_a_cxx_or_fortran_source_uses_that_language_s_wrapper(home: Path, tmp_path: Path,
                                                                suffix: str):
    source = tmp_path / f"hello{suffix}"
    source.write_text(HELLO[suffix])
    got = build_programs(pair(), BuildRequest([str(source)]), pytest.fail)
    assert {got[i.id].links for i in pair()} == {core_library(i) for i in pair()}


def test_prebuilt_binaries_are_checked_against_their_library(home: Path):
    bins = {PAIR[0]: Path("/usr/bin/NPmpich2"), PAIR[1]: Path("/usr/bin/NPopenmpi")}
    got = build_programs(pair(), BuildRequest(["-u", "8"], bins=bins), pytest.fail)
    assert got[PAIR[1]] == BuiltProgram(PAIR[1], ["/usr/bin/NPopenmpi", "-u", "8"], "bin",
                                        core_library(BY_ID[PAIR[1]]))
    with pytest.raises(ArenaError) as e:
        build_programs([BY_ID[PAIR[0]]],
                       BuildRequest([], bins={PAIR[0]: Path("/usr/bin/NPopenmpi")}), pytest.fail)
    assert str(e.value) == (
        "/usr/bin/NPopenmpi is linked to /lib/x86_64-linux-gnu/libmpi.so.40, not mpich-4.0.2's "
        "/lib/x86_64-linux-gnu/libmpich.so.12: give the binary built with mpich-4.0.2")


def test_an_unknown_bin_id_lists_those_known(home: Path):
    with pytest.raises(ArenaError) as e:
        build_programs(pair(), BuildRequest([], bins={"mpich-9": Path("/usr/bin/NPmpich2")}),
                       pytest.fail)
    assert str(e.value) == ("--bin mpich-9=/usr/bin/NPmpich2: no library mpich-9 in this run; "
                            "known: mpich-4.0.2, openmpi-4.1.4")


def test_a_script_is_run_with_a_warning_not_checked(home: Path, tmp_path: Path):
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\nexec /usr/bin/NPmpich2 \"$@\"\n")
    script.chmod(0o755)
    warnings: list[str] = []
    got = build_programs([BY_ID[PAIR[0]]], BuildRequest([], bins={PAIR[0]: script}),
                         warnings.append)
    assert got[PAIR[0]].links == ""
    assert warnings == [f"{script} loads no MPI library (static, or a script?): mpiarena "
                        "cannot check that it runs mpich-4.0.2"]


def test_only_mpi_libraries_run_an_app(home: Path):
    others = [i for i in IMPLS if i.family in ("pvm", "tcp")]
    if not others:
        pytest.skip("no PVM or raw TCP here")
    with pytest.raises(ArenaError, match=f"^{others[0].id} is not an MPI library: leave it out "
                       "with --impl$"):
        build_programs([*pair(), others[0]], BuildRequest(["hello.c"]), pytest.fail)


def app_dirs(home: Path) -> list[str]:
    return sorted(p.name for p in (home / "builds").iterdir()
                  if p.name.startswith("app-") and p.is_dir())


def test_a_build_failing_everywhere_stops_and_leaves_nothing(home: Path):
    before = app_dirs(home)
    warnings: list[str] = []
    cmd = "echo compiling; echo 'fatal: no fortran here' >&2; exit 3"
    with pytest.raises(ArenaError, match="^the program was built for no library: "
                       r"mpich-4.0.2: the build \(.*\) failed with exit status 3 \(log: .*\); "
                       r"openmpi-4.1.4: the build \(.*\) failed with exit status 3 \(log: .*\)$"):
        build_programs(pair(), BuildRequest(["prog"], src=NETPIPE, build=cmd), warnings.append)
    assert len(warnings) == 2
    assert warnings[1].startswith(f"openmpi-4.1.4: the build ({cmd}) failed with exit status 3 "
                                  "(log: ")
    assert warnings[1].endswith("it said:\n  compiling\n  fatal: no fortran here")
    log = Path(warnings[1].split("(log: ", 1)[1].split(")", 1)[0])
    assert log.read_text() == "compiling\nfatal: no fortran here\n"
    assert app_dirs(home) == before


def test_a_build_failing_for_one_library_warns_and_the_other_goes_on(home: Path):
    cmd = 'case "$MPICC" in *openmpi*) seq 1 20; echo "no openmpi here"; exit 1;; esac; ' + MAKE
    warnings: list[str] = []
    got = build_programs(pair(), BuildRequest(["NPmpi"], src=NETPIPE, build=cmd),
                         warnings.append)
    assert list(got) == [PAIR[0]]
    assert len(warnings) == 1 and warnings[0].startswith(
        f"openmpi-4.1.4: the build ({cmd}) failed with exit status 1 (log: {home}/builds/app-")
    assert warnings[0].endswith(".failed.log); it said:\n  17\n  18\n  19\n  20\n"
                                "  no openmpi here")


def test_a_program_the_build_did_not_make_is_named(home: Path, netpipe: NetPipe):
    with pytest.raises(ArenaError) as e:
        build_programs(pair(), BuildRequest(["bin/NPnone"], src=NETPIPE, build=MAKE),
                       pytest.fail)
    copy = Path(netpipe.first[PAIR[0]].argv[0]).parent
    assert str(e.value) == (f"mpich-4.0.2: the build left no bin/NPnone (looked for "
                            f"{copy}/bin/NPnone); it made NPmpi, wrappers.txt")


def started_by_it(cmdline: Path) -> bool:
    try:
        return cmdline.read_bytes() in (b"sleep\x003017\x00", b"sleep\x003018\x00")
    except OSError:
        return False


def test_a_hung_build_is_killed_with_what_it_started(home: Path,
                                                     monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(app_build, "BUILD_TIMEOUT", 1.0)
    before = app_dirs(home)
    warnings: list[str] = []
    with pytest.raises(ArenaError, match="was killed after 1 s"):
        build_programs([BY_ID[PAIR[0]]], BuildRequest(["x"], src=NETPIPE,
                                                      build="sleep 3017 & sleep 3018"),
                       warnings.append)
    assert warnings[0].endswith("  mpiarena: killed after 1 s")
    assert app_dirs(home) == before
    assert not [p for p in Path("/proc").glob("[0-9]*/cmdline") if started_by_it(p)]
    assert paths.builds_dir() == home / "builds"
