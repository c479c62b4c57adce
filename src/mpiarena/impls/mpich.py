"""MPICH: hydra's mpiexec, binding with -bind-to. Collective algorithms: the
MPIR_CVAR_<COLL>_INTRA_ALGORITHM enumerations (mpivars), forced per collective, and the JSON
selection file (MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE), written over the library's own."""

from __future__ import annotations

import copy
import json
import re
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeAlias

from ..base.errors import ArenaError
from ..cluster.placement import Placement
from ..model.whatran import Cvar
from .base import MPI_EXT, Algorithm, Daemonless, Implementation, Launch, Rule, Setting, TuningFile

# UCX (Debian's MPICH) and libfabric (PyPI's) would find a peer's shared memory across network
# namespaces: only TCP on the cluster network between nodes (MPICH's own shm stays per node)
NETWORK_ONLY = {"UCX_TLS": "tcp,self", "FI_PROVIDER": "tcp"}
Tree: TypeAlias = "dict[str, Tree]"  # a JSON selection tree: every condition and choice a key
# MPIR's algorithms per collective (MPICH 4.0-5.0), for when mpivars cannot say; 'auto' is the
# default and not listed
TABLE = {
    "allreduce": ["nb", "smp", "recursive_doubling", "reduce_scatter_allgather"],
    "bcast": ["binomial", "nb", "smp", "scatter_recursive_doubling_allgather",
              "scatter_ring_allgather"],
    "reduce": ["binomial", "nb", "smp", "reduce_scatter_gather"],
    "allgather": ["brucks", "nb", "recursive_doubling", "ring"],
    "alltoall": ["brucks", "nb", "pairwise", "pairwise_sendrecv_replace", "scattered"],
}
# ch4's shared-memory layer takes these itself unless told to hand them to MPIR
POSIX = ("allreduce", "bcast", "reduce")
JSON_FILE = "MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE"
# the prefixes MPICH reads a control variable MPIR_CVAR_X under from the environment
CVAR_PREFIXES = ("MPIR_CVAR_", "MPICH_", "MPIR_PARAM_")
POSIX_FILE = "MPIR_CVAR_CH4_POSIX_COLL_SELECTION_TUNING_JSON_FILE"


def _listed(impl: Implementation, coll: str) -> list[str]:
    """The algorithm names mpivars prints for MPIR_CVAR_<COLL>_INTRA_ALGORITHM ([] when it
    prints none: MPICH 5's mpivars leaves the enumeration out). Its lines lose their line
    breaks, so a name is glued to the end of the description before it."""
    try:
        out = subprocess.run([str(impl.launcher.parent / "mpivars")], capture_output=True,
                             text=True, timeout=60, env=impl.environ()).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    line = next((x for x in out.splitlines()
                 if re.match(rf"\s*MPIR_CVAR_{coll.upper()}_INTRA_ALGORITHM\s*=", x)), "")
    pieces = re.split(r"\s+- ", line)
    names = []
    for piece in pieces[:-1]:
        token: str = re.findall(r"[a-z0-9_]*$", piece)[0]  # always matches
        known = [k for k in TABLE.get(coll, []) if token.endswith(k)]
        names.append(max(known, key=len) if known else token.removeprefix("algorithm"))
    return [n for n in names if n and n != "auto"]


def _container(coll: str, name: str) -> str:
    """The JSON selection's name for an algorithm."""
    kind = "allcomm" if name == "nb" else "intra"
    return f"MPIR_{coll.capitalize()}_{kind}_{name}"


