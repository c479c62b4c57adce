"""What a library actually ran with, as it reported it from inside the ranks: its control
variables (MPI_T), the transport it chose and how that was learned."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Cvar:
    """One control variable as the library reports it (MPI_T_cvar_get_info and a read)."""

    name: str
    value: str
    scope: str  # constant | readonly | local | group | group_eq | all | all_eq | unknown


@dataclass(frozen=True)
class WhatRan:
    """One job's configuration as read outside the timed part: None cvars, with the reason,
    where the library has no tool interface (LAM 7.1.4: MPI 1.2; PVM and raw TCP: not MPI)."""

    cvars: tuple[Cvar, ...] | None
    cvars_why: str  # why there are none ("" when there are)
    transport: str  # what carried the messages, e.g. "ch4:ofi, tcp;ofi_rxm" or "pml ob1, btl vader"
    transport_how: str  # how it was learned: "MPI_Get_library_version", "MPI_T cvar pml", ...

    def value(self, name: str) -> str | None:
        """A control variable's reported value, or None if the library has no such variable."""
        return next((c.value for c in self.cvars or () if c.name == name), None)
