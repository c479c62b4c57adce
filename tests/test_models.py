"""Fitted models: alpha-beta per protocol regime recovered from synthetic launches with known
parameters, a planted switch moving the split, and a real eager limit moving it in Open MPI;
`mpiarena explain` quoting only stored figures."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from conftest import IMPLS, mpiarena

from mpiarena.analysis.curves import switches
from mpiarena.analysis.groups import figure
from mpiarena.analysis.models import P2pModel, fit, line
from mpiarena.base.sizes import format_size, parse_sizes
from mpiarena.base.units import seconds
from mpiarena.store import Store
from mpiarena.store.results import Group, load

SIZES = [s for s in parse_sizes("1..1M", perturb=True) if s > 0]
BY_ID = {i.id: i for i in IMPLS}
MPICH, OMPI = BY_ID.get("mpich-4.0.2"), BY_ID.get("openmpi-4.1.4")


def _planted(switch_at: int, seed: int = 7, launches: int = 10) -> dict[int, Group]:
    """Groups of a curve with alpha 2 us, beta 0.1 ns/B below `switch_at` and alpha 6 us from
    it on (a fixed cost 4 us higher, as a rendezvous handshake adds); each launch's level off
    by 3% (lognormal), each observation by 1%: the variation a quiet machine shows between and
    within launches."""
    rng = np.random.default_rng(seed)
    level = np.exp(rng.normal(0, 0.03, launches))
    out = {}
    for s in SIZES:
        t = (2e-6 if s < switch_at else 6e-6) + 1e-10 * s
        values = [t * level[k] * np.exp(rng.normal(0, 0.01)) for k in range(launches)
                  for _ in range(3)]
        out[s] = Group(values=values, launches=[k for k in range(launches) for _ in range(3)])
    return out


def _model(groups: dict[int, Group]) -> P2pModel:
    sizes = sorted(groups)
    found = switches(sizes, [float(groups[s].array.min()) for s in sizes])
    model = fit(groups, found, "synthetic", "pingpong", 2)
    assert model is not None
    return model


def test_a_model_of_synthetic_launches_recovers_the_planted_parameters_within_intervals():
    model = _model(_planted(8192 - 3))
    assert [r.first for r in model.regimes] == [1, 8189]  # split exactly at the planted switch
    assert model.regimes[1].opened_by is not None
    assert model.regimes[1].opened_by.kind == "fixed cost"
    for regime, (alpha, beta) in zip(model.regimes, [(2e-6, 1e-10), (6e-6, 1e-10)], strict=True):
        assert regime.alpha.low <= alpha <= regime.alpha.high, regime.alpha
        assert regime.beta.low <= beta <= regime.beta.high, regime.beta
        assert regime.alpha.value == pytest.approx(alpha, rel=0.05)
        assert regime.beta.value == pytest.approx(beta, rel=0.05)
        assert regime.worst_residual < 0.10 and len(regime.alpha.per_launch) == 10
    # the line predicts between the measured sizes
    assert model.time(100_000) == pytest.approx(6e-6 + 1e-10 * 100_000, rel=0.05)


def test_a_planted_switch_moved_moves_the_fitted_split():
    at_8k, at_64k = _model(_planted(8192 - 3)), _model(_planted(65536 - 3))
    assert [r.first for r in at_8k.regimes] == [1, 8189]
    assert [r.first for r in at_64k.regimes] == [1, 65533]


def test_a_line_that_misses_by_more_than_the_target_is_split_where_it_bends():
    # a cost per byte that doubles from 256 KiB on without a jump (out of a cache): one line
    # misses it, and the model splits there though no protocol switch is called
    groups = {}
    for s in SIZES:
        t = 1e-6 + 3e-11 * s if s < 262141 else 1e-6 + 3e-11 * 262144 + 6e-11 * (s - 262144)
        groups[s] = Group(values=[t, t * 1.01, t * 0.99], launches=[0, 1, 2])
    model = fit(groups, [], "synthetic", "pingpong", 2)
    assert model is not None
    assert all(r.worst_residual <= 0.10 for r in model.regimes)
    assert any(r.misfit_split and 131075 < r.first <= 262144 for r in model.regimes)


def test_the_line_keeps_its_slope_non_negative():
    assert line([1, 2, 3], [3.0, 2.0, 1.0])[1] == 0.0
    alpha, beta = line([0, 1000], [1e-6, 2e-6])
    assert alpha == pytest.approx(1e-6) and beta == pytest.approx(1e-9)


def _starts_of(text: str, variant: str) -> list[int]:
    """Where a variant's regimes start as `show --models` prints them."""
    block = text.split(f"\n{variant}:\n", 1)[1].split("\n" + "openmpi", 1)[0]
    return [_size(m.group(1)) for m in re.finditer(r"^  (\S+ \S+)-\S+ \S+ \(", block, re.M)]


def _size(text: str) -> int:
    number, unit = text.split()
    return int(float(number) * {"B": 1, "KiB": 1024, "MiB": 2**20}[unit])


