"""A cluster inside this machine: one network namespace per node, a bridge in a switch namespace,
veth cables shaped with tbf both ways, and an sshd per node so every launcher reaches its nodes
as on a real cluster. Each node also gets its own hostname (UTS namespace), /tmp and /dev/shm
(mount namespace), so LAM sessions, PVM host identities and shared memory stay per node."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from ..base import paths, tools, users
from ..base.errors import ArenaError
from ..base.machine import cores
from ..system.owners import Owner
from ..system.procs import alive
from . import netns, ssh
from .placement import Node, Placement, spread
from .spec import EmulatedSpec, parse

PRIVATE_MOUNTS = ("/tmp", "/dev/shm")  # each node mounts its own: ranks' files stay apart
SUBNET = "10.213"  # node i of cluster k is 10.213.k.(i+1)
CAP_NET_ADMIN, CAP_SYS_ADMIN = 12, 21
GRACE = 60.0  # seconds a cluster directory without state may be its maker's, starting up


def run_name(pid: int) -> str:
    """The name of the cluster a run makes for itself."""
    return f"run{pid}"


def clusters_dir() -> Path:
    """Machine-wide, as namespaces are: an mpiarena with another MPIARENA_HOME must not take
    a cluster it cannot see the state of for an orphan."""
    return paths.shared_dir(paths.machine_dir() / "clusters")


def runtime_dir() -> Path:
    """Beside the clusters: their lock, and each directory while it is built."""
    return paths.shared_dir(paths.machine_dir() / "runtime")


@dataclass(frozen=True)
class SlurmDaemons:
    """The Slurm daemons of a cluster brought up with --slurm (cluster/emulated_slurm.py)."""

    munged: int
    slurmctld: int
    slurmd: tuple[int, ...]  # one per node, in node order


@dataclass
class Emulated:
    name: str
    spec: EmulatedSpec
    nodes: tuple[Node, ...]
    sshd: tuple[int, ...]  # pid of each node's sshd
    owner: Owner | None  # the mpiarena that made it; None once kept up by `cluster up`
    slurm: SlurmDaemons | None = None  # its Slurm, if brought up with one

    @property
    def label(self) -> str:
        return self.spec.label()

    @property
    def dir(self) -> Path:
        return clusters_dir() / self.name

    @property
    def cores(self) -> int:
        """Its nodes share this machine's cores."""
        return cores()

    def ns(self, i: int | None) -> str:
        return f"{netns.PREFIX}{self.name}-{'sw' if i is None else f'n{i}'}"

    def placement(self, np: int) -> Placement:
        user = users.lookup()
        assert user is not None
        enter = ("nsenter", "-t", str(self.sshd[0]), "--net", "--uts", "--mount",
                 f"--setuid={user.uid}", f"--setgid={user.gid}")
        return Placement(self.nodes, spread(self.nodes, np), self.dir / "rsh", enter,
                         label=self.spec.label())

    def prepare(self, binary: Path) -> None:
        """Nothing to copy: every node sees this machine's files."""

    def reap(self) -> int:
        """Kill every process of the rank user on the nodes (ranks, launcher daemons)."""
        user = users.lookup()
        killed = 0
        for i in range(len(self.nodes)):
            for pid in netns.pids_in(self.ns(i)):
                with contextlib.suppress(OSError):
                    if user and os.stat(f"/proc/{pid}").st_uid == user.uid:
                        os.kill(pid, signal.SIGKILL)
                        killed += 1
        return killed

    def save(self, into: Path | None = None) -> None:
        """Write its state whole or not at all, into its directory or one about to become it.
        The owner stays a bare pid (0: kept) with its start time beside it, as earlier
        versions, which may be sweeping at the same time, read it."""
        state = {"spec": self.spec.label(), "nodes": [[n.name, n.address] for n in self.nodes],
                 "sshd": list(self.sshd),
                 "owner": self.owner.pid if self.owner else 0,
                 "owner_start": self.owner.start if self.owner else None,
                 "slurm": asdict(self.slurm) if self.slurm else None}
        partial = (into or self.dir) / f".state.json.{os.getpid()}"
        partial.write_text(json.dumps(state))
        os.replace(partial, partial.with_name("state.json"))


def check_can_emulate() -> None:
    """One clear line before anything starts if this machine cannot host an emulated cluster."""
    if not _privileged():
        raise ArenaError("an emulated cluster needs root with CAP_NET_ADMIN and CAP_SYS_ADMIN "
                         "(network namespaces): run as root, or use --hosts FILE")
    for tool in ("ip", "tc", "nsenter", "unshare"):
        tools.require(tool, "an emulated cluster")
    if not ssh.SSHD.exists():
        raise tools.MissingTool("sshd", "an emulated cluster (an sshd per node)")
    if users.lookup() is None:
        raise ArenaError(f"the rank user '{users.name()}' does not exist: run 'mpiarena setup'")
    home = paths.data_dir().resolve()
    if hidden := [m for m in PRIVATE_MOUNTS if home.is_relative_to(m)]:
        raise ArenaError(f"mpiarena's data directory {home} lies under {hidden[0]}, which "
                         "every emulated node mounts afresh, so the nodes cannot see its builds: "
                         "set MPIARENA_HOME elsewhere, e.g. MPIARENA_HOME=/var/tmp/mpiarena")


