"""The ssh pieces a cluster's launchers use: a key pair, a client config, a remote-shell agent."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

from ..base.errors import ArenaError
from ..base.users import RankUser
from .placement import Node

SSH = Path("/usr/bin/ssh")
SSHD = Path("/usr/sbin/sshd")
KEYGEN = Path("/usr/bin/ssh-keygen")


def keygen(path: Path, owner: RankUser | None) -> None:
    """An ed25519 key pair at path (and path.pub), owned by whoever uses it."""
    if not KEYGEN.exists():
        raise ArenaError("ssh-keygen is missing: apt-get install openssh-client")
    done = subprocess.run([str(KEYGEN), "-q", "-t", "ed25519", "-N", "", "-C", "mpiarena",
                           "-f", str(path)], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise ArenaError(f"ssh-keygen failed: {done.stderr.strip()}")
    if owner is not None:
        os.chown(path, owner.uid, owner.gid)


def client_config(path: Path, nodes: tuple[Node, ...], user: str, key: Path) -> None:
    """Host entries for every node; batch mode, no host key prompts (keys are made per cluster)."""
    lines = []
    for n in nodes:
        lines += [f"Host {n.name}", f"  HostName {n.address}"]
    lines += ["Host *", "  BatchMode yes", "  StrictHostKeyChecking no",
              "  UserKnownHostsFile /dev/null", "  LogLevel ERROR", "  ConnectTimeout 5",
              f"  User {user}", f"  IdentityFile {key}"]
    path.write_text("\n".join(lines) + "\n")
    path.chmod(0o644)


def agent(path: Path, options: list[str]) -> Path:
    """The remote-shell agent handed to every launcher: ssh with these options, stdin from
    /dev/null (else ssh reads the core's control stream, which rank 0 on the head must get)."""
    path.write_text(f'#!/bin/sh\nexec {SSH} -n {shlex.join(options)} "$@"\n')
    path.chmod(0o755)
    return path
