"""Intel MPI: hydra's mpiexec; pinning through I_MPI_PIN."""

from __future__ import annotations

from .base import Daemonless, Implementation, Launch


class IntelMpi(Daemonless):
    name = "impi"
    kernel_modules = ("mod_mpi.c",)
    install_hint = "mpiarena install impi"

    def launch(self, impl: Implementation, np: int, binding: str, as_root: bool) -> Launch:
        return Launch([str(impl.launcher), "-n", str(np)],
                      {"I_MPI_PIN": "1" if binding == "core" else "0"})

    def wrapper_flags(self, impl: Implementation) -> list[str]:
        return ["-show"]
