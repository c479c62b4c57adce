"""MPIs a site offers as environment modules: Lua modulefiles (Lmod, installed here) and Tcl ones
(Environment Modules 5.2.0, whose Debian package conflicts with lmod's, so its .deb is unpacked
into a scratch directory), written for the libraries installed here; listed, selected with
--impl module:NAME, run with the module's environment, named in the store."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import IMPLS, leftovers, mpiarena

from mpiarena.base.errors import ArenaError
from mpiarena.base.records import impl_of
from mpiarena.impls import modules, select

PYPI_MPICH = next((i for i in IMPLS if i.family == "mpich" and i.origin == "pypi"), None)


@dataclass(frozen=True)
class Trees:
    lua: Path  # Lmod's modulefiles
    tcl: Path  # Environment Modules' (Lmod reads them too)
    mpich: str  # the MPICH prefix the Tcl module offers


def _farm(directory: Path, pairs: dict[str, str]) -> Path:
    """A bin/ of links to one Debian library's commands, so a module can offer it alone."""
    bin_dir = directory / "bin"
    bin_dir.mkdir(parents=True)
    for name, target in pairs.items():
        (bin_dir / name).symlink_to(target)
    return bin_dir


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.fixture(scope="module")
def trees() -> Iterator[Trees]:
    top = Path(tempfile.mkdtemp(prefix="arena-modules-"))  # the rank user runs what is in it
    top.chmod(0o755)
    ompi = _farm(top / "openmpi", {"mpicc": "/usr/bin/mpicc.openmpi",
                                   "mpiexec": "/usr/bin/mpiexec.openmpi"})
    if PYPI_MPICH is not None and PYPI_MPICH.prefix is not None:
        mpich = str(PYPI_MPICH.prefix)
    else:
        mpich = str(_farm(top / "mpich", {"mpicc": "/usr/bin/mpicc.mpich",
                                          "mpiexec": "/usr/bin/mpiexec.mpich"}).parent)
    lua = _write(top / "lua", {
        "openmpi/4.1.4.lua": f'prepend_path("PATH", "{ompi}")\n'
                             'setenv("OMPI_MCA_btl", "self,tcp")\n',
        "mpich/9.9.lua": f'prepend_path("PATH", "{top}/gone/bin")\n',
        "broken/mpi.lua": 'LmodError("broken on purpose")\n',
        "tools/1.lua": 'setenv("ARENA_TEST_TOOL", "1")\n'})
    tcl = _write(top / "tcl", {
        "mpich/5.0.2": f"#%Module1.0\nset prefix {mpich}\nprepend-path PATH $prefix/bin\n"
                       "prepend-path LD_LIBRARY_PATH $prefix/lib\n",
        "broken-mpi/1": '#%Module1.0\nerror "broken on purpose"\n'})
    yield Trees(lua, tcl, mpich)
    shutil.rmtree(top)


@pytest.fixture(scope="module")
def modulecmd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Environment Modules' modulecmd.tcl, from its Debian package unpacked in scratch."""
    scratch = tmp_path_factory.mktemp("environment-modules")
    got = subprocess.run(["apt-get", "download", "environment-modules"], cwd=scratch,
                         capture_output=True, text=True, timeout=120)
    assert got.returncode == 0, f"apt-get download environment-modules: {got.stderr}"
    deb = next(scratch.glob("environment-modules_*.deb"))
    subprocess.run(["dpkg", "-x", str(deb), str(scratch / "root")], check=True, timeout=60)
    return next((scratch / "root" / "usr" / "lib").glob("*/modulecmd.tcl"))


