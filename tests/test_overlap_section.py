"""Non-blocking collectives: what computation hides, per library (analysis/overlap), from a real
run to every output."""

from __future__ import annotations

import json

import pytest
from conftest import IMPLS, mpiarena

from mpiarena.analysis.overlap import overlap_rows, word
from mpiarena.analysis.stats import Summary
from mpiarena.report.html import render_html
from mpiarena.report.markdown import render_markdown
from mpiarena.store import Store
from mpiarena.store.results import load

MPI = [i for i in IMPLS if i.family in ("mpich", "openmpi")][:2]


def summary(median: float, low: float, high: float) -> Summary:
    return Summary(6, 18, median, low, high, low, high, low, high, None)


def test_the_word_is_decided_by_the_whole_interval():
    assert word(summary(90, 81, 95)) == "yes"
    assert word(summary(90, 79, 95)) == "undecided"
    assert word(summary(5, 0, 20)) == "no"
    assert word(summary(5, 0, 21)) == "undecided"
    assert word(summary(50, 20, 80)) == "partial"
    assert word(summary(50, 15, 60)) == "undecided"


@pytest.mark.skipif(len(MPI) < 2, reason="needs MPICH and Open MPI")
def test_a_run_of_overlaps_is_shown_per_collective_and_library(tmp_path):
    db = str(tmp_path / "o.db")
    done = mpiarena("run", "--bench", "iallreduce-overlap,iallreduce-overlap-test",
                    "--sizes", "64K", "--np", "2", "--impl", ",".join(i.id for i in MPI),
                    "--launches", "2", "--db", db)
    assert done.returncode == 0, done.stderr
    data = load(Store(db), 1)
    rows = overlap_rows(data)
    assert [(r.collective, r.size, r.variant) for r in rows] == [
        ("iallreduce", 65536, i.id) for i in MPI]
    for r in rows:
        assert r.background and r.tested and 0 <= r.background.summary.median <= 100
    assert "% hidden by computation, without / with MPI_Test" in done.stdout
    assert "in the background" in done.stdout
    assert "## Non-blocking collectives: what computation hides" in render_markdown(data)
    assert 'id="overlap"' in render_html(data)
    summary_ = json.loads(mpiarena("export", "--db", db, "--format", "json",
                                   "--summary").stdout)
    assert {r["variant"] for r in summary_["overlap"]} == {i.id for i in MPI}
    assert all(r["background"]["word"] in ("yes", "partial", "no", "undecided")
               for r in summary_["overlap"])
