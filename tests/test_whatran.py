"""What ran: every job's library configuration, transport, binding and NUMA node, recorded
from inside the ranks by real libraries (short pingpong runs)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import IMPLS, mpiarena

from mpiarena.base.records import JobRecord
from mpiarena.impls import family_of
from mpiarena.model.whatran import WhatRan
from mpiarena.store import Store

BY_FAMILY = {i.family: i for i in IMPLS}
MPICH = next((i for i in IMPLS if i.id == "mpich-4.0.2"), BY_FAMILY.get("mpich"))
MPICH5 = next((i for i in IMPLS if i.id == "mpich-5.0.2"), None)
OPENMPI = BY_FAMILY.get("openmpi")
QUICK = 'benchmarks = ["pingpong"]\nsizes = "8"\nobservations = 2\nlaunches = 2\n' \
    'init_launches = 0\n'


def _run(tmp_path: Path, impls: list[str], variants: str = "") -> tuple[list[JobRecord],
                                                                         dict[int, WhatRan]]:
    suite = tmp_path / "s.toml"
    suite.write_text(QUICK + variants)
    db = str(tmp_path / "r.db")
    done = mpiarena("run", "--impl", ",".join(impls), "--suite", str(suite), "--db", db)
    assert done.returncode == 0, done.stderr
    store = Store(Path(db))
    return store.jobs(1), store.what_ran(1)


def _first(jobs: list[JobRecord], what: dict[int, WhatRan], variant: str) -> WhatRan:
    """What the variant's library reported, read once: on its first launch only."""
    read = [j.id for j in jobs if j.variant == variant and j.id in what]
    assert len(read) == 1 and len([j for j in jobs if j.variant == variant]) == 2
    return what[read[0]]


@pytest.mark.skipif(MPICH is None or OPENMPI is None, reason="needs MPICH and Open MPI")
def test_a_control_variable_set_in_a_variants_environment_is_reported_with_its_value(tmp_path):
    assert MPICH is not None and OPENMPI is not None
    jobs, what = _run(tmp_path, [MPICH.id, OPENMPI.id], f"""
[[variant]]
impl = "{MPICH.id}"
name = "short"
env = {{ MPICH_BCAST_SHORT_MSG_SIZE = "4096" }}

[[variant]]
impl = "{OPENMPI.id}"
name = "eager"
env = {{ OMPI_MCA_btl_vader_eager_limit = "8192", OMPI_MCA_coll_tuned_bcast_algorithm = "6" }}

[[variant]]
impl = "{OPENMPI.id}"
name = "tcp"
env = {{ OMPI_MCA_btl = "self,tcp" }}

[[variant]]
impl = "{OPENMPI.id}"
name = "shipped"
env = {{ OMPI_MCA_pml = "" }}
""")
    mpich, openmpi = family_of(MPICH), family_of(OPENMPI)
    short = _first(jobs, what, f"{MPICH.id}:short")
    assert mpich.cvar_for_env("MPICH_BCAST_SHORT_MSG_SIZE") == "MPIR_CVAR_BCAST_SHORT_MSG_SIZE"
    assert short.value("MPIR_CVAR_BCAST_SHORT_MSG_SIZE") == "4096"
    assert _first(jobs, what, MPICH.id).value("MPIR_CVAR_BCAST_SHORT_MSG_SIZE") == "12288"
    # the network module it initialised, from the probe launch's MPIR_CVAR_DEBUG_SUMMARY
    assert short.transport.startswith("ch4:ucx; netmod ucx, ") and \
        "MPIR_CVAR_DEBUG_SUMMARY=1 probe" in short.transport_how
    eager = _first(jobs, what, f"{OPENMPI.id}:eager")
    assert eager.value(openmpi.cvar_for_env("OMPI_MCA_btl_vader_eager_limit") or "") == "8192"
    assert eager.value("coll_tuned_bcast_algorithm") == "binomial"  # the enum's own name
    assert _first(jobs, what, OPENMPI.id).value("btl_vader_eager_limit") == "4096"
    # the selection, from the probe launch's verbose output: shared memory unless told not to
    assert eager.transport.startswith("pml ob1, btl self, vader (requested: pml ")
    assert "probe launch" in eager.transport_how
    assert _first(jobs, what, f"{OPENMPI.id}:tcp").transport.startswith("pml ob1, btl self, tcp")
    # the core skips pml cm's start here (no RDMA device): the selection is the one the
    # library makes as shipped, which a variant's own (empty) pml gets
    plain, shipped = _first(jobs, what, OPENMPI.id), _first(jobs, what, f"{OPENMPI.id}:shipped")
    assert plain.value("pml") == "^cm" and shipped.value("pml") == ""
    assert plain.transport.split(" (")[0] == shipped.transport.split(" (")[0] == \
        "pml ob1, btl self, vader", (plain.transport, shipped.transport)
    assert eager.value("no_such_variable") is None
    assert all(c.scope != "unknown" for c in eager.cvars or ())


