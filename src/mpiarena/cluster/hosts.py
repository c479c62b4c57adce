"""A real cluster named in a hosts file: one host per line, optional `slots=N`, `#` comments.
Launchers reach the hosts over plain ssh (the user's keys and config); the first host is the head
and must be this machine, where mpiarena starts every launcher and daemon."""

from __future__ import annotations

import shlex
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..base import paths, tools
from ..base.errors import ArenaError
from . import ssh
from .placement import Node, Placement, spread

OPTIONS = ["-o", "BatchMode=yes", "-o", "ConnectTimeout=5"]


@dataclass
class Hosts:
    nodes: tuple[Node, ...]
    slots: tuple[int, ...]
    rsh: Path
    label: str

    @property
    def cores(self) -> int:
        return sum(self.slots)

    def placement(self, np: int) -> Placement:
        if np > sum(self.slots):
            raise ArenaError(f"{np} ranks do not fit in the {sum(self.slots)} slots of "
                             f"{self.label}: add hosts or slots, or use fewer ranks")
        return Placement(self.nodes, spread(self.nodes, np, self.slots), self.rsh,
                         label=self.label)

    def prepare(self, binary: Path) -> None:
        """Copy the core to every host that does not see it at the same path (build directories
        are named after the source hash, so a present file is the right one)."""
        there, folder = shlex.quote(str(binary)), shlex.quote(str(binary.parent))
        script = (f"test -x {there} || "
                  f"{{ mkdir -p {folder} && cat > {there} && chmod 755 {there}; }}")
        for node in self.nodes[1:]:
            with open(binary, "rb") as data:
                done = subprocess.run([str(ssh.SSH), *OPTIONS, node.name, script], stdin=data,
                                      capture_output=True, timeout=120)
            if done.returncode != 0:
                raise ArenaError(f"cannot copy the core to '{node.name}': "
                                 f"{done.stderr.decode(errors='replace').strip()[:160]}")

    def reap(self) -> int:
        return 0  # the launchers of real clusters clean their own hosts


def parse(path: Path) -> tuple[list[str], list[int]]:
    """Host names and slots from a hosts file; ArenaError names the bad line."""
    try:
        lines = path.read_text().splitlines()
    except OSError as e:
        raise ArenaError(f"cannot read hosts file {path}: {e.strerror}") from e
    names, slots = [], []
    for number, raw in enumerate(lines, 1):
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        count = 1
        for word in words[1:]:
            key, _, value = word.partition("=")
            if key != "slots" or not value.isdigit() or int(value) < 1:
                raise ArenaError(f"{path}:{number}: '{word}' is not understood: write "
                                 "'HOST' or 'HOST slots=N'")
            count = int(value)
        names.append(words[0])
        slots.append(count)
    if not names:
        raise ArenaError(f"{path} names no host: write one host per line")
    return names, slots


def open_hosts(path: Path) -> Hosts:
    """The hosts of the file, each checked to answer ssh; ArenaError names the one that doesn't."""
    names, slots = parse(path)
    nodes = []
    for name in names:
        try:
            nodes.append(Node(name, socket.gethostbyname(name)))
        except OSError as e:
            raise ArenaError(f"host '{name}' in {path} does not resolve: {e}") from e
    if not _is_here(nodes[0].address):
        raise ArenaError(f"the first host of {path}, '{nodes[0].name}', is not this machine: "
                         "list this machine first (launchers and daemons start on it)")
    if len(nodes) > 1 and not ssh.SSH.exists():
        raise tools.MissingTool("ssh", f"reaching the other hosts of {path}")
    rsh = ssh.agent(paths.shared_dir(paths.data_dir() / "hosts") / "rsh", OPTIONS)
    for node in nodes[1:]:
        done = subprocess.run([str(rsh), node.name, "true"], capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=30)
        if done.returncode != 0:
            said = (done.stderr.strip().splitlines() or ["no message"])[-1][:160]
            raise ArenaError(f"host '{node.name}' does not answer ssh ({said}): check that "
                             f"'ssh {shlex.quote(node.name)} true' works without a password")
    return Hosts(tuple(nodes), tuple(slots), rsh, f"hosts:{path.name}")


def _is_here(address: str) -> bool:
    """True if address belongs to this machine (a socket can be bound to it)."""
    try:
        with socket.socket() as s:
            s.bind((address, 0))
        return True
    except OSError:
        return False
