"""The libraries an answer compares are the ones the user chose: a release `mpiarena releases`
installed for a bisection (impls/pypi.py's CACHED file in its prefix) is a cache that discovery
marks and a default run leaves out, saying so and saying what it compares; naming it, or
`install`ing it, compares it. A run that names two or more libraries gets the machine floor
beside them. Read from real prefixes: a copy of the tests' Intel MPI build made of links."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import IMPLS, mpiarena

from mpiarena.impls import discover, pypi

BUILD = Path("/var/lib/mpiarena/test-home/impls/impi-2021.19.0")
MPI = [i.id for i in IMPLS if i.family in ("mpich", "openmpi")][:2]
needs_build = pytest.mark.skipif(not BUILD.is_dir(), reason=f"needs {BUILD} (make test installs "
                                 "it)")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory of install prefixes holding the build as `releases` leaves one: its marker,
    the cache's file, its files linked."""
    prefix = tmp_path / "impls" / BUILD.name
    prefix.mkdir(parents=True)
    for part in BUILD.iterdir():
        (prefix / part.name).symlink_to(part)
    (prefix / pypi.MARKER).unlink()
    (prefix / pypi.MARKER).write_text((BUILD / pypi.MARKER).read_text())
    (prefix / pypi.CACHED).write_text("installed by 'mpiarena releases' for a bisection\n")
    monkeypatch.setenv("MPIARENA_IMPLS_PATH", str(prefix.parent))
    return prefix


def _dry_run(*args: str) -> tuple[list[str], str]:
    done = mpiarena("run", "--dry-run", "--bench", "pingpong", "--sizes", "8", *args,
                    env={"COLUMNS": "300"})
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.strip().startswith("variants ("))
    return line.split(": ", 1)[1].split(", "), done.stderr


@needs_build
def test_a_release_installed_for_a_bisection_is_a_cache_a_default_run_leaves_out(
        cache: Path) -> None:
    found = {f.name: f for f in discover({}, Path("/nonexistent"))}
    assert found["impi-2021.19.0"].cached and found["impi-2021.19.0"].impl is not None
    assert not any(f.cached for name, f in found.items() if name != "impi-2021.19.0")
    variants, said = _dry_run()
    assert "impi-2021.19.0" not in variants and variants, variants
    said = " ".join(said.split())
    assert "note: left out impi-2021.19.0: releases that 'mpiarena releases' installed for a " \
        "bisection" in said, said
    assert f"comparing {', '.join(variants)}: every implementation found" in said, said
    named, _ = _dry_run("--impl", "impi-2021.19.0")
    assert named == ["impi-2021.19.0"]


@needs_build
def test_installing_a_cached_release_makes_it_chosen(cache: Path) -> None:
    """`install` of a release already in the cache asks for it: the cache's file goes, nothing
    is fetched."""
    assert pypi.install("impi==2021.19.0", cache.parent) == cache
    assert not (cache / pypi.CACHED).exists()
    found = {f.name: f for f in discover({}, Path("/nonexistent"))}
    assert not found["impi-2021.19.0"].cached
    assert pypi.install("impi==2021.19.0", cache.parent, cached=True) == cache
    assert not (cache / pypi.CACHED).exists()  # a chosen build stays chosen


@needs_build
def test_impls_marks_the_cache(cache: Path) -> None:
    done = mpiarena("impls", "--json")
    assert done.returncode == 0, done.stderr
    listed = {x["id"]: x for x in json.loads(done.stdout)}
    assert listed["impi-2021.19.0"]["cached"] is True
    assert listed["impi-2021.19.0"]["origin"] == "pypi, releases' cache"
    assert not any(x["cached"] for i, x in listed.items() if i != "impi-2021.19.0")


@pytest.mark.skipif(len(MPI) < 2, reason="needs two MPI libraries")
def test_a_run_naming_two_libraries_gets_the_floor_beside_them() -> None:
    variants, _ = _dry_run("--impl", ",".join(MPI))
    assert variants == [*MPI, "floor"], variants
    alone, _ = _dry_run("--impl", MPI[0])
    assert alone == [MPI[0]], alone
