"""MPI beyond MPI-1 beside its counterpart in the same library (analysis/counterparts): a planted
slowdown of one benchmark at one size is found there and nowhere else, and every output says so."""

from __future__ import annotations

import json

import pytest
from conftest import IMPLS, mpiarena

from mpiarena.analysis.counterparts import COUNTERPARTS, counterpart_checks
from mpiarena.model.benchmarks import BENCHMARKS
from mpiarena.report.html import render_html
from mpiarena.report.markdown import render_markdown
from mpiarena.store import Store
from mpiarena.store.results import load

MPI = next((i for i in IMPLS if i.family in ("mpich", "openmpi")), None)


def test_every_counterpart_names_two_benchmarks_of_the_same_kind_of_figure():
    for c in COUNTERPARTS:
        mine, theirs = BENCHMARKS[c.bench], BENCHMARKS[c.against]
        assert mine.group and mine.unit == theirs.unit == "s", c
        assert mine.pair == theirs.pair and mine.scale == theirs.scale, c


@pytest.mark.skipif(MPI is None, reason="no MPICH or Open MPI here")
def test_a_planted_datatype_cost_is_found_at_its_size_and_no_other(tmp_path):
    """pingpong-vector made 30x slower at 4 KiB only: slower than pingpong there; 6 launches,
    the fewest with which the launch test can back a verdict after the correction over the
    run's checks (unpaired: under stats.PAIRED_FROM launches)."""
    assert MPI is not None
    suite = tmp_path / "planted.toml"
    suite.write_text('benchmarks = ["pingpong", "pingpong-vector"]\n'
                     'sizes = "8,4K"\nnp = [2]\nobservations = 3\nlaunches = 6\n'
                     'init_launches = 0\ntarget_time = 0.0005\nmax_cell_time = 0.5\n')
    db = str(tmp_path / "c.db")
    done = mpiarena("run", "--suite", str(suite), "--impl", MPI.id, "--db", db,
                    env={"ARENA_PLANT_SLOW_BENCH": "pingpong-vector:4096:30"})
    assert done.returncode == 0, done.stderr
    data = load(Store(db), 1)
    checks = counterpart_checks(data)
    assert {(c.key.bench, c.key.size) for c in checks} == {("pingpong-vector", 8),
                                                           ("pingpong-vector", 4096)}
    hit = next(c for c in checks if c.key.size == 4096)
    assert hit.outcome == "slower" and hit.ratio > 5 and hit.ci_low > 1.05, hit
    assert next(c for c in checks if c.key.size == 8).outcome != "slower"
    shown = mpiarena("show", "--db", db).stdout
    assert "Beside MPI-1" in shown and "pingpong-vector against pingpong" in shown
    assert "4 KiB on 2 ranks: " in render_markdown(data) and "slower" in render_markdown(data)
    assert 'id="beside-mpi1"' in render_html(data)
    summary = json.loads(mpiarena("export", "--db", db, "--format", "json", "--summary").stdout)
    record = next(r for r in summary["counterparts"] if r["size"] == 4096)
    assert record["outcome"] == "slower" and record["against"] == "pingpong"
