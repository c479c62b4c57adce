"""The commands the launchers build for every family found on this machine, from what the family
supplies: build only, nothing is started."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import IMPLS

from mpiarena import core_env, tags
from mpiarena.cluster.placement import Node, Placement, spread
from mpiarena.errors import ArenaError
from mpiarena.impls import Implementation, family_of
from mpiarena.impls.base import Launch
from mpiarena.launchers import launcher_for
from mpiarena.launchers.hosts import Hosts
from mpiarena.launchers.local import Local
from mpiarena.launchers.srun import Srun
from mpiarena.plan import Variant
from mpiarena.runner.launch import base_env

NODES = (Node("n0", "10.9.0.1"), Node("n1", "10.9.0.2"), Node("n2", "10.9.0.3"))
RSH, SRUN = Path("/cluster/rsh"), Path("/usr/bin/srun")
IDS = [i.id for i in IMPLS]


def hosts(nodes: tuple[Node, ...], np: int) -> Placement:
    return Placement(nodes, spread(nodes, np), RSH, ("nsenter", "-t", "1"), iface="veth9")


def slurm(nodes: tuple[Node, ...], np: int) -> Placement:
    return Placement(nodes, spread(nodes, np), Path("/bin/false"), srun=SRUN)


def built(placement: Placement | None, impl: Implementation, np: int,
          binding: str = "core") -> Launch:
    return launcher_for(placement).command(family_of(impl), impl, np, binding, False)


def most(impl: Implementation) -> int:
    """5 ranks (2, 2 and 1 on the three nodes), or as many as the family takes."""
    return min(5, family_of(impl).max_np or 5)


def test_the_placement_picks_the_launcher_and_where_daemons_start():
    assert isinstance(launcher_for(None), Local)
    assert isinstance(launcher_for(hosts(NODES, 4)), Hosts)
    assert isinstance(launcher_for(slurm(NODES, 4)), Srun)
    assert launcher_for(hosts(NODES, 4)).over_ssh() == hosts(NODES, 4)
    assert launcher_for(slurm(NODES, 4)).over_ssh() is None  # one node, else refused
    assert launcher_for(None).over_ssh() is None


@pytest.mark.parametrize("impl", IMPLS, ids=IDS)
def test_locally_the_family_binds_as_asked(impl):
    launcher, lam_x = str(impl.launcher), ",".join(
        (core_env.T0, core_env.FAULT, core_env.BIND, core_env.THREAD_LEVEL, tags.TOKEN_VAR,
         tags.RUN_VAR, "LD_PRELOAD", core_env.PROFILE_DIR))
    expected = {
        "mpich": ([launcher, "-n", "2", "-bind-to", "core"], {}),
        "openmpi": ([launcher, "-n", "2", "--bind-to", "core"], {}),
        "impi": ([launcher, "-n", "2"], {"I_MPI_PIN": "1"}),
        "lam": ([launcher, "-np", "2", "-x", lam_x],
                {"LAM_MPI_SSI_rpi": "usysv", core_env.BIND: "core"}),
        "pvm": ([], {core_env.NP: "2", core_env.BIND: "core"}),
        "tcp": ([], {core_env.NP: "2", core_env.BIND: "core"}),
    }
    if impl.family not in expected:
        pytest.skip(f"no expectation written for {impl.family}")
    launch = built(None, impl, 2, "core")
    assert (launch.argv, launch.env, launch.binding) == (*expected[impl.family], None)
    assert built(None, impl, 2, "none") != launch  # the binding asked for reaches the ranks


@pytest.mark.parametrize("impl", IMPLS, ids=IDS)
def test_hosts_hand_the_family_its_nodes_and_remote_shell(impl):
    np, placement = most(impl), hosts(NODES, most(impl))
    launch = built(placement, impl, np)
    assert launch == family_of(impl).hosts_launch(impl, placement)
    assert launch.binding == "none"
    assert str(SRUN) not in launch.argv
    launcher, rsh = str(impl.launcher), str(RSH)
    if impl.family == "mpich":
        assert launch.argv == [launcher, "-launcher", "ssh", "-launcher-exec", rsh, "-hosts",
                               "n0:2,n1:2,n2:1", "-n", "5", "-bind-to", "none"]
        assert launch.env["UCX_NET_DEVICES"] == launch.env["FI_TCP_IFACE"] == "veth9"
    elif impl.family == "openmpi":
        assert launch.argv[:7] == [launcher, "-n", "5", "--host", "n0:2,n1:2,n2:1",
                                   "--bind-to", "none"]
        assert rsh in launch.env.values()
        assert launch.env["OMPI_MCA_btl_tcp_if_include"] == "veth9"
    elif impl.family == "impi":
        assert launch.argv == [launcher, "-bootstrap", "ssh", "-bootstrap-exec", rsh, "-hosts",
                               "n0,n1,n2", "-ppn", "2", "-n", "5"]
        assert launch.env["I_MPI_HYDRA_IFACE"] == "veth9"
    elif impl.family == "lam":  # lamboot reaches the nodes (impls/lam.py's LamUniverse)
        assert launch.argv[:3] == [launcher, "-np", "5"]
        assert launch.env[core_env.BIND] == "none"
    elif impl.family == "pvm":  # task r spawned on the r-th host
        assert launch.argv == []
        assert launch.env[core_env.PVM_HOSTS] == "n0,n0,n1,n1,n2"
        assert launch.env[core_env.NP] == "5"
    elif impl.family == "tcp":  # rank 0 listens on the head, rank 1 started through the agent
        assert launch.argv == []
        assert (launch.env[core_env.TCP_BIND], launch.env[core_env.TCP_PEER],
                launch.env[core_env.TCP_RSH]) == ("10.9.0.1", "n1", rsh)
    else:
        pytest.skip(f"no expectation written for {impl.family}")


@pytest.mark.parametrize("impl", IMPLS, ids=IDS)
def test_srun_starts_ranks_with_the_pmi_the_family_names(impl):
    family = family_of(impl)
    pmi = {"mpich": "pmi2", "openmpi": "pmix"}.get(impl.family)
    assert family.srun_pmi == pmi
    np, one, many = most(impl), slurm(NODES[:1], 2), slurm(NODES, most(impl))
    if pmi:
        launch = built(many, impl, np)
        assert launch.argv == [str(SRUN), "-n", str(np), f"--mpi={pmi}", "--input=0",
                               "--kill-on-bad-exit=1", "--cpu-bind=none", "--overlap"]
        assert launch.env == {} and launch.binding == "none"
    elif impl.family == "impi":  # hydra finds the allocation and starts its proxies with srun
        launch = built(many, impl, np)
        assert launch.argv == [str(impl.launcher), "-n", "5"] and launch.binding == "none"
        assert launch.env["I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS"] == "--overlap"
    else:  # started by its own daemons or a fork: as on this machine, unbound, one node only
        assert family.slurm_launch(impl, many) is None
        assert built(one, impl, 2, "core") == family.launch(impl, 2, "none", as_root=False)
        with pytest.raises(ArenaError, match=f"^{family.title} under Slurm needs ssh between"):
            built(many, impl, np)


@pytest.mark.parametrize("impl", IMPLS, ids=IDS)
def test_every_family_gets_an_empty_fault_unless_one_is_planted(impl, monkeypatch):
    monkeypatch.delenv(core_env.FAULT, raising=False)
    for placement in (None, hosts(NODES, 2)):
        plain = Variant(impl.id, impl)
        planted = Variant(impl.id, impl, env=((core_env.FAULT, "crash:bcast"),))
        assert base_env(plain, 2, False, "run", placement)[core_env.FAULT] == ""
        assert base_env(planted, 2, False, "run", placement)[core_env.FAULT] == "crash:bcast"
    monkeypatch.setenv(core_env.FAULT, "corrupt")  # as `ARENA_FAULT=corrupt mpiarena run`
    assert base_env(Variant(impl.id, impl), 2, False, "run")[core_env.FAULT] == "corrupt"
