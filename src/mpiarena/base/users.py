"""The unprivileged user that ranks run as when mpiarena itself runs as root."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from . import tools
from .errors import ArenaError

DEFAULT = "mpiarena"


@dataclass(frozen=True)
class RankUser:
    name: str
    uid: int
    gid: int
    home: str


def name() -> str:
    return os.environ.get("MPIARENA_USER", DEFAULT)


def lookup() -> RankUser | None:
    """The rank user, if it exists."""
    try:
        pw = pwd.getpwnam(name())
    except KeyError:
        return None
    return RankUser(pw.pw_name, pw.pw_uid, pw.pw_gid, pw.pw_dir)


def for_ranks() -> RankUser | None:
    """Who ranks run as: None means as ourselves (not root, or root without the rank user)."""
    return lookup() if os.geteuid() == 0 else None


def create() -> RankUser:
    """Create the rank user (root only); a no-op if it exists."""
    if (user := lookup()) is not None:
        return user
    if os.geteuid() != 0:
        raise ArenaError(f"creating the rank user '{name()}' needs root; run 'sudo mpiarena setup'")
    useradd = shutil.which("useradd") or "/usr/sbin/useradd"
    if not Path(useradd).exists():
        raise tools.MissingTool("useradd", f"creating the rank user '{name()}'")
    home = f"/var/lib/{name()}-home"
    done = subprocess.run([useradd, "--system", "--create-home", "--home-dir", home, "--shell",
                           "/bin/sh", name()], capture_output=True, text=True)
    if done.returncode != 0:
        raise ArenaError(f"useradd {name()} failed: {done.stderr.strip()}")
    user = lookup()
    assert user is not None
    return user


def allow_key_login(user: RankUser) -> None:
    """sshd refuses even key logins to a locked account ('!' password): make it '*' (no
    password, not locked), so launchers can reach emulated nodes as the rank user."""
    try:
        entry = next(ln for ln in Path("/etc/shadow").read_text().splitlines()
                     if ln.split(":", 1)[0] == user.name)
    except (OSError, StopIteration):
        return
    if entry.split(":")[1].startswith("!"):
        usermod = shutil.which("usermod") or "/usr/sbin/usermod"
        if not Path(usermod).exists():
            raise tools.MissingTool("usermod", f"unlocking '{user.name}' for ssh logins")
        subprocess.run([usermod, "-p", "*", user.name], capture_output=True, check=False)
