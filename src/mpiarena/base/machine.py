"""A description of the machine a run took place on, stored with every run."""

from __future__ import annotations

import os
import platform
import socket
from pathlib import Path


def _read(path: str, default: str = "unknown") -> str:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return default


def cores() -> int:
    """Processors of this machine."""
    return os.cpu_count() or 1


def cpu_model() -> str:
    for line in _read("/proc/cpuinfo", "").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def memory_bytes() -> int:
    for line in _read("/proc/meminfo", "").splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024
    return 0


def describe() -> dict[str, object]:
    return {
        "hostname": socket.gethostname(),
        "cpu_model": cpu_model(),
        "cores": cores(),
        "memory_bytes": memory_bytes(),
        "kernel": platform.release(),
        "os": _read("/etc/debian_version", platform.platform()),
        "governor": _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        "python": platform.python_version(),
    }
