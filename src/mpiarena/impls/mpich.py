"""MPICH: hydra's mpiexec, binding with -bind-to."""

from __future__ import annotations

from .base import Daemonless, Implementation, Launch


class Mpich(Daemonless):
    name = "mpich"
    kernel_modules = ("mod_mpi.c",)
    install_hint = "apt-get install mpich libmpich-dev  (or: mpiarena install mpich)"

    def launch(self, impl: Implementation, np: int, binding: str, as_root: bool) -> Launch:
        return Launch([str(impl.launcher), "-n", str(np), "-bind-to", binding])

    def wrapper_flags(self, impl: Implementation) -> list[str]:
        return ["-show"]
