"""A real Slurm on an emulated cluster (`cluster up ... --slurm`): one munged in the switch's
namespace (its socket in the cluster's directory, which every node sees), slurmctld on the head
node and a slurmd on every node, each in its node's network, UTS and mount namespaces, named by
the node's hostname and reached at its address. A link from this machine's own namespace to the
switch lets salloc, srun and sbatch run here with SLURM_CONF alone. Every daemon runs in one of
the cluster's namespaces, so tearing the cluster down (or sweeping it) stops them all."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from ..base.errors import ArenaError
from ..base.machine import cores
from ..system.procs import alive
from . import emulated, netns
from .emulated import Emulated, SlurmDaemons
from .spec import EmulatedSpec, parse

MUNGED, SLURMCTLD, SLURMD = (Path("/usr/sbin/munged"), Path("/usr/sbin/slurmctld"),
                             Path("/usr/sbin/slurmd"))
CLIENTS = ("srun", "sinfo", "salloc", "sbatch", "scontrol")
HOST = 254  # this machine's address on a cluster's subnet ends in .254
MARK = "# mpiarena emulated cluster "  # the conf's first line: the cluster's name and spec
READY = 30.0  # seconds the nodes have to report idle


def conf_path(c: Emulated) -> Path:
    return c.dir / "slurm" / "slurm.conf"


def check_can_run() -> None:
    """One clear line if Debian's Slurm daemons or clients are missing."""
    for daemon in (MUNGED, SLURMCTLD, SLURMD):
        if not daemon.exists():
            raise ArenaError(f"{daemon} is missing (--slurm runs Debian's Slurm daemons): "
                             "apt-get install slurmd slurmctld slurm-client munge")
    if missing := [c for c in CLIENTS if not shutil.which(c)]:
        raise ArenaError(f"{missing[0]} is not on PATH: apt-get install slurm-client")


def up(spec: EmulatedSpec, name: str, keep: bool = True) -> Emulated:
    """Bring up the cluster and its Slurm, kept up (or, without keep, this process's: a sweep
    takes it once this process is gone); on any failure nothing is left."""
    check_can_run()
    cluster = emulated.up(spec, name)  # this process owns it (a sweep takes it if we die)...
    try:
        _start(cluster)
        if keep:  # ...until its Slurm answers: then it is kept up
            cluster.owner = None
            cluster.save()
    except BaseException:
        emulated.teardown(name)
        raise
    return cluster


def _start(c: Emulated) -> None:
    root = c.dir / "slurm"
    for sub in ("state", "log", "munge", *(f"spool/{n.name}" for n in c.nodes)):
        (root / sub).mkdir(mode=0o700, parents=True)
    key = root / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    prefix = c.nodes[0].address.rsplit(".", 1)[0]
    netns.host_link(netns.host_link_name(int(prefix.rsplit(".", 1)[1])), c.ns(None),
                    f"{prefix}.{HOST}")
    conf = conf_path(c)
    conf.write_text(conf_text(c, root))
    conf.chmod(0o644)
    env = {**os.environ, "SLURM_CONF": str(conf)}
    munge = root / "munge"
    munged = _daemon(["nsenter", f"--net=/run/netns/{c.ns(None)}", str(MUNGED), "-F",
                      f"--socket={munge / 'munge.socket'}", f"--key-file={key}",
                      f"--pid-file={munge / 'munged.pid'}", f"--seed-file={munge / 'seed'}",
                      f"--log-file={munge / 'munged.log'}", "--force"], root / "log" / "munged",
                     env)
    c.slurm = SlurmDaemons(munged, 0, ())
    c.save()
    _wait(lambda: (munge / "munge.socket").exists(), c, "munged", 10.0)
    for i in range(len(c.nodes)):
        _mount_cgroups(c.sshd[i])
    ctld = _daemon([*_enter(c, 0), str(SLURMCTLD), "-D", "-i", "-f", str(conf)],
                   root / "log" / "slurmctld", env)
    c.slurm = SlurmDaemons(munged, ctld, ())
    c.save()
    slurmd = tuple(_daemon([*_enter(c, i), str(SLURMD), "-D", "-f", str(conf)],
                           root / "log" / f"slurmd-{n.name}", env)
                   for i, n in enumerate(c.nodes))
    c.slurm = SlurmDaemons(munged, ctld, slurmd)
    c.save()
    _wait(lambda: _idle(c, env), c, "slurmctld", READY)


def conf_text(c: Emulated, root: Path) -> str:
    """slurm.conf: state, spool, logs and the munge socket in the cluster's directory; no
    cgroups (proctrack/linuxproc, task/none), no accounting."""
    head = c.nodes[0]
    return "\n".join([
        f"{MARK}{c.name}: {c.label}", "ClusterName=emulated",
        f"SlurmctldHost={head.name}({head.address})", "SlurmUser=root", "SlurmdUser=root",
        "AuthType=auth/munge", "CredType=cred/munge",
        f"AuthInfo=socket={root / 'munge' / 'munge.socket'}",
        f"StateSaveLocation={root / 'state'}", f"SlurmdSpoolDir={root / 'spool'}/%n",
        f"SlurmctldPidFile={root / 'slurmctld.pid'}", f"SlurmdPidFile={root / 'slurmd-%n.pid'}",
        f"SlurmctldLogFile={root / 'log' / 'slurmctld.log'}",
        f"SlurmdLogFile={root / 'log' / 'slurmd-%n.log'}",
        "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none",
        "SchedulerType=sched/backfill", "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core", "MpiDefault=none", "ReturnToService=2",
        "InactiveLimit=0", "KillWait=5",
        *(f"NodeName={n.name} NodeAddr={n.address} CPUs={cores()} State=UNKNOWN"
          for n in c.nodes),
        f"PartitionName=emulated Nodes={','.join(n.name for n in c.nodes)} Default=YES "
        "MaxTime=INFINITE State=UP", ""])


