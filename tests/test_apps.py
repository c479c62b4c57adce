"""The application kernels (kernels/apps.c), run for real: correct on 1, 2 and 3 ranks for one
implementation of every MPI family and PVM, with their time per kind of call, and the way
their figures reach the terminal summary."""

from __future__ import annotations

import math

import pytest
from conftest import IMPLS, mpiarena
from test_core import running

from mpiarena.base.records import Cell, CellRequest
from mpiarena.model.benchmarks import BENCHMARKS
from mpiarena.runner.job import CellResult, Job

WANTED = ("mpich-4.0.2", "openmpi-4.1.4", "lam-7.1.4")  # one per family; any PVM, Intel MPI
CHOSEN = [i for i in IMPLS if i.id in WANTED or i.family == "pvm"]
CHOSEN += [i for i in IMPLS if i.family == "impi"][:1]
# bench, size, the correctness figure, its check
KERNELS = [
    ("app-pi", 1_000_000, "pi_error", lambda v: abs(v) < 1e-8),
    ("app-matvec", 120, "checksum_error", lambda v: v < 1e-9),
    ("app-matmul", 40, "checksum_error", lambda v: v < 1e-9),
    ("app-rowmm", 40, "checksum_error", lambda v: v < 1e-9),
    ("app-primes", 100_000, "primes", lambda v: v == 9592),
    ("app-md", 256, "energy_drift", lambda v: 0 <= v < 1e-4),
    ("app-stencil", 64, "checksum_error", lambda v: v < 1e-9),
]


def app(job: Job, bench: str, size: int, obs: int = 2) -> CellResult:
    return job.cell(CellRequest(Cell(bench, size, job.np), timing="loop", observations=obs,
                                target_time=1e-3, max_time=2.0, window=16), 1,
                    timeout=60)


@pytest.mark.parametrize("np_", [1, 2, 3])
@pytest.mark.parametrize("impl", CHOSEN, ids=[i.id for i in CHOSEN])
def test_every_kernel_is_correct(impl, np_):
    with running(impl, np_) as job:
        results = {bench: app(job, bench, size) for bench, size, _, _ in KERNELS}
    for bench, _, figure, good in KERNELS:
        res = results[bench]
        assert res.status == "ok", (bench, res.reason)
        assert res.iterations == 1 and 1 <= len(res.observations) <= 2
        for o in res.observations:
            assert len(o.per_rank) == np_ and min(o.per_rank) > 0
            assert good(o.extras[figure][0]), (bench, o.extras[figure])
            assert all(math.isnan(v) for v in o.extras[figure][1:])  # rank 0 checks


@pytest.mark.alone  # measured times against each other
@pytest.mark.parametrize("impl", CHOSEN[:1], ids=[i.id for i in CHOSEN[:1]])
def test_call_times_fit_in_the_wall_time(impl):
    with running(impl, 2) as job:
        results = {bench: app(job, bench, size, obs=3) for bench, size, _, _ in KERNELS}
    for bench, res in results.items():
        assert res.status == "ok", (bench, res.reason)
        for o in res.observations:
            calls = [v for name, v in o.extras.items() if name.startswith("t_")]
            assert calls, bench
            for r, wall in enumerate(o.per_rank):
                spent = [v[r] for name, v in o.extras.items() if name.startswith("t_")]
                assert all(t >= 0 for t in spent) and sum(spent) < wall, (bench, r, spent, wall)
        assert BENCHMARKS[bench].observation(res.observations[0].per_rank) == max(
            res.observations[0].per_rank)


@pytest.mark.parametrize("impl", CHOSEN[:1], ids=[i.id for i in CHOSEN[:1]])
def test_a_wrong_answer_makes_the_cell_invalid(impl):
    with running(impl, 2, env={"ARENA_FAULT": "corrupt"}) as job:
        pi = app(job, "app-pi", 100_000)
        primes = app(job, "app-primes", 10_000)
        product = app(job, "app-matmul", 30)
    assert pi.status == "invalid" and "pi is off by" in pi.reason
    assert primes.status == "invalid" and "a sieve says 1229" in primes.reason
    assert product.status == "invalid" and "checksum" in product.reason


def test_kernels_say_what_they_cannot_run():
    tcp = [i for i in IMPLS if i.family == "tcp"]
    chosen = tcp[0] if tcp else CHOSEN[0]
    with running(chosen, 2) as job:
        pi = app(job, "app-pi", 1000)
        md = app(job, "app-md", 16)  # two columns of particles: fewer than the halo
        primes = app(job, "app-primes", 1000)
    assert md.status == "na" and "particles" in md.reason
    assert primes.status == "ok" and primes.observations[0].extras["primes"][0] == 168
    if tcp:
        assert pi.status == "na" and "not expressible" in pi.reason


def test_run_selects_kernels_and_summarises_them(tmp_path):
    chosen = CHOSEN[0]
    done = mpiarena("run", "--launches", "2",
                    "--suite", "apps", "--bench", "app-pi,app-primes", "--np", "2",
                    "--impl", chosen.id, "--observations", "2", "--db", str(tmp_path / "r.db"),
                    env={"COLUMNS": "200"})
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "application kernels" in out
    for line in ("10,000,000", "pi error", "reduce", "primes 78498", "recv"):
        assert line in out, line
    assert "matmul" not in out
