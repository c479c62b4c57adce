"""A family is one module in impls/: MPICH registered a second time under another name, added
the way a contributor would add a derivative, is picked up by `impls`, `run`, `report`,
`profile` and `reproduce` with no other file changed."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from conftest import IMPLS, leftovers, mpiarena
from test_profile import KNOWN

import mpiarena.impls as impls_package

DEBIAN_MPICH = next((i for i in IMPLS if i.family == "mpich" and i.origin == "debian"), None)

MODULE = '''"""MPICH again, under another name: a test writes this module and removes it."""

import os
from pathlib import Path

from .base import Found, Implementation
from .mpich import Mpich
from .wrappers import identify

WRAPPER, LAUNCHER = Path("/usr/bin/mpicc.mpich"), Path("/usr/bin/mpiexec.mpich")


class Again(Mpich):
    name = "again"
    order = 90
    lineage = "mpich"  # studies and suites that name MPICH take it too
    wrapper_pattern = None  # found by itself, not by asking wrappers
    debian = ()
    pypi_distributions = ()

    def detect(self) -> list[Found]:
        kind = identify(WRAPPER, dict(os.environ))
        if kind is None:
            return []
        impl_id = f"again-{kind[1]}"
        return [Found(impl_id, Implementation(impl_id, "again", kind[1], "debian", WRAPPER,
                                              LAUNCHER))]


FAMILY = Again()
'''


@pytest.fixture
def contributed(tmp_path):
    """A copy of the package with the module added, first on the commands' path: the installed
    package stays as it is."""
    package = Path(impls_package.__file__).parents[1]
    copy = tmp_path / "src" / package.name
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "impls" / "again_for_test.py").write_text(MODULE)
    return {"PYTHONPATH": os.pathsep.join(filter(None, (str(copy.parent),
                                                        os.environ.get("PYTHONPATH"))))}


@pytest.mark.skipif(DEBIAN_MPICH is None, reason="needs Debian's MPICH")
def test_a_family_module_is_all_it_takes(contributed, tmp_path):
    again, db, env = f"again-{DEBIAN_MPICH.version}", str(tmp_path / "r.db"), contributed
    listed = mpiarena("impls", env=env)
    assert listed.returncode == 0 and again in listed.stdout, listed.stdout
    assert again not in mpiarena("impls").stdout  # the module, not something else, added it
    done = mpiarena("run", "--impl", again, "--impl", DEBIAN_MPICH.id, "--bench",
                    "pingpong,bcast", "--sizes", "8", "--launches", "2", "--observations", "2",
                    "--tables", "--db", db, env=env)
    assert done.returncode == 0, done.stderr
    assert again in done.stdout
    ok = sqlite3.connect(db).execute("SELECT COUNT(*) FROM cells WHERE variant=? AND "
                                     "status='ok'", (again,)).fetchone()[0]
    assert ok >= 4  # pingpong and bcast, two launches each (and start-up cells)
    html = tmp_path / "r.html"
    assert mpiarena("report", "latest", "-o", str(html), "--db", db, env=env).returncode == 0
    assert again in html.read_text()
    source = tmp_path / "known.c"
    source.write_text(KNOWN)
    profiled = mpiarena("profile", "--impl", again, "--compile", str(source), timeout=120,
                        env=env)
    assert profiled.returncode == 0, profiled.stderr
    assert again in profiled.stdout and "MPI_Allreduce" in profiled.stdout
    out = tmp_path / "cleary.md"
    study = mpiarena("reproduce", "cleary2006", "--quick", "--cluster", "local", "--impl", again,
                     "-o", str(out), "--db", db, timeout=600, env=env)
    assert study.returncode == 0, study.stderr
    assert again in out.read_text()  # measured as the study's MPICH
    assert leftovers() == []
