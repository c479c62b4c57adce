"""IMB (Intel MPI Benchmarks) output: IMB-MPI1, -NBC, -RMA and -EXT tables.

A run starts at IMB's banner ("Intel(R) MPI Benchmarks VERSION, PART part"); each table at
"# Benchmarking NAME" and "# #processes = N", then its column header (#bytes, #repetitions,
t[usec] or t_min/t_max/t_avg[usec], Mbytes/sec...) and one row per message size. PingPong's t
is half the round trip, as mpiarena's pingpong; the others' figure is the column chosen
(t_max by default: the slowest rank's mean per call, as mpiarena times a collective). Its
reductions sum MPI_FLOAT unless -red_data_type says otherwise, as its header says ("#
MPI_Datatype for reductions    :   MPI_FLOAT").
"""

from __future__ import annotations

import re
from pathlib import Path

from ..base.records import Datatype
from ..model.benchmarks import BENCHMARKS
from .records import (
    Choices,
    Expected,
    Figure,
    Parsed,
    bad,
    datatype_named,
    found,
    integer,
    number,
    one_datatype,
)

FIGURES = ("t_max", "t_avg", "t_min")
BANNER = re.compile(r"Intel\(R\) MPI Benchmarks \S+, (.+?) part")
EXPECTED = Expected("imb", "no IMB banner ('Intel(R) MPI Benchmarks VERSION, PART part'): not "
                    "IMB output", "IMB tables")
# (part, IMB's name) -> mpiarena's benchmark; part None: any part
NAMES: dict[tuple[str | None, str], str] = {
    (None, "PingPong"): "pingpong", (None, "Sendrecv"): "sendrecv",
    (None, "Allreduce"): "allreduce", (None, "Reduce"): "reduce", (None, "Bcast"): "bcast",
    (None, "Allgather"): "allgather", (None, "Allgatherv"): "allgatherv",
    (None, "Gather"): "gather", (None, "Gatherv"): "gatherv", (None, "Scatter"): "scatter",
    (None, "Scatterv"): "scatterv", (None, "Alltoall"): "alltoall",
    (None, "Alltoallv"): "alltoallv", (None, "Reduce_scatter_block"): "reduce_scatter_block",
    (None, "Scan"): "scan", (None, "Exscan"): "exscan", (None, "Barrier"): "barrier",
    # IMB-NBC: the blocking time of each non-blocking collective (its _pure table)
    (None, "Ibcast_pure"): "ibcast", (None, "Iallgather_pure"): "iallgather",
    (None, "Ialltoall_pure"): "ialltoall", (None, "Ireduce_pure"): "ireduce",
    (None, "Iallreduce_pure"): "iallreduce", (None, "Ibarrier_pure"): "ibarrier",
    # IMB-NBC's overlap tables: their t_pure (the slowest rank's), where no _pure table ran
    ("NBC", "Ibcast"): "ibcast", ("NBC", "Iallgather"): "iallgather",
    ("NBC", "Ialltoall"): "ialltoall", ("NBC", "Ireduce"): "ireduce",
    ("NBC", "Iallreduce"): "iallreduce", ("NBC", "Ibarrier"): "ibarrier",
    # IMB-RMA, non-aggregate mode: one operation then MPI_Win_flush in a lock_all epoch
    ("RMA", "Unidir_put"): "put-lockall", ("RMA", "Unidir_get"): "get-lockall",
    ("RMA", "Accumulate"): "accumulate-lockall",
    ("RMA", "Get_accumulate"): "get_accumulate-lockall",
    ("RMA", "Fetch_and_op"): "fetch_and_op-lockall",
    ("RMA", "Compare_and_swap"): "compare_and_swap-lockall",
    # IMB-EXT (its banner: MPI-2 part), non-aggregate mode: one operation per MPI_Win_fence
    ("2", "Unidir_Put"): "put-fence", ("2", "Unidir_Get"): "get-fence",
    ("2", "Accumulate"): "accumulate-fence",
}


