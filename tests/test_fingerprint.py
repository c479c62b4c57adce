"""The fingerprint of a library's default collective algorithm: a default forced to an algorithm
must behave like that algorithm and not like one that is far slower."""

from __future__ import annotations

import dataclasses
import io
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import IMPLS, mpiarena
from rich.console import Console

from mpiarena.analysis.comparison import Comparison
from mpiarena.analysis.fingerprint import Fingerprint, Unlike
from mpiarena.analysis.verdicts import Judgement
from mpiarena.base import users
from mpiarena.cluster.topology import Where
from mpiarena.impls import Implementation, family_of
from mpiarena.report.fingerprint import line
from mpiarena.runner.library_tuning import Measure, Tuning, tune
from mpiarena.runner.session import RunContext
from mpiarena.store import Store

OMPI = next((i for i in IMPLS if i.family == "openmpi"), None)
MPICH4 = next((i for i in IMPLS if i.family == "mpich" and i.version.startswith("4")), None)


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory the rank user can reach (pytest's own tmp_path is private to root)."""
    with tempfile.TemporaryDirectory(prefix="mpiarena-fingerprint-") as d:
        Path(d).chmod(0o755)
        yield Path(d)


def _forced_default(impl: Implementation, coll: str, forced: str, other: str,
                    sizes: tuple[int, ...], launches: int, directory: Path, db: str) -> Tuning:
    """A tune of two algorithms whose 'default' is the library forced to one of them."""
    alg = next(a for a in family_of(impl).algorithms(impl, coll) if a.name == forced)
    pinned = dataclasses.replace(impl, env=impl.env + alg.env)
    m = Measure((coll,), (2,), sizes, launches, 3, Where(), 30)
    return tune([pinned], m, {forced, other}, directory,
                RunContext(Store(Path(db)), users.for_ranks(), "test",
                           Console(file=io.StringIO()), lambda _: None))


# What a real tune always shows, whatever its launches read: a fingerprint per size, each
# forced algorithm in one of like, unlike and open, and the line `show` prints. Whether the
# default is told apart from the algorithm it is forced to is a decision: launches of 10-25%
# spread (MPICH's bcast here) decide it at 40 launches a side at best, so it is checked on
# observations drawn at that spread (tests/test_fingerprint_rule.py), not on this run's few.
FORCED = [pytest.param(MPICH4, "scatter_ring_allgather", id="mpich4",
                       marks=pytest.mark.skipif(MPICH4 is None, reason="not installed here")),
          pytest.param(OMPI, "scatter_allgather", id="openmpi",
                       marks=pytest.mark.skipif(OMPI is None, reason="not installed here"))]


@pytest.mark.parametrize("impl,other", FORCED)
def test_a_default_forced_to_binomial_is_fingerprinted_against_both_and_shown(
        impl, other, shared_dir, db):
    sizes = (65536,)
    done = _forced_default(impl, "bcast", "binomial", other, sizes, 4, shared_dir, db)
    assert [f.size for f in done.prints] == list(sizes)
    shown = mpiarena("show", str(done.run_id), "--db", db)
    assert shown.returncode == 0, shown.stderr
    for f in done.prints:
        placed = f.like + f.open + [u.algorithm for u in f.unlike]
        assert sorted(placed) == sorted(["binomial", other]) and f.fastest in placed, f
        said = line(f)
        assert said.startswith(f"{impl.id} bcast 64 KiB, 2 ranks: the default "), said
        assert said.split(": the default ")[1] in shown.stdout


def test_a_default_like_none_says_so():
    slower = Comparison(2.0, 1.5, 2.5, 0.001, Judgement.ABOVE, 10, 10, 0)
    f = Fingerprint("bcast", 8, 2, "x", [], [Unlike("ring", slower)], [], "ring")
    assert line(f) == ("x bcast 8 B, 2 ranks: the default behaves like none of the algorithms "
                       "measured, 2.00x slower than ring (95% CI 1.50-2.50)")
    faster = Comparison(0.5, 0.4, 0.625, 0.001, Judgement.BELOW, 10, 10, 0)
    f = Fingerprint("bcast", 8, 2, "x", [], [Unlike("ring", faster)], ["tree"], "tree")
    assert line(f) == ("x bcast 8 B, 2 ranks: the default is 2.00x faster than ring (95% CI "
                       "1.60-2.50); undecided against tree")
