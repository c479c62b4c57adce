"""What an implementation is, and what a family must provide to build and launch it."""

from __future__ import annotations

import os
import platform
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..base import core_env, tools
from ..base.errors import ArenaError
from ..base.users import RankUser
from ..cluster.placement import Placement
from ..model.whatran import Cvar


@dataclass(frozen=True)
class Implementation:
    """One installed message-passing library that mpiarena can build against and launch."""

    id: str  # stable, e.g. mpich-4.0.2
    family: str  # mpich | openmpi | impi
    version: str
    origin: str  # debian | path | pypi | user | "<system> module <name>"
    wrapper: Path  # compiler wrapper (mpicc)
    launcher: Path  # mpiexec
    prefix: Path | None = None
    env: tuple[tuple[str, str], ...] = ()  # needed to compile and run (PATH, LD_LIBRARY_PATH...)

    @property
    def slug(self) -> str:
        """The id as one file name."""
        return slug(self.id)

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
    cached: bool = False  # installed by `releases` for a bisection: compared only when named


@dataclass(frozen=True)
class Launch:
    """How to start a job: the launcher's argument list before the binary, and extra env."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    binding: str | None = None  # what the launcher really applies, if not what was asked


@dataclass(frozen=True)
class Algorithm:
    """One algorithm a library offers for a collective, and the environment that forces it."""

    coll: str  # the benchmark name: allreduce, bcast...
    name: str  # the library's own name for it (ring, recursive_doubling...)
    key: str  # what the selection file names it by (Open MPI: its number)
    env: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Setting:
    """One value of a library setting other than its default, and the environment that sets
    it (an eager limit: the value in bytes)."""

    value: str
    env: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Rule:
    """Use `algorithm` (None: the library's default) for coll at np ranks for message sizes
    lo up to hi (exclusive; None: no end), sizes as mpiarena's benchmark counts them."""

    coll: str
    np: int
    lo: int
    hi: int | None
    algorithm: Algorithm | None


@dataclass(frozen=True)
class TuningFile:
    """A selection file written in a library's own format, and how to load it."""

    path: Path
    env: tuple[tuple[str, str], ...]  # what loads it, through the library's own mechanism
    note: str = ""


def slug(impl_id: str) -> str:
    """An implementation id as one file name (a module's id holds ':' and '/')."""
    return re.sub(r"[^A-Za-z0-9._+-]", "_", impl_id)


@dataclass(frozen=True)
class SelectionFile:
    """Fixed algorithm choices as a library's own selection file, for `program --tune`'s winner:
    the file's name and text, what loads it (`path_variable` set to where it is written, beside
    `loads`), and the forcing variables it stands in for."""

    kind: str  # what the file is, in the library's words
    name: str
    text: str
    loads: tuple[tuple[str, str], ...]
    path_variable: str
    replaces: tuple[str, ...]

    def env(self, forced: Mapping[str, str], path: str) -> dict[str, str]:
        """`forced` with the file written at `path` in place of the variables it replaces."""
        kept = {k: v for k, v in forced.items() if k not in self.replaces}
        return {**kept, **dict(self.loads), self.path_variable: path}


class Runtime(Protocol):
    """Daemons a family needs for the life of one job (LAM's lamd, PVM's pvmd)."""

    def up(self, env: dict[str, str]) -> dict[str, str]:
        """Start them with the job env; return what the launcher needs; RuntimeError on failure."""
        ...

    def down(self) -> None:
        """Stop them, whatever state they are in."""
        ...


# The MPI family's groups of kernels/ext.h (one-sided, non-blocking collectives...), which an MPI
# library's core is built with; other families build kernels/ext_none.c instead.
MPI_EXT = ("mpi_ext.c", "mpi_rma.c", "mpi_nbc.c", "mpi_vcoll.c", "mpi_neighbor.c",
           "mpi_persist.c", "mpi_dtype.c", "mpi_io.c")


class Family(Protocol):
    """Everything mpiarena knows of one family of implementations: how to find, build and
    clean up after it, and what the launchers (launchers/) build its commands from. Each module
    of impls/ that defines one as FAMILY is a family (impls/registry.py); FamilyDefaults gives
    what most families share."""

    name: str
    title: str  # how messages name it: Open MPI, raw TCP
    order: int  # where it comes in listings and discovery
    kernel_modules: tuple[str, ...]  # the C modules of the core it is built with
    link_flags: tuple[str, ...]  # after the sources when compiling
    max_np: int | None  # most ranks a job can have (raw TCP: 2)
    min_np: int  # fewest ranks a job can have (raw TCP: 2)
    window_timing: bool  # collectives can be timed by the window method (see plan.timing)
    install_hint: str
    wrapper_pattern: re.Pattern[str] | None  # what its mpicc -v says, with the version
    debian: tuple[tuple[str, str], ...]  # (wrapper, launcher) of its Debian packages
    pypi_distributions: tuple[str, ...]  # installed together by `mpiarena install`
    smpi_selectors: tuple[str, ...]  # SimGrid's coll-selectors that copy its selection logic
    pmpi: bool  # the per-call profiler can interpose on it (PMPI)
    start_fixes: tuple[str, ...]  # kernels/ sources any program of it needs preloaded to start
    # here (LAM 7.1.4 on current kernels); the profiler carries them too
    reference: bool  # the reference every library is held against (raw TCP)
    mpi: bool  # an MPI library (ranked as one); PVM and raw TCP are measured beside them
    floor: bool  # the machine floor: a reference for every figure, never compared as a library
    benchmarks: tuple[str, ...]  # the only benchmarks it measures (empty: every one)
    scripted: bool  # its core is the scripted core replaying a script, nothing compiled
    srun_pmi: str | None  # the PMI srun starts its ranks with (pmi2, pmix); None: srun cannot

    @property
    def lineage(self) -> str:
        """What studies and suites may call it: a derivative says whose (MVAPICH: mpich)."""
        ...

    def detect(self) -> list[Found]:
        """Installations it finds itself (families found by their compiler wrapper: none)."""
        ...

    def run_env(self, prefix: Path) -> dict[str, str]:
        """Environment to compile and run a private prefix of it (PyPI builds)."""
        ...

    def sweep_stale(self) -> None:
        """Remove state its daemons left when they were killed outright (no process of it is
        alive by then)."""
        ...

    def runtime(self, impl: Implementation, np: int, workdir: Path, user: RankUser | None,
                env: dict[str, str], placement: Placement | None) -> Runtime | None:
        """The daemons a job of np ranks needs, or None; placement: the nodes they reach over
        ssh (None: they start on this machine only)."""
        ...

    def launch(self, impl: Implementation, np: int, binding: str, as_root: bool) -> Launch:
        """Launcher arguments for np ranks on this machine, binding 'core' or 'none'."""
        ...

    def hosts_launch(self, impl: Implementation, placement: Placement) -> Launch:
        """Launcher arguments for the placement's ranks, started on its head node as the rank
        user, other nodes reached through its remote-shell agent; transports forced onto the
        cluster network between nodes."""
        ...

    def slurm_launch(self, impl: Implementation, placement: Placement) -> Launch | None:
        """Its own launcher inside a Slurm allocation, where it finds the allocation and starts
        its proxies with srun itself (Intel's hydra); None: it has none (see srun_pmi)."""
        ...

    def network_env(self, impl: Implementation, placement: Placement) -> dict[str, str]:
        """Environment that keeps its messages between nodes on the placement's cluster network
        (off shared memory that nodes emulated on one machine would find between them)."""
        ...

    def start_up_env(self, impl: Implementation) -> dict[str, str]:
        """Environment that shortens the core's start-up on this machine without changing
        what the library selects to carry its messages (a variant's own setting wins)."""
        ...

    def wrapper_flags(self, impl: Implementation) -> list[str]:
        """Arguments that make the compiler wrapper print the underlying command."""
        ...

    def algorithms(self, impl: Implementation, coll: str) -> list[Algorithm]:
        """The algorithms the library offers for a collective and how to force each: read from
        the library where it can tell, else a built-in table; [] when it cannot be tuned."""
        ...

    def write_tuning(self, impl: Implementation, rules: list[Rule],
                     directory: Path) -> TuningFile:
        """Write the rules as the library's own selection file into directory."""
        ...

    def eager_limits(self, impl: Implementation) -> list[Setting]:
        """Point-to-point eager/rendezvous limits worth trying instead of the library's own
        (`program --tune`); [] where it exposes none."""
        ...

    def selection_file(self, name: str, forced: Mapping[str, str]) -> SelectionFile | None:
        """The collective algorithms `forced` (an environment) forces, for every message and
        communicator size, as the library's own selection file named `name` plus its suffix;
        None where the environment is the library's own form (MPICH's CVARs, Intel MPI's
        I_MPI_ADJUST_<COLL>)."""
        ...

    def selection_probe(self, impl: Implementation) -> dict[str, str]:
        """Environment that makes the library say at start-up what it selected, for a launch
        of its own that measures nothing; {}: it needs none."""
        ...

    def transport(self, impl: Implementation, cvars: tuple[Cvar, ...] | None, version: str,
                  env: Mapping[str, str], said: str = "") -> tuple[str, str]:
        """What carried a job's messages and how that was learned, from what its library
        reported (control variables, version string), the job's environment and what the
        selection probe's launch printed on stderr (said)."""
        ...

    def cvar_for_env(self, name: str) -> str | None:
        """The control variable an environment variable sets, as the library's MPI_T names it;
        None: the variable is not one of its settings."""
        ...

    def ignored(self, cvars: tuple[Cvar, ...], env: Mapping[str, str]) -> list[str]:
        """Settings of env the library holds but does not act on, as its other control
        variables say (each a sentence: what, and what would make it act)."""
        ...

    def launch_bound(self, cvar: str) -> bool:
        """True for a control variable each launch sets itself (a job id, a contact address, a
        session directory, a value per network interface present): it differs between any two
        launches, so it says nothing of a variant's settings."""
        ...

    def build_levers(self, version: str) -> list[Setting]:
        """Choices a build made when it was configured that a launch can still change, each
        with the environment that makes it (MPICH built with several netmods: the netmod), for
        telling a build's effect from a release's; `version` is the library's version string;
        [] where there are none."""
        ...


class FamilyDefaults:
    """What most families share: found by their compiler wrapper or not at all, nothing to
    sweep, no PyPI build, no profiler, no collective algorithms to choose, nothing that srun
    starts, no transport or control variables it can name."""

    link_flags: tuple[str, ...] = ()
    max_np: int | None = None
    min_np: int = 1
    window_timing: bool = True
    wrapper_pattern: re.Pattern[str] | None = None
    debian: tuple[tuple[str, str], ...] = ()
    pypi_distributions: tuple[str, ...] = ()
    smpi_selectors: tuple[str, ...] = ()
    pmpi = False
    start_fixes: tuple[str, ...] = ()
    reference = False
    mpi = True
    floor = False
    benchmarks: tuple[str, ...] = ()
    scripted = False
    srun_pmi: str | None = None
    name: str  # each family's own

    @property
    def lineage(self) -> str:
        return self.name

    def detect(self) -> list[Found]:
        return []

    def run_env(self, prefix: Path) -> dict[str, str]:
        return {}

    def sweep_stale(self) -> None:
        return None

    def slurm_launch(self, impl: Implementation, placement: Placement) -> Launch | None:
        return None

    def network_env(self, impl: Implementation, placement: Placement) -> dict[str, str]:
        return {}

    def start_up_env(self, impl: Implementation) -> dict[str, str]:
        return {}

    def algorithms(self, impl: Implementation, coll: str) -> list[Algorithm]:
        return []

    def eager_limits(self, impl: Implementation) -> list[Setting]:
        return []

    def selection_file(self, name: str, forced: Mapping[str, str]) -> SelectionFile | None:
        return None

    def write_tuning(self, impl: Implementation, rules: list[Rule],
                     directory: Path) -> TuningFile:
        raise ArenaError(f"{impl.id}: mpiarena cannot write a tuning file for {impl.family}")

    def selection_probe(self, impl: Implementation) -> dict[str, str]:
        return {}

    def transport(self, impl: Implementation, cvars: tuple[Cvar, ...] | None, version: str,
                  env: Mapping[str, str], said: str = "") -> tuple[str, str]:
        return "unknown", "not reported"

    def cvar_for_env(self, name: str) -> str | None:
        return None

    def ignored(self, cvars: tuple[Cvar, ...], env: Mapping[str, str]) -> list[str]:
        return []

    def launch_bound(self, cvar: str) -> bool:
        return False

    def build_levers(self, version: str) -> list[Setting]:
        return []


class Daemonless(FamilyDefaults):
    """A family whose launcher needs no daemon and whose core links with the wrapper alone."""

    def runtime(self, impl: Implementation, np: int, workdir: Path, user: RankUser | None,
                env: dict[str, str], placement: Placement | None) -> Runtime | None:
        return None


class CoreOnly(Daemonless):
    """A family whose transport is the core's own module: built with this machine's C compiler
    (its version the kernel's release), two processes the core itself starts, no launcher."""

    install_hint = "apt-get install gcc"
    max_np = 2
    min_np = 2  # exactly two processes: a 1-rank cell (application kernels) is not planned

    def detect(self) -> list[Found]:
        cc = tools.compiler() or Path(tools.COMPILERS[0])  # none: building says so
        version = platform.release().split("-")[0]
        return [Found(self.name, Implementation(self.name, self.name, version, "kernel", cc,
                                                cc))]

    def launch(self, impl: Implementation, np: int, binding: str, as_root: bool) -> Launch:
        return Launch([], {core_env.NP: str(np), core_env.BIND: binding})

    def wrapper_flags(self, impl: Implementation) -> list[str]:
        return ["--version"]
