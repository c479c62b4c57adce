"""Which mpiarena process made something, told apart from a later process that reuses its pid:
what a sweep spares while its owner lives and removes once it provably died."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .procs import alive


def start_time(pid: int) -> int | None:
    """When pid started, in clock ticks after boot (/proc/PID/stat's 22nd field); None if gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])


@dataclass(frozen=True)
class Owner:
    pid: int
    start: int | None  # None: written by an mpiarena that recorded the pid alone

    @classmethod
    def me(cls) -> Owner:
        return cls(os.getpid(), start_time(os.getpid()))

    @classmethod
    def parse(cls, text: str) -> Owner | None:
        """'PID.START' as str() writes it, or a bare 'PID'; None if it is neither."""
        pid, _, start = text.partition(".")
        if not pid.isdigit() or not (start.isdigit() or start == ""):
            return None
        return cls(int(pid), int(start) if start else None)

    def __str__(self) -> str:
        return f"{self.pid}.{self.start}" if self.start is not None else str(self.pid)

    def alive(self) -> bool:
        """The very process that made it still runs (not a zombie, not its pid's next holder)."""
        return alive(self.pid) and self.start in (None, start_time(self.pid))
