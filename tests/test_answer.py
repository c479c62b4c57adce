"""The answer (analysis/answer.py, worded by report/summary.py): statements by the verdict rule
(a library faster than or within 5% of every other in a cell), read from a cell's verdicts
whichever way round a pair is stated, at most four lines of 100 columns and 60 words for any
number of libraries, and one 'Decided:' line. Figures are planted, launch to launch 2% apart."""

from __future__ import annotations

import itertools

import numpy as np
from test_analysis import run_data

from mpiarena.analysis.answer import Leading, SizeRange, answer, cell_lead, statements
from mpiarena.analysis.groups import comparable
from mpiarena.analysis.run import Analysis, analyse
from mpiarena.analysis.stats import Pair, Verdict, judge, judge_cells
from mpiarena.base.records import Cell
from mpiarena.report.summary import answer_lines, answer_text, scoreboard_lines

SIZES = (8, 1024, 65536, 1 << 20)


def _planted(levels: dict[tuple[str, int], dict[str, float]], launches: int = 12) -> Analysis:
    rng = np.random.default_rng(7)
    return analyse(run_data({Cell(bench, size, 2): {v: level * rng.lognormal(0, 0.02, launches)
                                                   for v, level in cell.items()}
                             for (bench, size), cell in levels.items()}, per_launch=1))


def _all_pairs(a: Analysis) -> None:
    """The cells' verdicts as every pair of variants, each stated slowest first (the other way
    round from the run's, the lower estimate first), judged as one family."""
    keys = list(a.judged)
    named = [(k, y, x) for k in keys
             for x, y in itertools.combinations(sorted(a.data.cells[k]), 2)]
    samples = {k: comparable(a.data.cells[k]) for k in keys}
    judged = judge([Pair(samples[k][x], samples[k][y]) for k, x, y in named])
    a.pairs = {}  # read from `judged` alone
    a.judged = {k: [Verdict(x, y, j) for (kk, x, y), j in zip(named, judged, strict=True)
                    if kk == k] for k in keys}


def test_one_library_faster_everywhere_is_one_line_with_its_smallest_lead() -> None:
    a = _planted({(b, s): {"fast": 1.0, "next": 1.3, "slow": 2.0}
                  for b in ("pingpong", "allreduce") for s in SIZES})
    lines = answer_text(answer(a))  # type: ignore[arg-type]
    assert len(lines) == 1, lines
    assert lines[0].startswith("Fastest MPI library here, for point-to-point and collectives: "
                               "fast, ahead of next by 1."), lines
    (only,) = statements(a, ["fast", "next", "slow"])
    assert isinstance(only, SizeRange) and only.lead is not None and only.lead.over == "next"
    assert 1.2 < only.lead.ratio < 1.35 and only.lead.ci_low <= only.lead.ratio


def _steady(a: Analysis) -> None:
    """The cells judged again as on a machine whose runs do not move (no run-to-run spread)."""
    keys = list(a.pairs)
    judged = judge_cells([comparable(a.data.cells[k]) for k in keys])
    a.pairs = dict(zip(keys, judged, strict=True))
    a.judged = {k: c.against_fastest for k, c in a.pairs.items()}


def test_two_within_the_threshold_are_no_single_fastest() -> None:
    a = _planted({("pingpong", s): {"a": 1.0, "b": 1.0, "c": 1.5} for s in SIZES[:3]},
                 launches=20)
    # where a ratio moves 4% between runs (the stated allowance), "within 5%" cannot be said
    assert statements(a, ["a", "b", "c"])[0].leading == Leading.OPEN  # type: ignore[union-attr]
    _steady(a)
    (only,) = statements(a, ["a", "b", "c"])
    assert isinstance(only, SizeRange) and only.leading == Leading.LEVEL
    assert set(only.names) == {"a", "b"}
    assert "no single fastest: " in answer_text(answer(a))[0]  # type: ignore[arg-type]


def test_a_cell_reads_the_same_from_all_pairs_stated_either_way_round() -> None:
    """A cell's verdicts may come as every pair, the lower estimate first (the run's), or the
    other way round: a pair (b, a) answers for a against b as (a, b) does."""
    levels = {("pingpong", s): {"a": 1.0 if s < 65536 else 1.5, "b": 1.25, "c": 1.6}
              for s in SIZES}
    a = _planted(levels)
    before = [cell_lead(a, k, ["a", "b", "c"]) for k in sorted(a.judged)]
    said = statements(a, ["a", "b", "c"])
    _all_pairs(a)
    after = [cell_lead(a, k, ["a", "b", "c"]) for k in sorted(a.judged)]
    assert [(c.leaders, c.level) for c in before if c] == \
        [(c.leaders, c.level) for c in after if c]
    assert [c.best for c in after if c] == ["a", "a", "b", "b"]
    assert [(s.leading, s.names, s.first, s.last) for s in said if isinstance(s, SizeRange)] == \
        [(s.leading, s.names, s.first, s.last) for s in statements(a, ["a", "b", "c"])
         if isinstance(s, SizeRange)]


def test_eight_libraries_whose_fastest_changes_with_size_answer_in_four_short_lines() -> None:
    names = [f"mpich-4.{i}.{i + 1}" for i in range(8)]
    sizes = [2 ** i for i in range(0, 21, 2)]
    levels = {(bench, s): {v: 1.0 + 0.3 * ((j + i + shift) % 8) for j, v in enumerate(names)}
              for shift, bench in enumerate(("pingpong", "sendrecv", "allreduce", "bcast"))
              for i, s in enumerate(sizes)}
    a = _planted(levels, launches=8)
    lines = answer_text(answer(a))  # type: ignore[arg-type]
    assert 1 <= len(lines) <= 4, lines
    assert all(len(x) <= 100 for x in lines), lines
    assert sum(len(x.split()) for x in lines) <= 60, lines


def test_the_run_says_decided_once() -> None:
    a = _planted({("pingpong", s): {"a": 1.0, "b": 1.3} for s in SIZES})
    said = [x for x in [*answer_lines(a), *scoreboard_lines(a)] if x.startswith("Decided:")]
    assert said == ["Decided: 4 of 4 comparisons between MPI libraries (4 faster, 0 within 5%); "
                    "0 undecided; intervals allow for reruns (stated: no earlier runs here)."], said
