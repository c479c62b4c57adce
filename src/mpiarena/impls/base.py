"""What an implementation is, and what a family must provide to build and launch it."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True)
class Implementation:
    """One installed message-passing library that mpiarena can build against and launch."""

    id: str  # stable, e.g. mpich-4.0.2
    family: str  # mpich | openmpi | impi
    version: str
    origin: str  # debian | path | pypi | user
    wrapper: Path  # compiler wrapper (mpicc)
    launcher: Path  # mpiexec
    prefix: Path | None = None
    env: tuple[tuple[str, str], ...] = ()  # needed to compile and run (PATH, LD_LIBRARY_PATH...)

    def environ(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """The process environment for compiling and launching with this implementation."""
        env = dict(os.environ if base is None else base)
        env.update(self.env)
        return env


@dataclass(frozen=True)
class Found:
    """A detection result: an implementation, or a reason it cannot be used."""

    name: str
    impl: Implementation | None = None
    problem: str | None = None
    fix: str | None = None


@dataclass(frozen=True)
class Launch:
    """How to start a job: the launcher's argument list before the binary, and extra env."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)


class Family(Protocol):
    """Launch rules of one family of implementations."""

    name: str
    kernel_module: str  # the C module of the core it is built with

    def launch(self, impl: Implementation, np: int, binding: str, as_root: bool) -> Launch:
        """Launcher arguments for np ranks on this machine, binding 'core' or 'none'."""
        ...

    def wrapper_flags(self, impl: Implementation) -> list[str]:
        """Arguments that make the compiler wrapper print the underlying command."""
        ...
