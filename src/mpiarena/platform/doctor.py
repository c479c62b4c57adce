"""What is installed and usable, what is missing, and the exact command that fixes it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, replace
from pathlib import Path

from ..base import paths, tools, users
from ..base.errors import ArenaError
from ..cluster import smpi
from ..impls import Found, discover, families
from .build import lacks_compiler


@dataclass(frozen=True)
class Check:
    """One part of what mpiarena can use: whether it works, how, the fix, and what it gives."""

    name: str
    ok: bool
    detail: str
    fix: str = ""
    gives: str = ""  # what a user can do with it (doctor says so of a missing part)


GIVES_COMPILER = "the measurement core, built against each library: every comparison"
GIVES_LIBRARY = "one more library in every comparison"
GIVES_RANK_USER = "ranks run as an unprivileged user, not as root"
GIVES_EMULATION = "emulated clusters: run --cluster emulated:..., cluster up"
GIVES_SLURM = "runs through Slurm: run --slurm, run --sbatch"
GIVES_SIMGRID = "mpiarena simulate: rank counts beyond this machine"


def _quiet(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          timeout=30)


def emulation() -> Check:
    """Can this machine emulate a cluster: root, network namespaces and the tbf qdisc?"""
    if os.geteuid() != 0:
        return Check("emulated cluster", False, "needs root (network namespaces)",
                     "run mpiarena as root, or use --hosts FILE")
    ip = shutil.which("ip")
    tc = shutil.which("tc")
    if not ip or not tc:
        return Check("emulated cluster", False, "ip/tc missing", "apt-get install iproute2")
    ns = f"mpiarena-doctor-{os.getpid()}"
    try:
        made = _quiet([ip, "netns", "add", ns])
        if made.returncode != 0:
            return Check("emulated cluster", False, f"cannot create a network namespace: "
                         f"{made.stderr.strip()}", "run on a host that allows CAP_NET_ADMIN")
        _quiet([ip, "-n", ns, "link", "set", "lo", "up"])
        tbf = _quiet([tc, "-n", ns, "qdisc", "add", "dev", "lo", "root", "tbf", "rate",
                      "100mbit", "burst", "4kb", "latency", "50ms"])
        if tbf.returncode != 0:
            return Check("emulated cluster", False, f"no tbf qdisc: {tbf.stderr.strip()}",
                         "load the sch_tbf kernel module")
        if not Path("/usr/sbin/sshd").exists():
            return Check("emulated cluster", False, "no sshd: each emulated node runs one, so "
                         "every launcher (LAM, PVM included) reaches it as the rank user",
                         "apt-get install openssh-server")
        netem = _quiet([tc, "-n", ns, "qdisc", "replace", "dev", "lo", "root", "netem",
                        "delay", "1ms"]).returncode == 0
        return Check("emulated cluster", True, "root, network namespaces, tbf and sshd work; "
                     + ("netem present" if netem else "no netem: links are shaped in rate and "
                        "MTU, latency is this machine's own"))
    finally:
        _quiet([ip, "netns", "delete", ns])


def checks() -> list[Check]:
    out: list[Check] = []
    cc = tools.compiler()
    out.append(Check("C compiler", cc is not None, str(cc or "none"),
                     "" if cc else f"apt-get install {tools.TOOLS['cc'].package}",
                     GIVES_COMPILER))
    found: list[Found] = discover({}, paths.impls_dir(), with_modules=True)
    # a family found but unusable (its row says why) is not also "not installed"
    found_families = {f.impl.family if f.impl else f.name.split("-")[0] for f in found}
    for f in found:
        if f.impl and lacks_compiler(f.impl):
            out.append(Check(f.name, False, "no C compiler to build its core with",
                             f"apt-get install {tools.TOOLS['cc'].package}", GIVES_LIBRARY))
        elif f.impl:
            out.append(Check(f.name, True, f"{f.impl.origin}: {f.impl.wrapper}, {f.impl.launcher}",
                             gives=GIVES_LIBRARY))
        else:
            out.append(Check(f.name, False, f.problem or "", f.fix or "", GIVES_LIBRARY))
    for family in families():
        if family.name not in found_families:
            out.append(Check(family.name, False, "not installed", family.install_hint,
                             GIVES_LIBRARY))
    if os.geteuid() == 0:
        user = users.lookup()
        out.append(Check("rank user", user is not None,
                         f"ranks run as '{users.name()}'" if user else
                         f"'{users.name()}' does not exist: ranks would run as root",
                         "" if user else "mpiarena setup", GIVES_RANK_USER))
    out.append(replace(emulation(), gives=GIVES_EMULATION))
    out.append(replace(slurm(), gives=GIVES_SLURM))
    out.append(replace(simgrid(), gives=GIVES_SIMGRID))
    return out


def slurm() -> Check:
    """Can runs go through Slurm, which families can, and whether its MPI plugins are there."""
    if not shutil.which("srun"):
        return Check("slurm", False, "srun not found: --slurm unavailable",
                     "apt-get install slurm-client (and a Slurm cluster to submit to)")
    inside = "inside allocation " + os.environ["SLURM_JOB_ID"] if "SLURM_JOB_ID" in \
        os.environ else "not inside an allocation now"
    how = ("MPICH starts with srun --mpi=pmi2, Open MPI with --mpi=pmix, Intel MPI through its "
           "hydra; LAM, PVM and raw TCP on one-node allocations only (more need ssh: --hosts)")
    plugins = _mpi_plugins()
    if plugins is None:
        return Check("slurm", True, f"srun found, {inside}, no Slurm configuration reachable "
                     f"now (srun --mpi=list failed); {how}",
                     "set SLURM_CONF, or run where the cluster's configuration is")
    missing = sorted({"pmi2", "pmix"} - plugins)
    listed = f"MPI plugins {', '.join(sorted(plugins))}"
    if missing:
        return Check("slurm", False, f"srun found, {inside}; {listed}, no {' or '.join(missing)}: "
                     "under srun MPICH needs pmi2 and Open MPI pmix",
                     "ask the site for Slurm's pmi2 and pmix plugins, or run with --hosts")
    return Check("slurm", True, f"srun found, {inside}; {listed}; {how}")


def _mpi_plugins() -> set[str] | None:
    """The MPI plugins `srun --mpi=list` names, versions dropped ('pmix_v3' is pmix); None where
    srun reaches no Slurm configuration. Slurm 22 prints them tab-indented under 'MPI plugin
    types are...', older releases each on a line of its own after 'srun: MPI types are...'."""
    try:  # srun retries a configuration file it cannot read for a minute
        done = subprocess.run(["srun", "--mpi=list"], capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = [ln.removeprefix("srun:").strip() for ln in (done.stdout + done.stderr).splitlines()]
    start = next((i for i, ln in enumerate(lines) if re.match(r"MPI (plugin )?types", ln)), None)
    if done.returncode != 0 or start is None:
        return None
    return {re.sub(r"_v\d+$", "", ln).removeprefix("mpi/") for ln in lines[start + 1:]
            if ln and " " not in ln}


def simgrid() -> Check:
    """Can `mpiarena simulate` run: SimGrid's smpicc and smpirun."""
    try:
        found = smpi.find()
    except ArenaError as e:
        return Check("simgrid", False, f"{str(e).partition('; ')[0]}: simulate unavailable",
                     smpi.INSTALL)
    return Check("simgrid", True, f"{found.title}: {found.smpicc}, {found.smpirun}; "
                 "mpiarena simulate runs")


def data_location() -> Path:
    return paths.data_dir()