def _privileged() -> bool:
    """Root with the capabilities that namespaces, veth and mounts need."""
    status = Path("/proc/self/status").read_text()
    effective = int(next(ln.split()[1] for ln in status.splitlines() if ln.startswith("CapEff")),
                    16)
    return os.geteuid() == 0 and all(effective >> bit & 1 for bit in (CAP_NET_ADMIN,
                                                                       CAP_SYS_ADMIN))


def up(spec: EmulatedSpec, name: str, keep: bool = False) -> Emulated:
    """Build the cluster; on any failure tear down what was made and raise ArenaError."""
    check_can_emulate()
    cluster = _claim(spec, name)
    try:
        _wire(cluster)
        cluster.sshd = _start_sshds(cluster)
        cluster.save()
        _wait_for_ssh(cluster)
        if keep:
            cluster.owner = None
            cluster.save()
    except BaseException:
        teardown(cluster.name)
        raise
    return cluster


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    """Hold the lock that claiming a cluster and sweeping one take, so that no two runs pick
    the same name or subnet and no sweep sees a claim half made."""
    with open(runtime_dir() / "clusters.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _claim(spec: EmulatedSpec, name: str) -> Emulated:
    """Its directory with its state, this process its owner, before any namespace exists."""
    with _locked():
        if (clusters_dir() / name).exists() or _namespaces(name):
            if name not in _orphans() and not _kept_but_gone(name):
                raise ArenaError(f"an emulated cluster named '{name}' is already up: "
                                 f"'mpiarena cluster down {name}', or choose another --name")
            teardown(name)
        used = {int(p.read_text()) for p in clusters_dir().glob("*/subnet")}
        index = next(k for k in range(256) if k not in used)
        nodes = tuple(Node(f"n{i}", f"{SUBNET}.{index}.{i + 1}") for i in range(spec.nodes))
        cluster = Emulated(name, spec, nodes, (), Owner.me())
        # made elsewhere and moved in whole: no sweep, of this version or an earlier one, ever
        # sees its directory without its state
        staging = Path(tempfile.mkdtemp(prefix="cluster-", dir=runtime_dir()))
        try:
            staging.chmod(0o755)
            (staging / "subnet").write_text(str(index))
            cluster.save(into=staging)
            staging.rename(cluster.dir)
        finally:
            shutil.rmtree(staging, ignore_errors=True)  # gone already once moved in
    return cluster


def _wire(c: Emulated) -> None:
    sw = c.ns(None)
    netns.add(sw)
    netns.bridge(sw)
    for i, node in enumerate(c.nodes):
        netns.add(c.ns(i))
        netns.cable(c.ns(i), sw, f"p{i}", node.address, c.spec.mtu)
        netns.shape(c.ns(i), "eth0", c.spec.rate_bits, c.spec.burst, c.spec.medium.overhead)
        netns.shape(sw, f"p{i}", c.spec.rate_bits, c.spec.burst, c.spec.medium.overhead)


def _start_sshds(c: Emulated) -> tuple[int, ...]:
    user = users.lookup()
    assert user is not None
    users.allow_key_login(user)
    key = c.dir / "id_ed25519"
    ssh.keygen(key, user)
    ssh.keygen(c.dir / "host_ed25519", None)
    shutil.copy(c.dir / "id_ed25519.pub", c.dir / "authorized_keys")
    (c.dir / "authorized_keys").chmod(0o644)
    hosts = c.dir / "hosts"
    hosts.write_text("127.0.0.1 localhost\n" + "".join(f"{n.address} {n.name}\n"
                                                       for n in c.nodes))
    hosts.chmod(0o644)
    ssh.client_config(c.dir / "ssh_config", c.nodes, user.name, key)
    ssh.agent(c.dir / "rsh", ["-F", str(c.dir / "ssh_config")])
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    pids = []
    for i, node in enumerate(c.nodes):
        config = c.dir / f"sshd-{node.name}.conf"
        config.write_text("\n".join([
            f"ListenAddress {node.address}", f"HostKey {c.dir / 'host_ed25519'}",
            f"AuthorizedKeysFile {c.dir / 'authorized_keys'}", f"AllowUsers {user.name}",
            "PasswordAuthentication no", "KbdInteractiveAuthentication no", "UsePAM no",
            "StrictModes no", "PermitRootLogin no", "X11Forwarding no", "PrintMotd no",
            "MaxStartups 200", "MaxSessions 200", "LogLevel ERROR"]) + "\n")
        script = " && ".join([
            f"hostname {node.name}",
            *(f"mount -t tmpfs -o mode=1777 tmpfs {m}" for m in PRIVATE_MOUNTS),
            f"mount --bind {shlex.quote(str(hosts))} /etc/hosts",
            f"exec {ssh.SSHD} -D -e -f {shlex.quote(str(config))}"])
        with open(c.dir / f"sshd-{node.name}.log", "w") as log:
            proc = subprocess.Popen(
                ["ip", "netns", "exec", c.ns(i), "unshare", "--uts", "--mount",
                 "--propagation", "private", "sh", "-c", script],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        pids.append(proc.pid)
    return tuple(pids)


def _wait_for_ssh(c: Emulated, within: float = 10.0) -> None:
    """Every node answers ssh from the head, as the rank user."""
    head = c.placement(1)
    deadline = time.monotonic() + within
    for node in c.nodes:
        while True:
            done = subprocess.run(head.on_head([str(head.rsh), node.name, "true"], Path("/")),
                                  capture_output=True, text=True, stdin=subprocess.DEVNULL)
            if done.returncode == 0:
                break
            if time.monotonic() > deadline:
                log = (c.dir / f"sshd-{node.name}.log").read_text(errors="replace").strip()
                raise ArenaError(f"node {node.name} of cluster '{c.name}' does not answer ssh: "
                                 f"{(done.stderr.strip() or log or 'no message')[:200]}")
            time.sleep(0.02)


def _state(name: str) -> Emulated | None:
    """What its state file says, up or not; None without one."""
    path = clusters_dir() / name / "state.json"
    try:
        state = json.loads(path.read_text())
        owner = Owner(state["owner"], state.get("owner_start")) if state["owner"] else None
        daemons = state.get("slurm")
        slurm = SlurmDaemons(daemons["munged"], daemons["slurmctld"],
                             tuple(daemons["slurmd"])) if daemons else None
        return Emulated(name, parse(state["spec"]), tuple(Node(*n) for n in state["nodes"]),
                        tuple(state["sshd"]), owner, slurm)
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise ArenaError(f"cannot read {path}: 'mpiarena cluster down {name}' removes the "
                         "cluster") from e


def _kept_but_gone(name: str) -> bool:
    """A cluster kept up by `cluster up` whose namespaces are gone (e.g. after a reboot)."""
    cluster = _state(name)
    return cluster is not None and cluster.owner is None and load(name) is None


def in_use(name: str) -> bool:
    """Made by an mpiarena that still runs (it is starting, measuring or tearing down)."""
    with contextlib.suppress(ArenaError):
        cluster = _state(name)
        return cluster is not None and cluster.owner is not None and cluster.owner.alive()
    return False


def load(name: str) -> Emulated | None:
    """The cluster of that name if it is up (its namespaces exist), else None."""
    cluster = _state(name)
    if cluster is None or cluster.ns(None) not in netns.existing():
        return None
    return cluster


def names() -> list[str]:
    """Clusters with state or namespaces left, up or half torn down."""
    found = {p.name for p in clusters_dir().iterdir() if p.is_dir()}
    found |= {ns[len(netns.PREFIX):].rsplit("-", 1)[0] for ns in netns.existing()}
    return sorted(found)


def _named_for_live_run(name: str) -> bool:
    """Named as a run names its cluster, and a process of that pid runs: its maker, maybe."""
    pid = name.removeprefix("run")
    return pid.isdigit() and name == run_name(int(pid)) and alive(int(pid))


def _namespaces(name: str) -> list[str]:
    return [ns for ns in netns.existing() if ns.startswith(f"{netns.PREFIX}{name}-")]


def teardown(name: str) -> None:
    """Kill everything running on the nodes (its Slurm's daemons too), delete the namespaces,
    the link from here a Slurm needs, and the state."""
    mine = _namespaces(name)
    for ns in mine:
        for pid in netns.pids_in(ns):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(OSError, ValueError):  # gone with the switch, but only later
        netns.delete_link(netns.host_link_name(int((clusters_dir() / name / "subnet")
                                                   .read_text())))
    for ns in mine:
        netns.delete(ns)
    shutil.rmtree(clusters_dir() / name, ignore_errors=True)


def sweep_orphans() -> list[str]:
    """Tear down the clusters whose maker provably died without doing so; their names."""
    with _locked():
        orphans = _orphans()
        for name in orphans:
            teardown(name)
    return orphans


def _orphans() -> list[str]:
    """Clusters whose maker died without tearing them down (not those kept by `cluster up`):
    its state names an owner that is gone, or, without state, the directory is older than a
    maker takes to write it and no run of that name's pid lives. Call with the lock held."""
    out = []
    for name in names():
        try:
            cluster = _state(name)
        except ArenaError:  # unreadable state: not provably orphaned
            continue
        if cluster is None:
            stateless = clusters_dir() / name
            with contextlib.suppress(FileNotFoundError):  # namespaces alone: nobody's
                if time.time() - stateless.stat().st_mtime < GRACE:
                    continue
            if not _named_for_live_run(name):
                out.append(name)
        elif cluster.owner is not None and not cluster.owner.alive():
            out.append(name)
    return out