def message_bytes(coll: str, size: int) -> int:
    """avg_msg_size as MPICH's selection computes it: bytes per call (per peer for allgather
    and alltoall); mpiarena's reduce and allreduce send size bytes as ints."""
    return 4 * -(-size // 4) if coll in ("allreduce", "reduce") else size


def library_selection(impl: Implementation, marker: bytes = b'"algorithm=MPIR_Allreduce_intra'
                      ) -> Tree:
    """A built-in selection tree read out of the library it links (MPIR's by default; ch4's
    shared-memory one with marker b'MPIDI_POSIX'): a tuning file replaces it whole, so every
    collective it leaves alone must keep the library's own branch."""
    for so in _libraries(impl):
        data = so.read_bytes()
        for m in re.finditer(rb'\{"collective=', data):
            text = data[m.start():data.index(b"\0", m.start())]
            if marker in text:
                tree: Tree = json.loads(text)
                return tree
    raise ArenaError(f"{impl.id}: cannot find its built-in selection tree in its library; "
                     "mpiarena needs it to write a tuning file that leaves other collectives "
                     "as they are")


def _libraries(impl: Implementation) -> list[Path]:
    out = subprocess.run([str(impl.wrapper), "-show"], capture_output=True, text=True,
                         env=impl.environ(), timeout=60).stdout.split()
    dirs = [Path(t[2:]) for t in out if t.startswith("-L")] + \
        [Path(p) for p in ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib")]
    names = [t[2:] for t in out if t.startswith("-l") and "mpi" in t]
    return [p for d in dirs for n in names for p in sorted(d.glob(f"lib{n}.so*"))
            if p.is_file()][:4]


def selection_json(tree: Tree, rules: list[Rule],
                   chosen: Callable[[Rule, Tree], Tree] | None = None) -> Tree:
    """The library's tree with each tuned collective's intra-communicator branch replaced: per
    rank count (comm_size below it + 1), per message size up to the next rule's, what
    `chosen(rule, own branch)` says (by default the chosen algorithm), or the library's own
    branch where the default stays; other rank counts keep the library's branch."""
    out = copy.deepcopy(tree)
    for coll in dict.fromkeys(r.coll for r in rules):
        node = out.get(f"collective={coll}")
        if node is None or "comm_type=intra" not in node:
            continue
        own = node["comm_type=intra"]
        branch: Tree = {}
        for np in sorted({r.np for r in rules if r.coll == coll}):
            mine = sorted((r for r in rules if r.coll == coll and r.np == np), key=lambda r: r.lo)
            sizes: Tree = {}
            for r in mine:
                key = "avg_msg_size=any" if r.hi is None else \
                    f"avg_msg_size<={message_bytes(coll, r.hi) - 1}"
                sizes[key] = copy.deepcopy(own) if r.algorithm is None else \
                    (chosen or _algorithm)(r, own)
            branch[f"comm_size<{np + 1}"] = sizes
        branch["comm_size=any"] = own
        node["comm_type=intra"] = branch
    return out


def _algorithm(rule: Rule, own: Tree) -> Tree:
    """The chosen algorithm; smp only on a communicator that spans nodes (its node-level step
    calls the collective again, which must not choose smp once more: MPICH aborts)."""
    assert rule.algorithm is not None
    chosen: Tree = {f"algorithm={rule.algorithm.key}": {}}
    if rule.algorithm.name != "smp":
        return chosen
    return {"comm_hierarchy=parent": chosen, "comm_hierarchy=any": copy.deepcopy(own)}


def _to_mpir(rule: Rule, own: Tree) -> Tree:
    """A ch4 shared-memory branch that never matches (the job is single-threaded): the search
    finds nothing and the collective falls back to MPIR, where the other file selects."""
    first = json.dumps(own).split('"algorithm=', 1)[1].split('"', 1)[0]
    return {"is_multi_threaded=yes": {f"algorithm={first}": {}}}



class Mpich(Daemonless):
    name = "mpich"
    title = "MPICH"
    order = 10
    kernel_modules = ("mod_mpi.c", *MPI_EXT, "apps.c")
    install_hint = "apt-get install mpich libmpich-dev  (or: mpiarena install mpich)"
    wrapper_pattern = re.compile(r"for MPICH version (\S+)")
    debian = (("/usr/bin/mpicc.mpich", "/usr/bin/mpiexec.mpich"),)
    pypi_distributions = ("mpich",)  # finds everything relative to itself
    smpi_selectors = ("mpich", "mvapich2")  # MVAPICH2 comes from MPICH
    pmpi = True
    srun_pmi = "pmi2"

    def launch(self, impl: Implementation, np: int, binding: str, as_root: bool) -> Launch:
        return Launch([str(impl.launcher), "-n", str(np), "-bind-to", binding])

    def hosts_launch(self, impl: Implementation, placement: Placement) -> Launch:
        return Launch([str(impl.launcher), "-launcher", "ssh", "-launcher-exec",
                       str(placement.rsh), "-hosts", placement.host_list(), "-n",
                       str(sum(placement.ranks)), "-bind-to", "none"],
                      self.network_env(impl, placement), binding="none")

    def network_env(self, impl: Implementation, placement: Placement) -> dict[str, str]:
        return {**NETWORK_ONLY, "UCX_NET_DEVICES": placement.iface,
                "FI_TCP_IFACE": placement.iface}

    def wrapper_flags(self, impl: Implementation) -> list[str]:
        return ["-show"]

    def algorithms(self, impl: Implementation, coll: str) -> list[Algorithm]:
        if coll not in TABLE:
            return []
        cvar = f"MPIR_CVAR_{coll.upper()}"
        handed = ((f"{cvar}_POSIX_INTRA_ALGORITHM", "mpir"),) if coll in POSIX else ()
        return [Algorithm(coll, name, _container(coll, name),
                          ((f"{cvar}_INTRA_ALGORITHM", name), *handed))
                for name in _listed(impl, coll) or TABLE[coll]]

    def write_tuning(self, impl: Implementation, rules: list[Rule],
                     directory: Path) -> TuningFile:
        path = (directory / f"{impl.slug}.json").resolve()
        path.write_text(json.dumps(selection_json(library_selection(impl), rules), indent=1))
        if not any(r.algorithm and r.coll in POSIX for r in rules):
            return TuningFile(path, ((JSON_FILE, str(path)),))
        shm = path.with_suffix(".posix.json")
        shm.write_text(json.dumps(selection_json(library_selection(impl, b"MPIDI_POSIX"),
                                                 rules, _to_mpir), indent=1))
        shm.chmod(0o644)
        return TuningFile(path, ((JSON_FILE, str(path)), (POSIX_FILE, str(shm))),
                          f"{shm.name}: ch4's shared-memory layer hands the ranges switched "
                          "away from the default to MPIR, where the first file selects")

    def selection_probe(self, impl: Implementation) -> dict[str, str]:
        """ch4 prints the network module it initialised (and libfabric's provider) at
        MPI_Init under MPIR_CVAR_DEBUG_SUMMARY."""
        return {"MPIR_CVAR_DEBUG_SUMMARY": "1"}

    def transport(self, impl: Implementation, cvars: tuple[Cvar, ...] | None, version: str,
                  env: Mapping[str, str], said: str = "") -> tuple[str, str]:
        return mpich_transport(cvars, version, env, said)

    def build_levers(self, version: str) -> list[Setting]:
        return netmod_levers(version)

    def cvar_for_env(self, name: str) -> str | None:
        return cvar_for_env(name)


def cvar_for_env(name: str) -> str | None:
    """MPIR_CVAR_X, MPICH_X and MPIR_PARAM_X all set MPIR_CVAR_X (checked on 4.0.2 and 5.0.2)."""
    prefix = next((p for p in CVAR_PREFIXES if name.startswith(p)), None)
    return None if prefix is None else "MPIR_CVAR_" + name[len(prefix):]


def netmod_levers(version: str) -> list[Setting]:
    """A ch4 build with several netmods (the index's: ch4:ofi ucx) runs any of them as
    MPIR_CVAR_CH4_NETMOD says: one setting each, valued 'netmod NAME'."""
    found = re.search(r"MPICH Device:\s*ch4:(\w+(?: \w+)*)", version)
    netmods = found.group(1).split() if found else []
    if len(netmods) < 2:
        return []
    return [Setting(f"netmod {n}", (("MPIR_CVAR_CH4_NETMOD", n),)) for n in netmods]


def _setting(name: str, values: Mapping[str, str], env: Mapping[str, str]) -> str:
    """A string control variable MPIR_CVAR_<name>: MPICH's MPI_T reports a string cvar's
    default, not what the environment set (4.0.2 and 5.0.2), so a non-empty report wins, then
    the environment under any of MPICH's prefixes; "" where unset."""
    return values.get(f"MPIR_CVAR_{name}") or next(
        (env[p + name] for p in CVAR_PREFIXES if env.get(p + name)), "")


def mpich_transport(cvars: tuple[Cvar, ...] | None, version: str, env: Mapping[str, str],
                    said: str = "") -> tuple[str, str]:
    """ch4 or ch3 from the version string's "MPICH Device"; the network module and libfabric's
    provider as the MPIR_CVAR_DEBUG_SUMMARY probe printed them, else as asked or the first
    built; the shared-memory path (ch4: posix and its eager module) as asked, else defaults."""
    found = re.search(r"MPICH Device:\s*(\S+(?: \w+)*)", version)
    device = found.group(1) if found else "unknown device"
    values = {c.name: c.value for c in cvars or ()}
    how = ["MPI_Get_library_version (MPICH Device)"]
    parts = [device]
    kind, _, built = device.partition(":")
    if kind == "ch4":
        initialised = re.search(r"==== (\w+) netmod Capability ====", said)
        provider = re.search(r"libfabric provider: (\S+)", said)
        if initialised or provider:
            netmod = initialised.group(1).lower() if initialised else "ofi"
            how.append("the MPIR_CVAR_DEBUG_SUMMARY=1 probe launch's start-up summary")
        else:
            netmod = _setting("CH4_NETMOD", values, env) or \
                f"{built.split()[0]} (default: first built)"
        fabric = provider.group(1) if provider else env.get("FI_PROVIDER") or "libfabric's"
        extra = {"ofi": f"provider {fabric}",
                 "ucx": f"UCX_TLS {env.get('UCX_TLS') or 'UCX default'}"}
        parts.append(f"netmod {netmod}, " + extra.get(netmod.split()[0], ""))
        if values.get("MPIR_CVAR_NOLOCAL") not in (None, "0"):
            parts.append("no shared memory (MPIR_CVAR_NOLOCAL)")
        else:
            shm = _setting("CH4_SHM", values, env)
            eager = _setting("CH4_SHM_POSIX_EAGER", values, env)
            parts.append(f"shm {shm or 'posix (default)'}, eager {eager or 'iqueue (default)'}")
        how.append("MPIR_CVAR_CH4_SHM, _CH4_SHM_POSIX_EAGER (and _CH4_NETMOD without the "
                   "probe) from the environment: MPICH's MPI_T reports string cvars' defaults "
                   "only; MPI_T MPIR_CVAR_NOLOCAL; UCX_TLS/FI_PROVIDER from the environment")
    elif kind == "ch3":
        netmod = _setting("NEMESIS_NETMOD", values, env)
        parts.append(f"netmod {netmod or 'tcp (default)'}")
        how.append("MPIR_CVAR_NEMESIS_NETMOD from the environment")
    return "; ".join(p.rstrip(", ") for p in parts), "; ".join(how)

FAMILY = Mpich()
