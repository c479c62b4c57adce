"""Intel MPI: hydra's mpiexec; pinning through I_MPI_PIN. Collective algorithms: the
I_MPI_ADJUST_<COLL> ids (how many: impi_info; what they are: the developer reference), forced
per collective, and a selection written as I_MPI_ADJUST_<COLL> ranges."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping
from pathlib import Path

from ..cluster.placement import Placement
from ..model.whatran import Cvar
from . import mpich
from .base import MPI_EXT, Algorithm, Daemonless, Implementation, Launch, Rule, TuningFile

# I_MPI_ADJUST_<COLL> ids with a meaning documented for 2021 (the SHM-based ones after these
# need topology the measurement cannot show on one node)
TABLE = {
    "allreduce": ["recursive_doubling", "rabenseifner", "reduce_bcast", "topo_reduce_bcast",
                  "binomial_gather_scatter", "topo_binomial_gather_scatter", "shumilin_ring",
                  "ring", "knomial"],
    "bcast": ["binomial", "recursive_doubling", "ring", "topo_binomial",
              "topo_recursive_doubling", "topo_ring", "shumilin", "knomial"],
    "reduce": ["shumilin", "binomial", "topo_shumilin", "topo_binomial", "rabenseifner",
               "topo_rabenseifner", "knomial"],
    "allgather": ["recursive_doubling", "bruck", "ring", "topo_gatherv_bcast", "knomial"],
    "alltoall": ["bruck", "isend_irecv_waitall", "pairwise", "plum"],
}
LARGEST = 2**31 - 1  # the open end of a message size range


def _offered(impl: Implementation, coll: str) -> int | None:
    """The highest id impi_info accepts for I_MPI_ADJUST_<COLL> (None: it cannot say)."""
    try:
        out = subprocess.run([str(impl.launcher.parent / "impi_info"), "-v",
                              f"I_MPI_ADJUST_{coll.upper()}"], capture_output=True, text=True,
                             timeout=60, env=impl.environ()).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"range:\s*\d+-(\d+)", out)
    return int(m.group(1)) if m else None


def message_bytes(coll: str, size: int) -> int:
    """The message size I_MPI_ADJUST ranges compare: bytes per call (per rank for allgather
    and alltoall); mpiarena's reduce and allreduce send size bytes as ints."""
    return 4 * -(-size // 4) if coll in ("allreduce", "reduce") else size


def adjust_values(rules: list[Rule]) -> dict[str, str]:
    """I_MPI_ADJUST_<COLL>=id:lo-hi@np-np;... for every range switched away from the default
    (the library chooses as it would everywhere else)."""
    out: dict[str, list[str]] = {}
    for r in sorted(rules, key=lambda r: (r.coll, r.np, r.lo)):
        if r.algorithm is None:
            continue
        lo = message_bytes(r.coll, r.lo) if r.lo else 0
        hi = LARGEST if r.hi is None else message_bytes(r.coll, r.hi) - 1
        out.setdefault(f"I_MPI_ADJUST_{r.coll.upper()}", []).append(
            f"{r.algorithm.key}:{lo}-{hi}@{r.np}-{r.np}")
    return {k: ";".join(v) for k, v in out.items()}


class IntelMpi(Daemonless):
    name = "impi"
    title = "Intel MPI"
    order = 30
    kernel_modules = ("mod_mpi.c", *MPI_EXT, "apps.c")
    install_hint = "mpiarena install impi"
    wrapper_pattern = re.compile(r"Intel\(R\) MPI Library (?:for Linux\* OS, Version )?(\d[\w.]*)")
    # impi-devel pins impi-rt to its own version, so it goes first (it decides the version)
    pypi_distributions = ("impi-devel", "impi-rt")
    smpi_selectors = ("impi",)
    pmpi = True

    def run_env(self, prefix: Path) -> dict[str, str]:
        """Intel's mpicc has an unsubstituted prefix: it needs I_MPI_ROOT."""
        return {"I_MPI_ROOT": str(prefix)}

    def launch(self, impl: Implementation, np: int, binding: str, as_root: bool) -> Launch:
        return Launch([str(impl.launcher), "-n", str(np)],
                      {"I_MPI_PIN": "1" if binding == "core" else "0"})

    def hosts_launch(self, impl: Implementation, placement: Placement) -> Launch:
        # Intel's -hosts takes no counts: -ppn fills each node in turn, as spread() placed them
        return Launch([str(impl.launcher), "-bootstrap", "ssh", "-bootstrap-exec",
                       str(placement.rsh), "-hosts", ",".join(n.name for n in placement.used),
                       "-ppn", str(max(placement.ranks)), "-n", str(sum(placement.ranks))],
                      {"I_MPI_PIN": "0", "I_MPI_FABRICS": "shm:ofi", "FI_PROVIDER": "tcp",
                       "FI_TCP_IFACE": placement.iface, "I_MPI_HYDRA_IFACE": placement.iface},
                      binding="none")

    def slurm_launch(self, impl: Implementation, placement: Placement) -> Launch:
        """hydra finds the allocation and starts its proxies with srun, their steps overlapping
        as every srun step of mpiarena's does."""
        return Launch([str(impl.launcher), "-n", str(sum(placement.ranks))],
                      {"I_MPI_PIN": "0", "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS": "--overlap"},
                      binding="none")

    def wrapper_flags(self, impl: Implementation) -> list[str]:
        return ["-show"]

    def algorithms(self, impl: Implementation, coll: str) -> list[Algorithm]:
        names = TABLE.get(coll, [])
        most = _offered(impl, coll)
        return [Algorithm(coll, name, str(i), ((f"I_MPI_ADJUST_{coll.upper()}", str(i)),))
                for i, name in enumerate(names, start=1) if most is None or i <= most]

    def write_tuning(self, impl: Implementation, rules: list[Rule],
                     directory: Path) -> TuningFile:
        values = adjust_values(rules)
        path = (directory / f"{impl.slug}.env").resolve()
        path.write_text("# Intel MPI collective selection written by mpiarena tune; load with\n"
                        f"#   set -a; . {path}; set +a\n"
                        + "".join(f"{k}='{v}'\n" for k, v in values.items()))
        return TuningFile(path, tuple(values.items()),
                          "" if values else "the default won everywhere: nothing to set")


    def transport(self, impl: Implementation, cvars: tuple[Cvar, ...] | None, version: str,
                  env: Mapping[str, str], said: str = "") -> tuple[str, str]:
        """The fabrics and libfabric provider asked for (I_MPI_FABRICS, FI_PROVIDER), as the
        library reports them where it does, else as the job's environment sets them."""
        values = {c.name: c.value for c in cvars or ()}
        fabrics = values.get("I_MPI_FABRICS") or env.get("I_MPI_FABRICS")
        provider = values.get("I_MPI_OFI_PROVIDER") or env.get("FI_PROVIDER")
        return (f"fabrics {fabrics or 'shm:ofi (default)'}, provider "
                f"{provider or 'libfabric default'}",
                "I_MPI_FABRICS, I_MPI_OFI_PROVIDER (MPI_T, else the environment), FI_PROVIDER")

    def cvar_for_env(self, name: str) -> str | None:
        """MPICH's spellings name MPIR_CVAR_X; I_MPI_X is Intel's own setting (not checked
        against a real Intel MPI here)."""
        return name if name.startswith("I_MPI_") else mpich.cvar_for_env(name)


FAMILY = IntelMpi()
