"""A real Slurm on a 3-node emulated cluster: srun reaches every node by name, a run inside
salloc puts its two ranks on two nodes for MPICH and Open MPI over the shaped link, LAM under a
multi-node allocation is one line, and `cluster up --slurm` / `cluster down` leave nothing."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import IMPLS, keeping_clusters, leftovers, mpiarena
from slurm_fixture import HAVE_SLURM, EmulatedSlurm, slurm_cluster_fixture  # noqa: F401

from mpiarena.analysis.quantities import throughput
from mpiarena.base.errors import ArenaError
from mpiarena.cluster import emulated, emulated_slurm, netns
from mpiarena.store import Store
from mpiarena.store.results import load
from mpiarena.system.procs import alive, wait_until

MPI = [next(i.id for i in IMPLS if i.family == f) for f in ("mpich", "openmpi")
       if any(i.family == f for i in IMPLS)]
RUN = [sys.executable, "-c", "from mpiarena.commands import main; main()"]


def salloc(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`salloc -N 3 -n 6 mpiarena ARGS` from this machine's own namespace."""
    return subprocess.run(["salloc", "-N", "3", "-n", "6", *RUN, *args], capture_output=True,
                          text=True, env=env, timeout=300, stdin=subprocess.DEVNULL)


def links() -> list[str]:
    out = subprocess.run(["ip", "-j", "link"], capture_output=True, text=True).stdout
    return [str(link["ifname"]) for link in json.loads(out)]


@pytest.mark.skipif(not HAVE_SLURM, reason="needs root, sshd and Debian's Slurm and munge")
def test_cluster_up_slurm_env_status_and_down_leave_nothing():
    # first in the module: the name is the fixture's (see slurm_fixture), free until it is up
    name = emulated.run_name(os.getpid())
    with keeping_clusters():  # kept up: no other test session's `cluster down --all` meanwhile
        up = mpiarena("cluster", "up", "emulated:nodes=2", "--slurm", "--name", name)
        try:
            assert up.returncode == 0, up.stderr
            cluster = emulated.load(name)
            assert cluster is not None and cluster.slurm is not None
            daemons = [cluster.slurm.munged, cluster.slurm.slurmctld, *cluster.slurm.slurmd]
            env = mpiarena("cluster", "env", name)
            assert env.stdout == f"export SLURM_CONF={emulated_slurm.conf_path(cluster)}\n"
            status = mpiarena("cluster", "status")
            assert f"slurmctld {cluster.slurm.slurmctld}" in status.stdout, status.stdout
            link = netns.host_link_name(int(cluster.nodes[0].address.split(".")[2]))
            assert link in links()  # this machine's side of the cluster network
            down = mpiarena("cluster", "down", name)
            assert down.returncode == 0, down.stderr
        finally:
            emulated.teardown(name)
    assert wait_until(lambda: not any(map(alive, daemons)), within=5.0), daemons
    assert not [ns for ns in netns.existing() if ns.startswith(f"{netns.PREFIX}{name}-")]
    assert link not in links()
    assert not emulated.clusters_dir().joinpath(name).exists()


def test_srun_reaches_three_nodes_by_their_names(slurm_cluster: EmulatedSlurm):
    done = subprocess.run(["srun", "-N", "3", "-n", "3", "hostname"], capture_output=True,
                          text=True, env=slurm_cluster.env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.split()) == ["n0", "n1", "n2"]


@pytest.mark.skipif(len(MPI) < 2, reason="needs MPICH and Open MPI")
def test_two_ranks_run_on_two_nodes_across_the_link(slurm_cluster: EmulatedSlurm,
                                                   db: str):
    cluster = slurm_cluster.cluster
    before = netns.bytes_sent(cluster.ns(1), "eth0")
    # --timeout 20: MPICH 4.0.2 over UCX's TCP may hang in MPI_Finalize (rank 0 in
    # ucp_worker_progress, rank 1 in PMI's barrier); its job's cells are kept and the job is
    # killed after the timeout
    done = salloc(slurm_cluster.env, "run", "--slurm", *(f"--impl={i}" for i in MPI),
                  "--bench", "pingpong", "--np", "2", "--sizes", "1M", "--launches", "1",
                  "--observations", "3", "--timeout", "20", "--db", db)
    crossed = netns.bytes_sent(cluster.ns(1), "eth0") - before
    assert done.returncode == 0, done.stderr
    con = sqlite3.connect(db)
    jobs = con.execute("SELECT variant, topology, ranks FROM jobs").fetchall()
    assert {j[0] for j in jobs} == set(MPI)
    for variant, topology, ranks in jobs:
        assert topology.endswith(f"on {cluster.label}"), topology
        assert [r["host"] for r in sorted(json.loads(ranks), key=lambda r: r["rank"])] == \
            ["n0", "n1"], variant
    # rank 1 on n1 sent every 1 MiB reply through its shaped eth0, for both libraries: none
    # went through memory shared across the emulated nodes, faster than the link
    assert crossed > 2 * 3 * (1 << 20), crossed
    store = Store(Path(db))
    data = load(store, store.resolve("latest"))
    for variant in MPI:
        assert 0 < throughput(data, variant)[1 << 20] <= cluster.spec.rate_bits / 1e6, variant
    shown = mpiarena("show", "--config", "--db", db)
    assert all(f"{v}, 2 ranks: 0 n0, 1 n1" in shown.stdout for v in MPI), shown.stdout
    assert leftovers() == []


@pytest.mark.skipif(not any(i.family == "lam" for i in IMPLS), reason="needs LAM/MPI")
def test_lam_under_a_multi_node_allocation_is_one_line(slurm_cluster: EmulatedSlurm,
                                                       db: str):
    lam = next(i.id for i in IMPLS if i.family == "lam")
    done = salloc(slurm_cluster.env, "run", "--slurm", f"--impl={lam}", "--bench",
                  "pingpong", "--np", "2", "--sizes", "8", "--launches", "1", "--db", db)
    assert done.returncode == 2, done.stderr
    said = [ln for ln in done.stderr.splitlines() if not ln.startswith("salloc:")]
    assert said == [f"mpiarena: error: {lam}: LAM/MPI under Slurm needs ssh between the nodes "
                    "(srun starts no LAM/MPI ranks): give the allocation's nodes with --hosts "
                    "instead, or allocate one node"], done.stderr


def test_cluster_env_of_an_unknown_cluster_is_one_line():
    done = mpiarena("cluster", "env", "no-such-cluster")
    assert done.returncode == 2
    assert done.stderr.strip() == ("mpiarena: error: no emulated cluster named 'no-such-cluster' "
                                   "is up (see 'mpiarena cluster status')")


def test_missing_slurm_daemons_are_one_line(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(emulated_slurm, "SLURMD", Path("/nonexistent/slurmd"))
    with pytest.raises(ArenaError, match=r"^/nonexistent/slurmd is missing .*apt-get install "
                       "slurmd slurmctld slurm-client munge$"):
        emulated_slurm.check_can_run()
