"""The per-rank view of a collective at many ranks: which ranks are slowest, in the HTML report."""

from __future__ import annotations

import re

import numpy as np
from conftest import stored_run

from mpiarena.analysis.ranks import rank_matrix
from mpiarena.base.records import CellRow, RunSettings, VariantRecord
from mpiarena.base.status import CellStatus
from mpiarena.report.html import render_html
from mpiarena.report.plots import BANDS, _bands
from mpiarena.store import Obs, Store
from mpiarena.store.results import Group, load

SLOW = 11  # the straggler


def _run(path, ranks: int) -> int:
    store = Store(path)
    run = stored_run(store, "default", RunSettings(window=64))
    rng = np.random.default_rng(2)
    for v in ("a-1", "b-1"):
        store.add_variant(VariantRecord(run_id=run, variant=v, impl_id=v, name="default", env={},
                                        args=[], binding="core"))
        for launch in range(3):
            for size in (8, 4096):
                t = rng.lognormal(0, 0.05, (3, ranks)) * 1e-5
                t[:, SLOW] *= 3
                store.add_cell(CellRow(run_id=run, job_id=None, variant=v, bench="bcast",
                                       size=size, np=ranks, iterations=10, status=CellStatus.OK,
                                       launch=launch, timing="barrier"),
                               [Obs(i, r.tolist()) for i, r in enumerate(t)])
    store.close()
    return run


def test_a_collective_at_many_ranks_shows_every_rank_and_names_the_slowest(tmp_path):
    path = tmp_path / "s.db"
    data = load(Store(path), _run(path, 16))
    page = render_html(data)
    assert page.count('alt="bcast, 16 ranks: rank by rank"') == 1
    for v in ("a-1", "b-1"):  # named first, about 3x the median rank
        assert 2.7 < float(re.search(rf"{v}: rank {SLOW} ([0-9.]+)x", page)[1]) < 3.3
    m = rank_matrix(data.cells["bcast", 4096, 16]["a-1"])
    assert m.shape == (16, 9) and np.all(np.nanmedian(m, axis=1)[SLOW] > 2.5)


def test_few_ranks_get_no_rank_view(tmp_path):
    store = Store(tmp_path / "s.db")
    run = stored_run(store, "default")
    for v in ("a-1", "b-1"):
        store.add_variant(VariantRecord(run_id=run, variant=v, impl_id=v, name="default", env={},
                                        args=[], binding="core"))
        store.add_cell(CellRow(run_id=run, job_id=None, variant=v, bench="bcast", size=8, np=4,
                               iterations=10, status=CellStatus.OK),
                       [Obs(i, [1e-5] * 4) for i in range(3)])
    assert "rank by rank" not in render_html(load(store, run))


def test_thousands_of_ranks_fold_into_bands_that_keep_the_slowest():
    ranks = 4099  # not a multiple of the band
    g = Group(values=[1.0] * 2, per_rank=[np.ones(ranks), np.ones(ranks)])
    g.per_rank[1][4000] = 5.0
    shown, per = _bands(rank_matrix(g))
    assert shown.shape[0] <= BANDS and per == 17
    assert shown[4000 // per, 1] == 5.0 and np.nanmax(np.delete(shown, 4000 // per, 0)) == 1.0