def _bench(part: str | None, name: str) -> str | None:
    return NAMES.get((part, name)) or NAMES.get((None, name))


class _Table:
    """The table being read: its benchmark, ranks, mode and columns."""

    def __init__(self, name: str):
        self.name = name
        self.np: int | None = None
        self.aggregate = False
        self.columns: list[str] = []


def parse(path: Path, text: str, choices: Choices) -> Parsed:
    figure = choices.figure_of(path, "IMB", FIGURES)
    runs: list[list[Figure]] = []
    unmapped: list[str] = []
    part: str | None = None
    table: _Table | None = None
    sums = Datatype.FLOAT  # IMB's default (-red_data_type), until its header says
    datatypes: set[Datatype] = set()
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if m := BANNER.search(line):
            part = m.group(1).removeprefix("MPI-").removesuffix(" (GPU)")
            runs.append([])
            table = None
            sums = Datatype.FLOAT
        elif line.startswith("# MPI_Datatype for reductions"):
            sums = datatype_named(path, n, "IMB", line.split(":", 1)[1])
        elif line.startswith("# Benchmarking "):
            if not runs:
                raise bad(path, n, "a table before IMB's banner ('Intel(R) MPI Benchmarks ... "
                          "part'): is this IMB output?")
            name = line.split()[2]
            if name.startswith("Multi-"):
                raise bad(path, n, f"{name}: IMB's -multi output (a table per group) is not "
                          "imported; run IMB without -multi")
            table = _Table(name)
        elif table is not None and line.startswith("# #processes ="):
            table.np = integer(path, n, line.split("=")[1].split()[0], "#processes")
        elif table is not None and "MODE:" in line:
            table.aggregate = "NON-AGGREGATE" not in line
        elif table is not None and ("#repetitions" in line):
            table.columns = line.split()
            if table.np is None:
                raise bad(path, n, f"IMB table {table.name} has no '# #processes = N' line")
        elif table is not None and table.columns and line and line[0].isdigit():
            got = _row(path, n, line, table, part, figure)
            if got is None:
                name = table.name + (" (aggregate mode)" if table.aggregate else "")
                if name not in unmapped:
                    unmapped.append(name)
            else:
                runs[-1].append(got)
                if BENCHMARKS[got.bench].sums:
                    datatypes.add(sums)
        elif table is not None and table.columns and not line:
            table = None
    runs = [_pure_first(r) for r in runs]
    return found(path, EXPECTED, runs, unmapped, datatype=one_datatype(path, "IMB", datatypes))


def _pure_first(figures: list[Figure]) -> list[Figure]:
    """A run's figures without an overlap table's t_pure where its _pure table also ran."""
    pure = {f.bench for f in figures if f.timing != "imb-t_pure"}
    return [f for f in figures if f.timing != "imb-t_pure" or f.bench not in pure]


def _row(path: Path, n: int, line: str, table: _Table, part: str | None,
         figure: str) -> Figure | None:
    """One row as a figure of mpiarena's benchmark, None where it has no counterpart."""
    bench = _bench(part, table.name)
    words = line.split()
    if len(words) != len(table.columns):
        raise bad(path, n, f"IMB {table.name} row has {len(words)} columns, its header "
                  f"{len(table.columns)}: the file is cut or garbled")
    if bench is None or table.aggregate:
        return None
    row = dict(zip(table.columns, words, strict=True))
    column = "t[usec]" if "t[usec]" in row else "t_pure[usec]" if "t_ovrl[usec]" in row \
        else f"{figure}[usec]"
    if column not in row:
        raise bad(path, n, f"IMB {table.name} has no {column} column (columns: "
                  f"{' '.join(table.columns)})")
    size = integer(path, n, row["#bytes"], "#bytes") if "#bytes" in row else 0
    value = number(path, n, row[column], column) * 1e-6
    timing = f"imb-{column.removesuffix('[usec]')}"
    assert table.np is not None
    return Figure(bench, size, table.np, value, timing, f"IMB {table.name} {column}", n)
