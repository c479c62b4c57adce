"""The fingerprint of a library's default collective algorithm: a default forced to an algorithm
must behave like that algorithm and not like one that is far slower."""

from __future__ import annotations

import dataclasses
import io
import math
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import IMPLS, mpiarena
from rich.console import Console

from mpiarena.analysis.comparison import Comparison
from mpiarena.analysis.fingerprint import Fingerprint, Unlike
from mpiarena.analysis.stats import THRESHOLD
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


# The rule holds false "faster" verdicts to 5% of those decided (a false discovery rate), not to
# none, and launches of two variants drift apart when the machine's state moves during a run:
# MPICH's 1 MiB bcast launches spread about 10% here, one fresh clone's run decided the default
# forced to binomial unlike binomial itself, and another (steal up to 6.8%) told them apart by
# more than 15%. What must always hold is that such a verdict reads as launch noise (within
# NOISE), or lies far nearer to the algorithm than to any other measured: under half its
# distance (log ratio) from each (0.37-0.78x here).
NOISE = 1.15


def behaves_like(f: Fingerprint, algorithm: str) -> bool:
    """The default is like the algorithm, undecided against it, or told apart from it by noise
    only: within NOISE, or by less than half as much as from every other algorithm measured."""
    if algorithm in f.like + f.open:
        return True
    near = [abs(math.log(u.ratio)) for u in f.unlike if u.algorithm == algorithm]
    others = [abs(math.log(u.ratio)) for u in f.unlike if u.algorithm != algorithm]
    return bool(near) and (near[0] < math.log(NOISE) or all(near[0] < d / 2 for d in others))


@pytest.mark.skipif(MPICH4 is None, reason="not installed here")
def test_a_default_forced_to_binomial_behaves_like_binomial(shared_dir, db):
    assert MPICH4 is not None
    sizes = (65536, 2**20)
    # 40 launches a side: the decision asserted below needs the interval of a 1.41x difference
    # (the least seen) beyond 5%; with the Mann-Whitney test's efficiency, launches a side for a
    # power of 0.999 are 2 pi / 3 ((1.96 + 3.09) sd / log(1.41 / 1.05))^2: 14 at a 15% spread
    # between launches (quiet), 38 at 25% (under make test's load); 20 left both cells open
    # once in two fresh clones
    done = _forced_default(MPICH4, "bcast", "binomial", "scatter_ring_allgather", sizes, 40,
                           shared_dir, db)
    assert [f.size for f in done.prints] == list(sizes)
    for f in done.prints:
        assert behaves_like(f, "binomial"), f
        assert [u.algorithm for u in f.unlike if u.algorithm != "binomial"] == \
            ["scatter_ring_allgather"], f
        # binomial is the faster, beyond the rule's 5%: typically 1.5-2.2x here, but one fresh
        # clone's run read 1.41x at 1 MiB with its interval reaching 1.19x (ci_high 0.84)
        (slow,) = [u for u in f.unlike if u.algorithm == "scatter_ring_allgather"]
        assert slow.ci_high < 1 / (1 + THRESHOLD) and f.fastest == "binomial", f
    # MPICH's launches agree within a few % on a quiet machine: 20 launches reach 'same' in 7
    # cells of 8, but under the whole suite's load 20, 30 and 50 launches each left both cells
    # undecided at times. Each cell's line says what was decided, whichever it was (the
    # equivalence rule itself is checked in simulation: test_stats).
    shown = mpiarena("show", str(done.run_id), "--db", db)
    assert shown.returncode == 0, shown.stderr
    for f in done.prints:
        said = line(f)
        if f.like:
            assert re.search(r"the default behaves like binomial \(indistinguishable\), [\d.]+x "
                             r"faster than scatter_ring_allgather \(95% CI [\d.]+-[\d.]+\)$",
                             said), said
        elif f.open:
            assert re.search(r"the default is [\d.]+x faster than scatter_ring_allgather \(95% "
                             r"CI [\d.]+-[\d.]+\); undecided against binomial$", said), said
        assert said.split(": the default ")[1] in shown.stdout


@pytest.mark.skipif(OMPI is None, reason="not installed here")
def test_open_mpi_forced_to_binomial_is_never_told_apart_from_binomial(shared_dir, db):
    """Open MPI's launches fall into two levels 15-30% apart here (both algorithms alike), so
    'indistinguishable' would need about a hundred launches: what must hold is that binomial is
    never told apart from the default forced to it beyond launch noise (NOISE), while the 2x
    slower algorithm is. 12 launches a side: 6 left the 2x difference undecided once on a fresh
    machine under make test's load (launch levels 15-30% apart in two modes: 2 pi / 3 ((1.96 +
    2.33) 0.3 / log(2 / 1.05))^2 is 4 a side for 99% power, but two modes leave 6 a side short
    when three fall in the slow one)."""
    assert OMPI is not None
    done = _forced_default(OMPI, "bcast", "binomial", "scatter_allgather", (65536,), 12,
                           shared_dir, db)
    (f,) = done.prints
    assert behaves_like(f, "binomial"), f
    (slow,) = [u for u in f.unlike if u.algorithm == "scatter_allgather"]
    assert slow.ratio < 0.8 and {u.algorithm for u in f.unlike} <= {"binomial", slow.algorithm}, f


def test_a_default_like_none_says_so():
    slower = Comparison(2.0, 1.5, 2.5, 0.001, Judgement.ABOVE, 10, 10, 0)
    f = Fingerprint("bcast", 8, 2, "x", [], [Unlike("ring", slower)], [], "ring")
    assert line(f) == ("x bcast 8 B, 2 ranks: the default behaves like none of the algorithms "
                       "measured, 2.00x slower than ring (95% CI 1.50-2.50)")
    faster = Comparison(0.5, 0.4, 0.625, 0.001, Judgement.BELOW, 10, 10, 0)
    f = Fingerprint("bcast", 8, 2, "x", [], [Unlike("ring", faster)], ["tree"], "tree")
    assert line(f) == ("x bcast 8 B, 2 ranks: the default is 2.00x faster than ring (95% CI "
                       "1.60-2.50); undecided against tree")
