"""`mpiarena releases`' words over a bisected series built by hand: the changes first, ranges of
sizes joined, the upgrade line, where the index skips releases, releases not measured between
two, build against release, spread changes with each step's size."""

from __future__ import annotations

from mpiarena.analysis.bisection import Bisection, Placed, ReleaseChange, SpanStep
from mpiarena.analysis.comparison import Comparison
from mpiarena.analysis.verdicts import Judgement
from mpiarena.base.records import Cell
from mpiarena.impls.releases import Release, folded
from mpiarena.report.releases import lines
from mpiarena.runner.releases import BisectedSeries, Member

OPENMPI = folded(["5.0.11", "5.0.10", "5.0.9", "5.0.8", "4.1.8", "4.1.7"])


def judged(ratio: float, outcome: Judgement = Judgement.ABOVE) -> Comparison:
    return Comparison(ratio, ratio * 0.9, ratio * 1.1, 0.001, outcome, 10, 10, 0)


def series(names: list[str], origins: list[str] | None = None) -> BisectedSeries:
    origins = origins or ["index"] * len(names)
    return BisectedSeries([Member(n, o, Release.parse(n)) for n, o in zip(names, origins,
                                                                          strict=True)])


def test_located_changes_first_with_the_index_gap_and_the_upgrade_line():
    s = series(["4.1.7", "4.1.8", "5.0.8", "5.0.9"])
    ping = [Cell("pingpong", size, 2) for size in (8, 64, 512)]
    s.bisection = Bisection(4, ends={k: judged(1.4) for k in ping} | {
        Cell("barrier", 0, 2): judged(1.0, Judgement.SAME),
        Cell("bcast", 8, 2): judged(0.7, Judgement.BELOW)},
        steps=[(0, 3), (0, 1, 3), (1, 2, 3)])
    s.bisection.changes = [ReleaseChange(k, 1, 2, Judgement.ABOVE, judged(r), Placed.LOCATED, 2)
                           for k, r in zip(ping, (1.4, 1.5, 1.3), strict=True)]
    s.bisection.changes.append(ReleaseChange(Cell("bcast", 8, 2), 0, 1, Judgement.BELOW,
                                             judged(0.5, Judgement.BELOW), Placed.LOCATED, 1))
    s.runs, s.variant_of = [None] * 3, [{}] * 3
    out = lines(s, OPENMPI)
    assert out[:3] == [
        "pingpong 8 B-512 B (2 ranks): 1.30-1.50x slower from 5.0.8 on (against 4.1.8, 95% CI "
        "1.17-1.65)",
        "bcast 8 B (2 ranks): 2.00x faster from 4.1.8 on (against 4.1.7, 95% CI 1.82-2.22)",
        "4.1.7 -> 5.0.9: 3 cells slower, 1 faster, 1 within 5%, 0 undecided"]
    assert "  the index has no 5.0.0-5.0.7: the change lies in one of those or in 5.0.8" in out
    assert "measured 4 of 4 releases in 3 steps (2 changes located), stored as runs none" in out


def test_series_neighbours_the_index_separates_and_a_build_against_a_release():
    s = series(["4.0.2", "4.0.3", "5.0.2"], ["debian", "index", "index"])
    key = Cell("pingpong", 8, 2)
    s.bisection = Bisection(3, ends={key: judged(6.0)}, steps=[(0, 2), (0, 1, 2)])
    s.bisection.changes = [ReleaseChange(key, 0, 1, Judgement.ABOVE, judged(1.6), Placed.LOCATED,
                                         1),
                           ReleaseChange(key, 1, 2, Judgement.ABOVE, judged(3.8), Placed.LOCATED,
                                         1)]
    s.runs, s.variant_of = [None] * 2, [{}] * 2
    index = folded(["5.0.2", "4.3.2", "4.0.3"])
    out = lines(s, index)
    assert out[0] == ("pingpong 8 B (2 ranks): 1.60x slower from 4.0.3 on (against 4.0.2 "
                      "(debian), 95% CI 1.44-1.76)")
    assert out[1].startswith("pingpong 8 B (2 ranks): 3.80x slower between 4.0.3 and 5.0.2 (")
    assert out[1].endswith("neighbours in the series but not on the index")
    assert "  not measured: the index's 4.3.2 between them (bisect them with --from 4.0.3 " \
        "--to 5.0.2)" in out
    assert any("debian's build against the index's" in x and "not separable here" in x
               for x in out)
    assert "(1 changes located)" in out[-1]


def test_spread_unplaced_and_no_change():
    s = series(["4.1.7", "4.1.8", "5.0.8"])
    key = Cell("allreduce", 64, 2)
    s.bisection = Bisection(3, ends={key: judged(1.2)}, steps=[(0, 2), (0, 1, 2)])
    s.bisection.changes = [ReleaseChange(
        key, 0, 2, Judgement.ABOVE, judged(1.2), Placed.SPREAD, 0,
        (SpanStep(0, 1, judged(1.09, Judgement.OPEN)),
         SpanStep(1, 2, judged(1.1, Judgement.OPEN))))]
    s.runs, s.variant_of = [None] * 2, [{}] * 2
    out = lines(s, OPENMPI)
    assert out[0] == ("allreduce 64 B (2 ranks): 1.20x slower between 4.1.7 and 5.0.8, spread: no "
                      "pair of neighbours carries it (4.1.7 -> 4.1.8 1.09x (open); 4.1.8 -> 5.0.8 "
                      "1.10x (open))")
    s.bisection.changes = [ReleaseChange(key, 0, 2, Judgement.ABOVE, judged(1.2),
                                         Placed.UNPLACED, 0)]
    assert lines(s, OPENMPI)[0] == (
        "allreduce 64 B (2 ranks): 1.20x slower between 4.1.7 and 5.0.8, not placed within them "
        "(no half could be judged: the release between failed there or could not be had): more "
        "launches (--launches, --budget) would place it")
    s.bisection = Bisection(3, ends={key: judged(1.0, Judgement.SAME)}, steps=[(0, 2)])
    assert lines(s, OPENMPI)[0] == "no change decided between 4.1.7 and 5.0.8 in any cell: " \
        "nothing to bisect"
