"""The fingerprint's decision on observations drawn as a real tuning run's fall: a default
forced to an algorithm is never told apart from it, and a far slower algorithm always is, in
every seeded run. (tests/test_fingerprint.py runs a real tune and asserts what a real run always
shows: this is where the decision is checked, at the spread that run measured.)"""

from __future__ import annotations

import numpy as np

from mpiarena.analysis.fingerprint import fingerprints, tuned_of
from mpiarena.analysis.verdicts import Speed
from mpiarena.base.records import Cell, RunRecord, RunSettings
from mpiarena.store.results import Group, RunData

IMPL = "mpich-4.0.2"
FORCED = {f"{IMPL}:binomial": "binomial", f"{IMPL}:scatter": "scatter_ring_allgather"}
# MPICH's bcast of 64 KiB to 1 MiB at 2 ranks on this machine (tests/test_fingerprint.py's
# runs): launch levels 10-25% apart, a few % within a launch, scatter_ring_allgather 1.4-2.2x
# binomial's time
LAUNCH_SPREAD, WITHIN, SLOWER = 0.25, 0.03, 1.4
LAUNCHES, PER_LAUNCH = 40, 5


def _group(rng: np.random.Generator, level: float) -> Group:
    launches = level * rng.lognormal(0.0, LAUNCH_SPREAD, LAUNCHES)
    values = [float(x) for m in launches for x in m * rng.lognormal(0.0, WITHIN, PER_LAUNCH)]
    return Group(values=values, launches=[i // PER_LAUNCH for i in range(len(values))])


def _tuning_run(seed: int) -> RunData:
    """A tune of bcast at 1 MiB: the default forced to binomial, binomial, and one 1.4x
    slower."""
    rng = np.random.default_rng(seed)
    levels = {IMPL: 1.0, f"{IMPL}:binomial": 1.0, f"{IMPL}:scatter": SLOWER}
    cell = {v: _group(rng, 1e-4 * level) for v, level in levels.items()}
    tuning = {v: {"impl": IMPL, "coll": "bcast", "algorithm": a} for v, a in FORCED.items()}
    run = RunRecord(id=1, started="", finished=None, status="complete", suite="", command="",
                    seed=0, version="", machine={"cores": 2}, settings={"tuning": tuning},
                    pid=0, host="", note=None)
    return RunData(run_id=1, run=run, status="complete", implementations=[],
                   variants=sorted(levels), jobs=[], settings=RunSettings.read(run.settings),
                   cells={Cell("bcast", 2**20, 2): cell})


def test_a_default_forced_to_binomial_is_never_told_apart_from_it_and_scatter_always_is():
    for seed in range(100):
        data = _tuning_run(seed)
        (f,) = fingerprints(data, tuned_of(data))
        assert f.fastest == "binomial", (seed, f)
        assert "binomial" in f.like + f.open, (seed, f)
        (slow,) = f.unlike
        assert slow.algorithm == "scatter_ring_allgather" and slow.speed == Speed.FASTER, (seed, f)
