"""Any machine: a program mpiarena runs but does not ship is optional unless the command needs
it. A real comparison completes with each optional one removed from PATH, saying so in at most
one line; a command that needs one exits 2 with one line naming it and its Debian package."""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import IMPLS, cluster_name, mpiarena

from mpiarena.platform.build import Build, build_cores

FOLDERS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
BY_FAMILY = {i.family: i.id for i in reversed(IMPLS)}  # each family's first found
PAIR = [BY_FAMILY[f] for f in ("mpich", "openmpi") if f in BY_FAMILY]
LAM = BY_FAMILY.get("lam")
SHORT = ("--bench", "pingpong", "--sizes", "8", "--launches", "1")


@pytest.fixture
def bare() -> Iterator[Path]:
    """An empty folder the rank user can read (launchers look up their helpers on PATH as it;
    pytest's tmp_path is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="mpiarena-test-path-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


def path_without(bare: Path, tools: tuple[str, ...]) -> dict[str, str]:
    """An environment whose PATH holds links in bare to every program of the usual folders but
    tools (this Python's folder first, as an installed mpiarena has it)."""
    for folder in map(Path, FOLDERS):
        for exe in folder.iterdir() if folder.is_dir() else ():
            if exe.name not in tools and not (bare / exe.name).exists():
                (bare / exe.name).symlink_to(exe)
    return {"PATH": f"{Path(sys.executable).parent}:{bare}"}


def mentions(text: str, tool: str) -> list[str]:
    """The lines naming tool as a program (gcc in /usr/bin/gcc, not cc in mpicc)."""
    word = re.compile(rf"(?<![\w.-]){re.escape(tool)}(?![\w-])")
    return [line for line in text.splitlines() if word.search(line)]


# what a comparison of libraries already built does not need: the emulated cluster's, Slurm's,
# SimGrid's, the app command's and the doctor's programs, LAM's and PVM's daemons (their
# families are left out, a line each), the compiler (raw TCP's core, keyed by the compiler's
# own version, is skipped: one line), and programs mpiarena never runs
OPTIONAL = ("ip", "tc", "sshd", "srun", "smpirun", "ldd", "ompi_info", "ipcrm", "lamboot",
            "pvmd", "gcc", "cc", "nm", "chromium")
# the line each tool whose absence leaves something out is named in, by what it leaves out
LEAVES_OUT = {"lamboot": ("lam", r"^note: lam-\S+ left out: lamboot, which boots LAM's daemons, "
                                   "is not installed"),
              "pvmd": ("pvm", r"^note: pvm left out: .*pvmd"),
              "gcc": ("tcp", r"^skipping .*tcp.*: building .* needs gcc, which is not installed")}


@pytest.fixture(scope="module")
def pair_built() -> list[Build]:
    """The MPI libraries' cores, built while the compiler is there."""
    if len(PAIR) < 2:
        pytest.skip("needs an MPICH and an Open MPI on this machine")
    built = build_cores([i for i in IMPLS if i.id in PAIR])
    assert all(isinstance(b, Build) for b in built), built
    return [b for b in built if isinstance(b, Build)]


def test_a_comparison_completes_without_the_optional_tools(pair_built, bare, db):
    """Every implementation found, PATH stripped of every optional tool at once (one short
    run for all): the MPI libraries measured, each tool named in one line at most."""
    done = mpiarena("run", *SHORT, "--db", db, env=path_without(bare, OPTIONAL))
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert "Traceback" not in said and "pingpong (2 ranks)" in done.stdout, said
    assert "failed" not in said, said  # what was left out was left out before it ran
    for tool in OPTIONAL:
        named = mentions(said, tool)
        assert len(named) <= 1, (tool, said)
        if tool in LEAVES_OUT and LEAVES_OUT[tool][0] in BY_FAMILY:
            assert named and re.match(LEAVES_OUT[tool][1], named[0]), (tool, said)


@dataclass(frozen=True)
class Needed:
    """A command that needs tool: it exits 2 with one line naming it and how to get it."""

    tool: str
    argv: tuple[str, ...]
    also: tuple[str, ...] = ()  # other names of the same need (gcc: cc)
    env: tuple[tuple[str, str], ...] = ()


NEEDED = [
    Needed("ip", ("cluster", "up", "emulated:nodes=2", "--name", cluster_name("no-ip"))),
    Needed("smpirun", ("simulate",)),
    Needed("srun", ("run", "--slurm"), env=(("SLURM_JOB_ID", "1"),)),
    Needed("lamboot", ("run", "--impl", LAM or "lam", *SHORT)),
    # nothing built yet (a data directory of its own) and no compiler to build with
    Needed("gcc", ("run", "--impl", PAIR[0] if PAIR else "mpich", *SHORT), also=("cc",)),
]


@pytest.mark.parametrize("case", NEEDED, ids=[c.tool for c in NEEDED])
def test_a_command_that_needs_a_tool_says_which_in_one_line(case, bare, tmp_path, db):
    if (case.tool == "lamboot" and LAM is None) or (case.tool == "gcc" and not PAIR):
        pytest.skip("needs the implementation on this machine")
    env = {**path_without(bare, (case.tool, *case.also)), **dict(case.env),
           "MPIARENA_HOME": str(tmp_path / "home")}
    stored = () if case.argv[0] == "cluster" else ("--db", db)
    done = mpiarena(*case.argv, *stored, env=env)
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert mentions(done.stderr, case.tool) and "apt-get install" in done.stderr, done.stderr


def test_the_doctor_names_the_package_of_each_missing_tool(bare):
    """Where the optional tools are all absent, `mpiarena doctor` says what each would enable
    and the package that brings it, no traceback."""
    done = mpiarena("doctor", env={**path_without(bare, OPTIONAL), "COLUMNS": "250"})
    said = " ".join(done.stdout.replace("│", " ").split())
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
    for package in ("gcc", "iproute2", "slurm-client", "libsimgrid-dev"):
        assert f"apt-get install {package}" in said, (package, said)
    if "lam" in BY_FAMILY:
        assert "lamboot, which boots LAM's daemons, is not installed" in said, said
        assert "apt-get install lam-runtime" in said, said
