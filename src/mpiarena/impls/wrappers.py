"""Ask a compiler wrapper which MPI family and version it belongs to."""

from __future__ import annotations

import subprocess
from pathlib import Path

from .registry import families


def _output(argv: list[str], env: dict[str, str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=20, env=env,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout + done.stderr


def identify(wrapper: Path, env: dict[str, str]) -> tuple[str, str] | None:
    """(family, version) of an MPI compiler wrapper, or None if it is not one we know."""
    for argv in ([str(wrapper), "--showme:version"], [str(wrapper), "-v"]):
        text = _output(argv, env)
        for family in families():
            if family.wrapper_pattern and (m := family.wrapper_pattern.search(text)):
                return family.name, m.group(1).rstrip(".,")
    return None