def _enter(c: Emulated, i: int) -> list[str]:
    """nsenter into node i's network, UTS and mount namespaces (those of its sshd)."""
    return ["nsenter", "-t", str(c.sshd[i]), "--net", "--uts", "--mount"]


def _daemon(argv: list[str], log: Path, env: dict[str, str]) -> int:
    """Start a daemon in the foreground of a session of its own; its pid (nsenter execs it)."""
    with open(log.with_suffix(".out"), "w") as out:
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                env=env, start_new_session=True).pid


def _mount_cgroups(node_pid: int) -> None:
    """Mount this machine's cgroup hierarchies in the node's mount namespace, whose /sys is
    its network namespace's own (so UCX and Open MPI see the node's interfaces only) and has
    none: slurmd 22.05 starts its cgroup plugin even when nothing uses it, and dies without."""
    steps = []
    for line in Path("/proc/self/mounts").read_text().splitlines():
        source, target, fstype, opts = line.split()[:4]
        if fstype in ("tmpfs", "cgroup", "cgroup2") and \
                (target == "/sys/fs/cgroup" or target.startswith("/sys/fs/cgroup/")):
            steps.append(f"mkdir -p {target} && mount -t {fstype} -o {opts} {source} {target}")
    if not steps:
        return
    done = subprocess.run(["nsenter", "-t", str(node_pid), "--mount", "sh", "-ec",
                           "\n".join(steps)], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise ArenaError(f"cannot mount cgroups on an emulated node for slurmd: "
                         f"{done.stderr.strip()[:200]}")


def _idle(c: Emulated, env: dict[str, str]) -> bool:
    """Every node reports idle to the controller."""
    try:
        done = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %t"], capture_output=True,
                              text=True, env=env, stdin=subprocess.DEVNULL, timeout=5)
    except subprocess.TimeoutExpired:
        return False
    states = dict(line.split() for line in done.stdout.splitlines() if len(line.split()) == 2)
    return all(states.get(n.name) == "idle" for n in c.nodes)


def _wait(ready: Callable[[], bool], c: Emulated, what: str, within: float) -> None:
    """Poll ready() until it holds; ArenaError with the daemon's log if one dies or time runs
    out."""
    deadline = time.monotonic() + within
    while not ready():
        dead = _dead(c)
        if dead or time.monotonic() > deadline:
            log = _log_tail(c, dead or what)
            raise ArenaError(f"the Slurm of cluster '{c.name}' did not start: "
                             f"{dead or what} {'died' if dead else 'is not ready'}: {log}")
        time.sleep(0.1)


def _dead(c: Emulated) -> str:
    """The first of its daemons that is no longer running ('' while all run)."""
    if c.slurm is None:
        return ""
    pids = [("munged", c.slurm.munged), ("slurmctld", c.slurm.slurmctld),
            *((f"slurmd-{n.name}", p) for n, p in zip(c.nodes, c.slurm.slurmd, strict=False))]
    return next((name for name, pid in pids if pid and not alive(pid)), "")


def _log_tail(c: Emulated, what: str) -> str:
    daemon = what if what.startswith("slurmd-") else what.split("-")[0]
    for log in (c.dir / "slurm" / "log" / f"{daemon}.log",
                c.dir / "slurm" / "log" / f"{daemon}.out",
                c.dir / "slurm" / "munge" / "munged.log"):
        lines = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()] \
            if log.exists() else []
        if lines:
            return lines[-1][:200]
    return "no message"


def env_lines(name: str) -> list[str]:
    """The exports that point salloc, srun and sbatch at cluster NAME's Slurm."""
    cluster = emulated.load(name)
    if cluster is None:
        raise ArenaError(f"no emulated cluster named '{name}' is up (see 'mpiarena cluster "
                         "status')")
    if cluster.slurm is None:
        raise ArenaError(f"cluster '{name}' runs no Slurm: 'mpiarena cluster down {name}', then "
                         f"'mpiarena cluster up {cluster.label} --slurm --name {name}'")
    return [f"export SLURM_CONF={conf_path(cluster)}"]


def spec_of(conf: Path) -> EmulatedSpec | None:
    """The emulated cluster a slurm.conf was written for (its first line says), else None."""
    try:
        with open(conf) as f:
            first = f.readline()
    except OSError:
        return None
    if not first.startswith(MARK):
        return None
    try:
        return parse(first.rsplit(": ", 1)[1].strip())
    except (IndexError, ArenaError):
        return None
