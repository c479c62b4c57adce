"""Shared helpers: the real mpiarena command, the implementations on this machine, leftovers."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from mpiarena import paths
from mpiarena.cluster import netns
from mpiarena.impls import Implementation, discover
from mpiarena.runner.cleanup import sweep_stale

LEFTOVER_NAMES = {"arena", "mpiexec", "mpiexec.hydra", "mpiexec.mpich", "mpirun", "orterun",
                  "hydra_pmi_proxy", "prterun", "prted", "orted", "mpiexec.openmpi", "lamd",
                  "lamboot", "lamhalt", "pvmd", "pvmd3", "pvmgs"}
# Every process this test session starts inherits the marker (launchers pass the environment
# on to ranks and daemons), so a leftover is one of ours whatever else runs on the machine.
MARKER = f"MPIARENA_TEST_SESSION={uuid.uuid4().hex}"
os.environ["MPIARENA_TEST_SESSION"] = MARKER.partition("=")[2]


def mpiarena(*args: str, cwd: Path | None = None, timeout: float = 600,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real mpiarena command line."""
    return subprocess.run([sys.executable, "-c", "from mpiarena.commands import main; main()",
                           *args], capture_output=True, text=True, cwd=cwd, timeout=timeout,
                          env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL)


def _running() -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                comm = (entry / "comm").read_text().strip()
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                ours = comm in LEFTOVER_NAMES and MARKER.encode() in (
                    entry / "environ").read_bytes().split(b"\0")
            except (OSError, IndexError):
                continue
            if ours and state not in ("Z", "X"):
                found.append(f"{comm}[{entry.name}]")
    return found


def leftovers(grace: float = 2.0) -> list[str]:
    """Launchers, daemons or core processes of this test session still running after a short
    grace for exits."""
    deadline = time.monotonic() + grace
    while (found := _running()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def usable_impls() -> list[Implementation]:
    return [f.impl for f in discover({}, paths.impls_dir()) if f.impl is not None]


IMPLS = usable_impls()


@pytest.fixture(params=IMPLS, ids=[i.id for i in IMPLS])
def impl(request: pytest.FixtureRequest) -> Implementation:
    return request.param


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "results.db")


@pytest.fixture(autouse=True, scope="session")
def nothing_left_behind():
    """Start from what a crashed earlier run may have left swept away; end with nothing running."""
    sweep_stale(paths.scratch_dir())
    yield
    assert leftovers() == []
    assert netns.existing() == []  # no emulated cluster outlives the tests


def watchdog_of(pid: int) -> int:
    """The watchdog mpiarena pid started."""
    for entry in Path("/proc").iterdir():
        try:
            args = (entry / "cmdline").read_bytes().rstrip(b"\0").split(b"\0")
            if entry.name.isdigit() and args[-2:] == [b"mpiarena.runner.watchdog",
                                                      str(pid).encode()]:
                return int(entry.name)
        except OSError:
            continue
    raise AssertionError(f"no watchdog for {pid}")