@pytest.mark.skipif(OMPI is None, reason="needs Debian's Open MPI 4.1.4")
def test_open_mpis_eager_limit_moves_the_fitted_split(tmp_path):
    # Open MPI's shared-memory transport copies a message through its fragments up to the
    # eager limit (4 KiB) and switches to a single copy above it: a variant with the limit at
    # 1 KiB switches four times earlier
    assert OMPI is not None
    suite = tmp_path / "s.toml"
    suite.write_text(f'benchmarks = ["pingpong"]\nobservations = 3\nlaunches = 6\n'
                     f'init_launches = 0\n[[variant]]\nimpl = "{OMPI.id}"\nname = "eager1k"\n'
                     f'env = {{ OMPI_MCA_btl_vader_eager_limit = "1024" }}\n')
    db = str(tmp_path / "r.db")
    done = mpiarena("run", "--impl", OMPI.id, "--suite", str(suite), "--sizes", "64..64K",
                    "--perturb", "--db", db)
    assert done.returncode == 0, done.stderr
    shown = mpiarena("show", "latest", "--models", "--db", db)
    assert shown.returncode == 0, shown.stderr
    # (windows a NetPIPE step wide on either side: a busy machine moves a switch by one step)
    planted = f"{OMPI.id}:eager1k"
    # the default's split near its 4 KiB limit: a protocol switch, or (one fresh clone's run) a
    # split where one line misfit, at 8189 B
    assert any(1536 < s <= 8192 for s in _starts_of(shown.stdout, OMPI.id)), shown.stdout
    assert any(512 < s <= 1536 for s in _starts_of(shown.stdout, planted)), shown.stdout
    # nothing more is asserted of the splits around them: at 256 B-512 B both variants split now
    # and then (a fresh clone's default switched at 515 B), and the planted variant may keep the
    # transport's own switch near 4 KiB (another's: flat from 1 KiB to 4 KiB, then 0.065 ns/B)


@pytest.mark.skipif(MPICH is None or OMPI is None, reason="needs MPICH 4.0.2 and Open MPI 4.1.4")
def test_every_clause_of_explain_quotes_stored_figures(tmp_path):
    assert MPICH is not None and OMPI is not None
    db = str(tmp_path / "r.db")
    done = mpiarena("run", "--impl", f"{MPICH.id},{OMPI.id}", "--bench", "pingpong", "--sizes",
                    "0..64K", "--launches", "4", "--observations", "2", "--db", db)
    assert done.returncode == 0, done.stderr
    said = mpiarena("explain", "latest", MPICH.id, OMPI.id, "--db", db)
    assert said.returncode == 0, said.stderr
    data = load(Store(Path(db)), 1)
    from mpiarena.analysis.models import fit_models
    models = fit_models(data)
    clauses = [x for x in said.stdout.splitlines() if re.match(r"^\d", x)]
    assert len(clauses) >= 2, said.stdout
    covered = []
    for clause in clauses:
        span, rest = clause.split(": ", 1)
        first, _, last = span.partition("-")
        lo, hi = _size(first), _size(last or first)
        keys = sorted(k for k in data.cells if k.bench == "pingpong" and lo <= k.size <= hi)
        covered += keys
        n = int(re.search(r"x over (\d+) cells?", rest).group(1))
        assert n == len(keys), clause
        ratios = [figure(data.cells[k][OMPI.id]) / figure(data.cells[k][MPICH.id]) for k in keys]
        if n > 1:
            assert f"cells {min(ratios):.2f}-{max(ratios):.2f}x" in rest, clause
        for name, unit in (("alpha", "seconds"), ("beta", "ns/B")):
            quoted = re.search(rf"{name} (\S+ \S+) \({MPICH.id}\) against (\S+ \S+) "
                               rf"\({OMPI.id}\)", rest)
            if quoted is None:
                continue
            ra, rb = models[MPICH.id].regime(hi), models[OMPI.id].regime(hi)
            want = [seconds(getattr(r, name).value) if unit == "seconds" else
                    f"{getattr(r, name).value * 1e9:.3g} ns/B" for r in (ra, rb)]
            assert list(quoted.groups()) == want, clause
    # 4 launches a side cannot decide a family this large: it says so, and what would
    hint = re.search(r"^Cannot tell: (\d+) of (\d+) comparisons, at 4 launches a side(.*)$",
                     said.stdout, re.M)
    assert hint and 0 < int(hint.group(1)) <= int(hint.group(2)), said.stdout
    more = re.search(r"--launches (\d+)\)", hint.group(3))
    assert more is None or int(more.group(1)) > 4, hint.group(0)
    # the clauses cover every size both measured, once
    assert sorted(covered) == sorted(k for k in data.cells if k.bench == "pingpong")
    assert said.stdout.count(f"\n{format_size(0)}-") == 1  # 0 B opens the first range


def test_explain_of_a_variant_the_run_lacks_says_which_it_has(tmp_path):
    if MPICH is None:
        pytest.skip("needs MPICH 4.0.2")
    db = str(tmp_path / "r.db")
    done = mpiarena("run", "--impl", MPICH.id, "--bench", "pingpong", "--sizes", "8,64",
                    "--launches", "2", "--observations", "1", "--db", db)
    assert done.returncode == 0, done.stderr
    said = mpiarena("explain", "latest", MPICH.id, "lam-7.1.4", "--db", db)
    assert said.returncode == 2
    assert said.stderr.strip().count("\n") == 0 and "no variant 'lam-7.1.4'" in said.stderr
    assert MPICH.id in said.stderr
