"""Open MPI: mpirun/mpiexec with --bind-to; root needs its explicit permission."""

from __future__ import annotations

import os

from .base import Daemonless, Implementation, Launch

ROOT_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


class OpenMpi(Daemonless):
    name = "openmpi"
    kernel_modules = ("mod_mpi.c",)
    install_hint = "apt-get install openmpi-bin libopenmpi-dev  (or: mpiarena install openmpi)"

    def launch(self, impl: Implementation, np: int, binding: str, as_root: bool) -> Launch:
        argv = [str(impl.launcher), "-n", str(np), "--bind-to", binding]
        if np > (os.cpu_count() or 1):
            major = int(impl.version.split(".")[0])
            argv += ["--map-by", ":OVERSUBSCRIBE"] if major >= 5 else ["--oversubscribe"]
        return Launch(argv, dict(ROOT_ENV) if as_root else {})

    def wrapper_flags(self, impl: Implementation) -> list[str]:
        return ["--showme"]
