"""A real multi-node Slurm on an emulated cluster, for any test module: `from slurm_fixture import
slurm_cluster_fixture` and ask for `slurm_cluster`. Brought up in this process (its owner, so no
other mpiarena's sweep or `cluster down --all` takes it while the tests run) and torn down
after."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from mpiarena.cluster import emulated, emulated_slurm, ssh
from mpiarena.cluster.spec import parse

SPEC = "emulated:nodes=3,link=1gbit"
HAVE_SLURM = os.geteuid() == 0 and ssh.SSHD.exists() and shutil.which("salloc") is not None \
    and all(d.exists() for d in (emulated_slurm.MUNGED, emulated_slurm.SLURMCTLD,
                                 emulated_slurm.SLURMD))


@dataclass(frozen=True)
class EmulatedSlurm:
    cluster: emulated.Emulated
    env: dict[str, str]  # this environment with SLURM_CONF pointing at the cluster's Slurm


@pytest.fixture(scope="module", name="slurm_cluster")
def slurm_cluster_fixture() -> Iterator[EmulatedSlurm]:
    """Three emulated nodes at 1 Gbit/s, slurmctld on n0 and a slurmd on each."""
    if not HAVE_SLURM:
        pytest.skip("needs root, sshd and Debian's slurmctld, slurmd, slurm-client and munge")
    # named as a run's own cluster: mpiarenas of versions that kept clusters under their own
    # MPIARENA_HOME took any namespace without state there for an orphan's, but spare a run's
    # while its process lives
    name = emulated.run_name(os.getpid())
    cluster = emulated_slurm.up(parse(SPEC), name, keep=False)
    try:
        yield EmulatedSlurm(cluster, {**os.environ,
                                      "SLURM_CONF": str(emulated_slurm.conf_path(cluster))})
    finally:
        emulated.teardown(name)


@pytest.fixture(scope="module", name="slurm_env")
def slurm_env_fixture(slurm_cluster: EmulatedSlurm) -> dict[str, str]:
    """The emulated Slurm's environment under the name of tests/slurm_local.py's fixture: a
    module that imports slurm_cluster_fixture and this instead of slurm_local's runs its tests
    on three emulated nodes."""
    return slurm_cluster.env
