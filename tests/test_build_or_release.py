"""Build or release in simulation: the second build under each lever beside the first, judged
by the verdict rule: a lever that makes them alike (the build), none (the release), one
undecided (not separable here), a cell that does not differ (left out)."""

from __future__ import annotations

import math

import numpy as np

from mpiarena.analysis.build_or_release import Follows, attribute
from mpiarena.base.records import Cell
from mpiarena.impls.mpich import netmod_levers

FIRST, SECOND, UCX, OFI = "mpich-4.0.2", "mpich-4.0.3", "mpich-4.0.3:netmod-ucx", \
    "mpich-4.0.3:netmod-ofi"


def sample(level: float, rng: np.random.Generator, noise: float = 0.02, launches: int = 10):
    return [np.array([level * math.exp(rng.normal(0, noise))]) for _ in range(launches)]


def test_what_a_difference_between_two_builds_follows():
    rng = np.random.default_rng(3)
    build, release, unsure, same = (Cell("pingpong", s, 2) for s in (8, 64, 512, 4096))
    samples = {
        build: {FIRST: sample(1.0, rng), SECOND: sample(1.6, rng), OFI: sample(1.6, rng),
                UCX: sample(1.0, rng)},
        release: {FIRST: sample(1.0, rng), SECOND: sample(2.0, rng), OFI: sample(2.0, rng),
                  UCX: sample(1.8, rng)},
        unsure: {FIRST: sample(1.0, rng), SECOND: sample(2.0, rng), OFI: sample(2.0, rng),
                 UCX: sample(1.05, rng, noise=0.5, launches=4)},
        same: {FIRST: sample(1.0, rng), SECOND: sample(1.0, rng), OFI: sample(1.0, rng),
               UCX: sample(1.0, rng)}}
    found = {a.key: a for a in attribute(samples, FIRST, SECOND, [OFI, UCX])}
    assert set(found) == {build, release, unsure}
    assert found[build].follows == Follows.BUILD and found[build].undone_by == UCX
    assert found[release].follows == Follows.RELEASE and found[release].undone_by is None
    assert found[unsure].follows == Follows.NOT_SEPARABLE
    assert 1.5 < found[build].plain.ratio < 1.7


def test_mpich_levers_are_the_netmods_a_build_has_more_than_one_of():
    index = "MPICH Version: 4.0.3\nMPICH Device: ch4:ofi ucx\nMPICH configure: ..."
    assert [(s.value, s.env) for s in netmod_levers(index)] == [
        ("netmod ofi", (("MPIR_CVAR_CH4_NETMOD", "ofi"),)),
        ("netmod ucx", (("MPIR_CVAR_CH4_NETMOD", "ucx"),))]
    assert netmod_levers("MPICH Version: 4.0.2\nMPICH Device: ch4:ucx\n") == []
    assert netmod_levers("MPICH Version: 3.4.3\nMPICH Device: ch3:nemesis\n") == []