@pytest.mark.skipif(MPICH5 is None, reason="needs MPICH 5.0.2 (ch4:ucx and ofi)")
def test_mpichs_network_module_and_provider_are_the_ones_it_initialised(tmp_path):
    assert MPICH5 is not None
    jobs, what = _run(tmp_path, [MPICH5.id], f"""
[[variant]]
impl = "{MPICH5.id}"
name = "ofi"
env = {{ MPIR_CVAR_CH4_NETMOD = "ofi" }}
""")
    assert "; netmod ucx, " in _first(jobs, what, MPICH5.id).transport
    ofi = _first(jobs, what, f"{MPICH5.id}:ofi")
    assert "; netmod ofi, provider " in ofi.transport
    assert "provider libfabric's" not in ofi.transport  # named by the library itself
    assert ofi.value("MPIR_CVAR_CH4_NETMOD") == ""  # MPICH's MPI_T: string cvars' defaults


@pytest.mark.skipif("lam" not in BY_FAMILY or "pvm" not in BY_FAMILY,
                    reason="needs LAM and PVM")
def test_libraries_without_a_tool_interface_say_why_and_still_name_their_transport(tmp_path):
    lam, pvm = BY_FAMILY["lam"], BY_FAMILY["pvm"]
    jobs, what = _run(tmp_path, [lam.id, pvm.id, "tcp"])
    got = {v: _first(jobs, what, v) for v in (lam.id, pvm.id, "tcp")}
    assert got[lam.id] == WhatRan(None, "LAM/MPI 7.1.4 implements MPI 1.2: no MPI_T tool "
                                  "interface", "rpi usysv", "LAM_MPI_SSI_rpi in the job's "
                                  "environment")
    assert got[pvm.id].cvars is None and got[pvm.id].cvars_why == "not an MPI library"
    assert got[pvm.id].transport.startswith("through the pvmd daemons")
    assert got["tcp"].transport == "loopback TCP, TCP_NODELAY"


@pytest.mark.skipif(MPICH is None, reason="needs MPICH")
def test_binding_none_and_core_differ_in_the_recorded_affinity_and_numa_node_is_read(tmp_path):
    assert MPICH is not None
    jobs, _ = _run(tmp_path, [MPICH.id], f"""
[[variant]]
impl = "{MPICH.id}"
name = "free"
binding = "none"
""")
    bound = [r["cpus"] for j in jobs if j.variant == MPICH.id for r in j.ranks]
    free = [r["cpus"] for j in jobs if j.variant.endswith(":free") for r in j.ranks]
    assert bound and all("," not in c and "-" not in c for c in bound)  # one CPU each
    assert free and all(c == free[0] and "," in c for c in free)  # every CPU allowed
    assert {r["numa"] for j in jobs for r in j.ranks} == {0}  # this VM has one node
