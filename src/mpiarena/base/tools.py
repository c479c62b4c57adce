"""The programs mpiarena runs but does not ship: the Debian package of each and what it enables,
so that a missing one is one line naming it (a note where it is optional, an error where the
command needs it), never a traceback."""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from .errors import ArenaError


@dataclass(frozen=True)
class Tool:
    name: str
    package: str  # the Debian package that installs it
    enables: str  # what mpiarena does with it, as "without NAME, no ..." would say

    def note(self) -> str:
        """The one line a command says where the tool is optional."""
        return f"{self.name} not found: {self.enables} unavailable (apt-get install {self.package})"


TOOLS = {t.name: t for t in (
    Tool("ip", "iproute2", "emulated clusters (network namespaces)"),
    Tool("tc", "iproute2", "emulated clusters' link shaping"),
    Tool("nsenter", "util-linux", "emulated clusters (entering a node's namespaces)"),
    Tool("unshare", "util-linux", "emulated clusters (a node's own hostname and /tmp)"),
    Tool("ipcrm", "util-linux", "removing the shared memory LAM's killed ranks leave"),
    Tool("sshd", "openssh-server", "emulated clusters (an sshd per node)"),
    Tool("ssh", "openssh-client", "--hosts (reaching the other hosts)"),
    Tool("cc", "gcc", "building the measurement cores"),
    Tool("gcc", "gcc", "building the measurement cores"),
    Tool("lamboot", "lam-runtime", "LAM/MPI"),
    Tool("pvmd", "pvm", "PVM"),
    Tool("ldd", "libc-bin", "checking which MPI library a program loads"),
    Tool("useradd", "passwd", "creating the rank user"),
    Tool("usermod", "passwd", "key logins of the rank user to emulated nodes"),
)}


class MissingTool(ArenaError):
    """A command needs a program that is not there: one line naming it and its package."""

    def __init__(self, name: str, needed_by: str):
        self.tool = TOOLS[name]
        super().__init__(f"{needed_by} needs {name}, which is not installed: "
                         f"apt-get install {self.tool.package}")


def find(name: str) -> Path | None:
    """The program on PATH, else None."""
    found = shutil.which(name)
    return Path(found) if found else None


def require(name: str, needed_by: str) -> Path:
    """The program on PATH; MissingTool where it is not."""
    found = find(name)
    if found is None:
        raise MissingTool(name, needed_by)
    return found


COMPILERS = ("gcc", "cc")  # the C compilers a wrapper may call that TOOLS knows

_NOTED: set[str] = set()


def optional(name: str) -> Path | None:
    """The program on PATH; where it is not, None and its note on stderr, once a process."""
    found = find(name)
    if found is None and name not in _NOTED:
        _NOTED.add(name)
        print(f"note: {TOOLS[name].note()}", file=sys.stderr)
    return found


def compiler() -> Path | None:
    """The C compiler on PATH (gcc, else cc), else None."""
    return next(filter(None, map(find, COMPILERS)), None)
