"""A rank that died on a signal, read back from its job's stderr (kernels/crash.c's block): the
call it died in and its frames; where it died inside the library, a reproducer written."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..base import paths
from ..base.records import CellRequest
from ..base.units import data

# glibc's backtrace_symbols_fd: OBJECT(SYMBOL+0xOFF)[0xADDR] or OBJECT(+0xOFF)[0xADDR]
_FRAME = re.compile(r"(?P<obj>[^(\s]+)\((?P<sym>[A-Za-z_][\w.]*)?\+?(?P<off>0x[0-9a-f]+)?\)")
_CALL = re.compile(r"^P?(MPI_[A-Z][a-z_0-9]*)$")
# the variables through which a job's libraries read their control variables
_CONTROLS = ("MPIR_CVAR_", "MPICH_", "OMPI_MCA_", "I_MPI_", "UCX_", "FI_", "ARENA_DATATYPE")


@dataclass(frozen=True)
class Frame:
    """One frame of a dying rank's stack: the object it lies in and its function, if known."""

    obj: str
    function: str | None

    @property
    def words(self) -> str:
        return self.function or Path(self.obj).name


@dataclass(frozen=True)
class Crash:
    """A rank that died on a signal: which, in which cell, and its stack (innermost first, the
    signal's own frames left out)."""

    rank: int
    signal: str
    bench: str  # "-": between cells
    size: int
    frames: tuple[Frame, ...]

    @property
    def call(self) -> str | None:
        """The MPI call the rank was in (the innermost one on its stack), if any."""
        return next((m.group(1) for f in self.frames
                     if f.function and (m := _CALL.match(f.function))), None)

    @property
    def in_library(self) -> bool:
        """It died inside an MPI call, in the library's code (not the core's, not libc's alone)."""
        if self.call is None:
            return False
        inner = next((f for f in self.frames if not _is_libc(f.obj)), None)
        return inner is not None and inner.obj.endswith(tuple(_SHARED))

    def line(self) -> str:
        """The crash in words, for a cell's reason."""
        where = self.call or next((f.words for f in self.frames if not _is_libc(f.obj)), "?")
        cell = f" (a cell of {self.bench} {data(self.size)})" if self.bench != "-" else ""
        return f"rank {self.rank} died of {self.signal} in {where}{cell}; its stack: {self.stack()}"

    def stack(self, most: int = 10) -> str:
        """The frames innermost first, a run of unnamed ones in one object as one entry."""
        runs: list[tuple[str, int]] = []
        for f in self.frames:
            if runs and f.function is None and runs[-1][0] == f.words:
                runs[-1] = (f.words, runs[-1][1] + 1)
            else:
                runs.append((f.words, 1))
        return " < ".join(w if n == 1 else f"{w} x{n}" for w, n in runs[:most])


_SHARED = (".so", *(f".so.{n}" for n in range(100)))


def _is_libc(obj: str) -> bool:
    return Path(obj).name.startswith(("libc.so", "libc-", "libpthread"))


def read(said: str, binary: Path | None = None) -> Crash | None:
    """The first crash block in a job's stderr, the core's own frames named from `binary`'s
    symbols (addr2line) where it can; None where no rank reported one."""
    lines = said.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith("arena-crash\t")), None)
    if start is None:
        return None
    head = lines[start].split("\t")
    if len(head) != 5 or not head[1].lstrip("-").isdigit() or not head[4].isdigit():
        return None
    raw = []
    for ln in lines[start + 1:]:
        if ln.startswith("arena-crash-end"):
            break
        if m := _FRAME.search(ln):
            raw.append((m.group("obj"), m.group("sym"), m.group("off")))
    named = _resolve([off for obj, sym, off in raw if sym is None and off and binary
                      and obj == str(binary)], binary)
    frames = [Frame(obj, sym or (named.get(off) if off else None)) for obj, sym, off in raw]
    while frames and _is_libc(frames[0].obj):  # the signal's delivery: sigreturn, raise
        if frames[0].function in ("raise", "gsignal", "abort"):
            frames.pop(0)
            continue
        if frames[0].function is None and len(frames) > 1 and _is_libc(frames[1].obj) and \
                frames[1].function in ("raise", "gsignal", "pthread_kill"):
            frames.pop(0)
            continue
        break
    return Crash(int(head[1]), head[2], head[3], int(head[4]), tuple(frames))


def _resolve(offsets: list[str], binary: Path | None) -> dict[str, str]:
    """The core's functions at these offsets (addr2line -f), where addr2line is here."""
    tool = shutil.which("addr2line")
    if not offsets or binary is None or tool is None:
        return {}
    done = subprocess.run([tool, "-f", "-e", str(binary), *offsets], capture_output=True,
                          text=True, check=False)
    names = done.stdout.splitlines()[0::2]
    return {off: name for off, name in zip(offsets, names, strict=False) if name != "??"}


