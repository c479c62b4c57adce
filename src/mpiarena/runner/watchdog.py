"""A watchdog that outlives mpiarena: when mpiarena dies, even by SIGKILL, it tears down what
mpiarena started (launchers, ranks, daemons, scratch directories, System V objects, emulated
clusters) within seconds, by the same sweep a later run would do.

It is a child in its own session that holds the read end of a pipe whose write end only
mpiarena has: the pipe reaches end of file when mpiarena is gone, however it went.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from ..base import paths
from ..system.procs import alive, wait_until
from .cleanup import sweep_stale

_pipe: int | None = None  # the write end, open for the life of this process
OWNER_EXIT_WAIT = 10.0  # seconds to wait for the owner's pid to go once the pipe closed


def guard() -> None:
    """Start the watchdog for this process, once."""
    global _pipe
    if _pipe is not None:
        return
    read_end, write_end = os.pipe()  # not inherited by the jobs mpiarena starts
    subprocess.Popen([sys.executable, "-m", "mpiarena.runner.watchdog", str(os.getpid())],
                     stdin=read_end, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True)
    os.close(read_end)
    _pipe = write_end


def watch(owner: int) -> None:
    """Wait for the owner to die, then sweep what it left."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the owner's to handle
    while os.read(0, 4096):
        pass
    wait_until(lambda: not alive(owner), within=OWNER_EXIT_WAIT, step=0.02)
    sweep_stale(paths.scratch_dir())


if __name__ == "__main__":
    watch(int(sys.argv[1]))
