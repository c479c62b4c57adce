"""LogGP as Netgauge measures it: the derivation on planted round trips, and a real run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import IMPLS, mpiarena

from mpiarena.analysis.loggp import ParameterFigure, fit_gap, loggp
from mpiarena.base.records import Cell, RunRecord, RunSettings
from mpiarena.model.benchmarks import BENCHMARKS
from mpiarena.store import Store
from mpiarena.store.results import Group, RunData, load

N = 10
L, O_S, O_R = 0.4e-6, 0.2e-6, 0.15e-6
# two regimes of g(s) = g + (s - 1) G: eager copies to 8 KiB, then a costlier fixed part and
# a cheaper byte (the planted protocol switch)
REGIMES = ((0.2e-6, 0.2e-9), (2.0e-6, 0.05e-9))
SPLIT = 16384
SIZES = [1, 64, 256, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288,
         1048576]


def truth(size: int) -> tuple[float, float]:
    """The planted g and G at size."""
    return REGIMES[size >= SPLIT]


def observation(size: int, level: float, rng: np.random.Generator) -> dict[str, list[float]]:
    """The extras of one loggp observation under LogGP with the planted parameters: each round
    trip scaled by the launch's level and 1% noise of its own."""
    g, big_g = truth(size)
    gap = g + (size - 1) * big_g
    prtt1 = 2 * (O_S + L + (size - 1) * big_g + O_R)
    prtts = {"prtt1": prtt1, "prttn": prtt1 + (N - 1) * gap,
             "prttd": prtt1 + (N - 1) * (prtt1 + O_S)}
    x = {k: [v * level * rng.lognormal(0, 0.01), 0.0] for k, v in prtts.items()}
    return {**x, "delay": [x["prtt1"][0]] * 2, "o_s": [O_S * level * rng.lognormal(0, 0.01), 0],
            "o_r": [0, O_R * level * rng.lognormal(0, 0.01)], "prtt_n": [N, N]}


def planted(launches: int = 12, per_launch: int = 5) -> RunData:
    rng = np.random.default_rng(28)
    levels = rng.lognormal(0, 0.03, launches)  # each launch sets its own level
    cells = {}
    for size in SIZES:
        extras = [observation(size, levels[i], rng) for i in range(launches)
                  for _ in range(per_launch)]
        values = [BENCHMARKS["loggp"].observation([0, 0], x) for x in extras]
        cells[Cell("loggp", size, 2)] = {"v": Group(values=values, extras=extras, launches=[
            i for i in range(launches) for _ in range(per_launch)])}
    run = RunRecord(id=1, started="", finished=None, status="complete", suite="", command="",
                    seed=0, version="", machine={"cores": 2}, settings={"window": 64}, pid=0,
                    host="", note=None)
    return RunData(run_id=1, run=run, status="complete", implementations=[], variants=["v"],
                   jobs=[], settings=RunSettings.read(run.settings), cells=cells)


def holds(f: ParameterFigure, value: float, slack: float = 0.0) -> bool:
    return f.low * (1 - slack) <= value <= f.high * (1 + slack)


def test_planted_parameters_come_back_within_their_intervals():
    m = loggp(planted())["v"]
    assert m.n == N
    # the launch levels (3%) set the intervals: the truth (level 1) lies inside them
    assert holds(m.L, L + O_S + O_R)  # Netgauge's L: half PRTT(1,0,1)
    for p in m.points:
        g, big_g = truth(p.size)
        assert holds(p.g, g + (p.size - 1) * big_g), p
        assert holds(p.o_s, O_S) and holds(p.o_r, O_R), p
        if p.size <= 1024:  # a difference of round trips, noisy where they are long
            assert holds(p.o_s_prtt, O_S, 0.05), p
    # g(s) splits where the regimes meet, and each range recovers its g and G
    assert [r.sizes[0] for r in m.ranges] == [1, SPLIT]
    for r in m.ranges:
        g, big_g = truth(r.sizes[0])
        assert holds(r.G, big_g) and holds(r.g, g), r
        assert r.max_residual < 0.05


def test_one_line_over_both_regimes_is_called_a_bad_fit():
    gaps = [sum(x * y for x, y in zip(truth(s), (1, s - 1), strict=True)) for s in SIZES]
    g, big_g = fit_gap(SIZES, gaps)
    worst = max(abs(y / (g + (s - 1) * big_g) - 1) for s, y in zip(SIZES, gaps, strict=True))
    assert worst > 0.3  # what the split above avoids


@pytest.mark.skipif(not any(i.id == "mpich-4.0.2" for i in IMPLS),
                    reason="Debian's MPICH 4.0.2 is not installed")
def test_real_run_stores_the_round_trips_and_gives_sane_parameters(tmp_path: Path):
    db = tmp_path / "loggp.db"
    done = mpiarena("run", "--impl", "mpich-4.0.2", "--bench", "loggp,pingpong", "--np", "2",
                    "--sizes", "1,1K,64K,1M", "--launches", "3", "--observations", "6",
                    "--db", str(db), timeout=120)
    assert done.returncode == 0, done.stderr
    store = Store(db)
    try:
        data = load(store, 1)
    finally:
        store.close()
    extras = data.cells[Cell("loggp", 1, 2)]["mpich-4.0.2"].extras
    assert {"prtt1", "prttn", "prttd", "delay", "o_s", "o_r", "prtt_n"} <= set(extras[0])
    m = loggp(data)["mpich-4.0.2"]
    for p in m.points:
        figures = (p.half_rtt, p.o_s, p.o_r, p.g)
        assert all(f.value > 0 for f in figures), p
        if p.size <= 1024:  # LogGP: PRTT(1,0,s) / 2 = o_s + L + (s - 1) G + o_r
            assert p.o_s.value < p.half_rtt.value and p.o_r.value < p.half_rtt.value, p
    # G against the cost per byte of the same run's pingpong between its two largest sizes,
    # from each cell's fastest observation (another job's load only ever adds time)
    pingpong = {s: min(data.cells[Cell("pingpong", s, 2)]["mpich-4.0.2"].values)
                for s in (64 << 10, 1 << 20)}
    per_byte = (pingpong[1 << 20] - pingpong[64 << 10]) / (960 << 10)
    assert per_byte / 3 < m.ranges[-1].G.value < 3 * per_byte, (m.ranges, per_byte)