@dataclass(frozen=True)
class Reproduced:
    """What a reproducer names: the library's own words for itself, its launcher, the cell,
    the job's environment."""

    version: str
    launcher: tuple[str, ...]  # the argv before the core's binary
    asked: CellRequest
    env: tuple[tuple[str, str], ...]


_ARGS = {
    "MPI_Allreduce": "s, r, count, type, MPI_SUM, comm",
    "MPI_Reduce": "s, r, count, type, MPI_SUM, 0, comm",
    "MPI_Scan": "s, r, count, type, MPI_SUM, comm",
    "MPI_Exscan": "s, r, count, type, MPI_SUM, comm",
    "MPI_Bcast": "r, bytes, MPI_BYTE, 0, comm",
    "MPI_Barrier": "comm",
    "MPI_Allgather": "s, bytes, MPI_BYTE, r, bytes, MPI_BYTE, comm",
    "MPI_Gather": "s, bytes, MPI_BYTE, r, bytes, MPI_BYTE, 0, comm",
    "MPI_Scatter": "s, bytes, MPI_BYTE, r, bytes, MPI_BYTE, 0, comm",
    "MPI_Alltoall": "s, bytes, MPI_BYTE, r, bytes, MPI_BYTE, comm",
}
_TYPES = {"int": ("MPI_INT", 4), "char": ("MPI_CHAR", 1), "float": ("MPI_FLOAT", 4),
          "double": ("MPI_DOUBLE", 8)}


def reproducer(crash: Crash, what: Reproduced) -> str | None:
    """A C program that makes the call the rank died in at the cell's size as the core did, and
    says how to build and run it; None for a call it cannot write."""
    if crash.call not in _ARGS:
        return None
    env = dict(what.env)
    controls = sorted(f"{k}={v}" for k, v in what.env
                      if k.startswith(_CONTROLS) and v and k != "ARENA_DATATYPE")
    typename, width = _TYPES[env.get("ARENA_DATATYPE") or "int"]
    np = what.asked.cell.np
    launcher = Path(what.launcher[0]) if what.launcher else Path("mpiexec")
    wrapper = launcher.with_name(launcher.name.replace("mpiexec", "mpicc").replace("mpirun",
                                                                                    "mpicc"))
    release = " ".join((what.version.splitlines() or [""])[0].split()) or "the library"
    run = shlex.join([*(controls and ["env", *controls]), *what.launcher, "./repro"])
    return "\n".join([
        "/*",
        f" * {release}: rank {crash.rank} died of {crash.signal} in {crash.call}",
        f" * ({crash.bench}, {crash.size} B a rank, {np} ranks), as mpiarena measured it.",
        f" * control variables set: {', '.join(controls) or 'none'}",
        f" * its stack: {crash.stack()}",
        " *",
        " * Build and run with the release's own wrapper and launcher:",
        f" *   {wrapper} -o repro {{this file}}",
        f" *   {run}",
        " */",
        "#include <mpi.h>",
        "#include <stdio.h>",
        "#include <stdlib.h>",
        "",
        "int main(int argc, char **argv)",
        "{",
        "    MPI_Comm comm;",
        f"    MPI_Datatype type = {typename};",
        f"    int rank, np, bytes = {crash.size}, count = {crash.size // width};",
        "    MPI_Init(&argc, &argv);",
        "    MPI_Comm_dup(MPI_COMM_WORLD, &comm);",
        "    MPI_Comm_rank(comm, &rank);",
        "    MPI_Comm_size(comm, &np);",
        "    char *s = calloc((size_t)bytes * (size_t)np + 1, 1);",
        "    char *r = calloc((size_t)bytes * (size_t)np + 1, 1);",
        "    (void)type; (void)count;",
        "    for (int i = 0; i < 1000; i++)",
        f"        {crash.call}({_ARGS[crash.call]});",
        f"    if (rank == 0) printf(\"1000 calls of {crash.call} of %d B: no crash\\n\", bytes);",
        "    free(s);",
        "    free(r);",
        "    MPI_Comm_free(&comm);",
        "    MPI_Finalize();",
        "    return 0;",
        "}",
        ""])


def write_reproducer(crash: Crash, what: Reproduced, run_token: str) -> Path | None:
    """The reproducer written under the data directory's reproducers/ (readable by all); its path,
    or None where there is none to write."""
    text = reproducer(crash, what)
    if text is None:
        return None
    folder = paths.shared_dir(paths.data_dir() / "reproducers" / run_token[:12])
    cell = what.asked.cell
    path = folder / f"{crash.call}-{cell.bench}-{cell.size}B-{cell.np}ranks.c"
    path.write_text(text)
    path.chmod(0o644)
    return path