@pytest.fixture
def lmod_env(trees: Trees, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    for name in ("LMOD_CMD", "MODULES_CMD", "MODULESHOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MODULEPATH", str(trees.lua))
    return {"MODULEPATH": str(trees.lua)}


def test_variant_ids_of_modules_keep_their_colon():
    assert impl_of("mpich-4.0.2") == "mpich-4.0.2"
    assert impl_of("mpich-4.0.2:eager") == "mpich-4.0.2"
    assert impl_of("module:mpich/5.0.2") == "module:mpich/5.0.2"
    assert impl_of("module:mpich/5.0.2:eager") == "module:mpich/5.0.2"


def test_lmod_modules_found_by_what_their_load_puts_on_path(lmod_env):
    found = {f.name: f for f in modules.discover_modules()}
    assert set(found) == {"module:openmpi/4.1.4", "module:mpich/9.9", "module:broken/mpi"}
    ompi = found["module:openmpi/4.1.4"].impl
    assert ompi is not None and ompi.family == "openmpi" and ompi.version == "4.1.4"
    assert ompi.origin == "lmod module openmpi/4.1.4"
    assert dict(ompi.env)["OMPI_MCA_btl"] == "self,tcp"
    assert dict(ompi.env)["LOADEDMODULES"] == "openmpi/4.1.4"
    assert "which does not exist" in (found["module:mpich/9.9"].problem or "")
    assert "broken on purpose" in (found["module:broken/mpi"].problem or "")
    # a short name is the module system's default version, loaded when asked for
    short = select([], ["module:openmpi"])[0]
    assert (short.family, short.origin) == ("openmpi", "lmod module openmpi")


def test_lmod_module_runs_with_its_environment(lmod_env, db):
    listed = mpiarena("impls", env=lmod_env)
    assert listed.returncode == 0, listed.stderr
    assert "module:openmpi/4.1.4" in listed.stdout and "lmod module openmpi/4.1.4" in listed.stdout
    assert "module:tools" not in listed.stdout  # it offers no MPI
    done = mpiarena("run", "--impl", "module:openmpi/4.1.4", "--bench", "pingpong", "--sizes",
                    "8", "--np", "2", "--launches", "1", "--db", db, env=lmod_env)
    assert done.returncode == 0, done.stderr
    row = sqlite3.connect(db).execute("SELECT impl_id, family, origin, wrapper FROM "
                                      "implementations").fetchone()
    assert row[:3] == ("module:openmpi/4.1.4", "openmpi", "lmod module openmpi/4.1.4"), row
    assert Path(row[3]).parent.parent == Path(lmod_env["MODULEPATH"]).parent / "openmpi"
    config = mpiarena("show", "--config", "--db", db).stdout
    assert "(lmod module openmpi/4.1.4, " in config
    # the module's OMPI_MCA_btl reached the ranks: Open MPI says it took TCP
    assert "module:openmpi/4.1.4: transport pml ob1, btl self, tcp" in config, config
    assert leftovers() == []


def test_environment_modules_module_runs(trees, modulecmd, db, monkeypatch):
    env = {"MODULEPATH": str(trees.tcl), "MODULES_CMD": str(modulecmd)}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("LMOD_CMD", raising=False)
    assert next(s.name for s in modules.systems()) == "environment-modules"
    found = {f.name: f for f in modules.discover_modules()}
    mpich = found["module:mpich/5.0.2"].impl
    assert mpich is not None and mpich.family == "mpich"
    assert mpich.origin == "environment-modules module mpich/5.0.2"
    assert dict(mpich.env)["PATH"].startswith(f"{trees.mpich}/bin:")
    assert "broken on purpose" in (found["module:broken-mpi/1"].problem or "")
    lmod = found["module:mpich/5.0.2-lmod"].impl  # Lmod reads Tcl modulefiles too
    assert lmod is not None and lmod.origin == "lmod module mpich/5.0.2"
    done = mpiarena("run", "--impl", "module:mpich/5.0.2", "--bench", "pingpong", "--sizes", "8",
                    "--np", "2", "--launches", "1", "--db", db, env=env)
    assert done.returncode == 0, done.stderr
    row = sqlite3.connect(db).execute("SELECT impl_id, origin, wrapper FROM "
                                      "implementations").fetchone()
    assert row == ("module:mpich/5.0.2", "environment-modules module mpich/5.0.2",
                   f"{trees.mpich}/bin/mpicc"), row
    assert leftovers() == []


@pytest.mark.parametrize(("impl", "message"), [
    ("module:mpich/9.9", "/gone/bin on PATH, which does not exist; fix the prefix"),
    ("module:broken/mpi", "'module load broken/mpi' failed (lmod): broken on purpose"),
    ("module:tools/1", "puts no MPI compiler wrapper (mpicc) nor launcher on PATH"),
    ("module:nosuch/1", "no module nosuch/1 on MODULEPATH (lmod"),
])
def test_bad_module_is_one_line_and_exit_2(lmod_env, db, impl, message):
    done = mpiarena("run", "--impl", impl, "--bench", "pingpong", "--db", db, env=lmod_env)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and message in lines[0], done.stderr


def test_empty_modulepath(lmod_env, db):
    done = mpiarena("run", "--impl", "module:mpich", "--db", db, env={"MODULEPATH": ""})
    assert done.returncode == 2
    assert "MODULEPATH is empty; export MODULEPATH=DIR" in done.stderr


def test_no_module_system(monkeypatch):
    for name in ("LMOD_CMD", "MODULES_CMD", "MODULESHOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(modules, "LMOD", ())
    monkeypatch.setattr(modules, "ENV_MODULES", ())
    assert modules.systems() == []
    with pytest.raises(ArenaError, match="no environment module system found: install lmod"):
        select([], ["module:mpich/4.0.2"])
