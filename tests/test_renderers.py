"""The renderers' registry and the plot table: every kind of run has one renderer per format,
and every kind of figure names, titles and captions itself from what it is drawn for."""

from __future__ import annotations

from collections import Counter
from itertools import product

import pytest

from mpiarena.base.records import RunKind
from mpiarena.report.plot_table import PLOTS, Bench, Table, TunedCollective, Whole, fields
from mpiarena.report.renderers import ENTRIES, RENDERERS, Format
from mpiarena.report.source import Rendering, rendering_of

SUBJECTS = {Whole: Whole(), TunedCollective: TunedCollective("mpich-4.0.2", "bcast", 4, ("a", "b")),
            Table: Table("pingpong", 2), Bench: Bench("bcast")}


def test_every_kind_of_run_has_exactly_one_renderer_per_format():
    listed = Counter((k, f) for e in ENTRIES for k, f in product(e.renderings, e.formats))
    assert [pair for pair, n in listed.items() if n > 1] == []
    assert set(RENDERERS) == set(product(Rendering, Format))
    assert [rendering_of(k) for k in (RunKind.PROGRAM_TUNING, RunKind.SIMULATED,
                                      RunKind.RELEASES)] == [
        Rendering.PROGRAM, Rendering.SIMULATED, Rendering.BENCHMARK]


@pytest.mark.parametrize("plot", PLOTS, ids=lambda p: f"{p.kind}-{p.of.__name__}")
def test_a_figure_kind_s_patterns_name_only_what_its_subject_has(plot):
    said = fields(SUBJECTS[plot.of], "mpich-4.0.2")
    name = plot.name.format_map(said)
    assert "{" not in name and " " not in name
    assert plot.title.format_map(said)
    if isinstance(plot.caption, str):
        assert plot.caption.format_map(said).endswith(".")


def test_figure_files_are_named_once_per_subject():
    names = Counter((p.of, p.name) for p in PLOTS)
    # the two time figures (sized and not) share a name: they never apply to one table
    assert {k: n for k, n in names.items() if n > 1} == {(Table, "{bench}-np{np}-time"): 2}
