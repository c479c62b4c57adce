"""OSU micro-benchmarks output (5.x to 7.x): point-to-point latency and bandwidth, collectives
(with or without -f's Min/Max/Iterations columns), non-blocking collectives and one-sided.

A run starts at OSU's title line ("# OSU MPI Allreduce Latency Test v7.3"), which names the
test; a one-sided test says its synchronisation ("# Synchronization: MPI_Win_flush"). Latency is
microseconds (point-to-point: one way, half the round trip, as mpiarena's pingpong); bandwidth
is MB/s (10^6 bytes per second), turned into mpiarena's time per message (osu_bw -> ping) or
per window (osu_bibw -> bibw, osu_put_bw -> put-bw-*; OSU's window, 64 unless the file says).
OSU does not print how many ranks ran a collective: --np says it. OSU 7 sums MPI_CHAR unless
its -T says otherwise, and prints which ("# Datatype: MPI_CHAR."); OSU 5 and 6 sum MPI_FLOAT.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
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

WINDOW = 64  # OSU's default window of bandwidth tests
# OSU's name of a collective in its title (5.x: "Broadcast", "All-to-All Personalized
# Exchange"; 7.x: "Bcast", "Alltoall") -> mpiarena's benchmark
OPS = {"allreduce": "allreduce", "broadcast": "bcast", "bcast": "bcast", "reduce": "reduce",
       "allgather": "allgather", "allgatherv": "allgatherv", "gather": "gather",
       "gatherv": "gatherv", "scatter": "scatter", "scatterv": "scatterv", "barrier": "barrier",
       "all-to-all personalized exchange": "alltoall", "all-to-all": "alltoall",
       "alltoall": "alltoall", "all-to-allv personalized exchange": "alltoallv",
       "alltoallv": "alltoallv", "reduce_scatter_block": "reduce_scatter_block"}
COLLECTIVES = frozenset(OPS.values())
NONBLOCKING = ("ibcast", "iallgather", "ialltoall", "ireduce", "iallreduce", "ibarrier")
RMA = {"mpi_put": "put", "mpi_get": "get", "mpi_accumulate": "accumulate",
       "mpi_get_accumulate": "get_accumulate", "mpi_fetch_and_op": "fetch_and_op",
       "mpi_compare_and_swap": "compare_and_swap"}
SYNCS = {"MPI_Win_flush": "lockall", "MPI_Win_lock/unlock": "lock", "MPI_Win_fence": "fence",
         "MPI_Win_post/start/complete/wait": "pscw"}
FIGURES = ("avg", "min", "max")
EXPECTED = Expected("osu", "no OSU title line ('# OSU MPI ... Test vN'): not the output of an "
                    "OSU micro-benchmark", "OSU tests")


class _Test:
    """The test a run's title names, and what its header lines said."""

    def __init__(self, title: str, version: int):
        self.title = title
        self.sync = "MPI_Win_flush"  # OSU's default for one-sided latency
        # what its sums add up: OSU 7's default (its "# Datatype:" line says), before it floats
        self.datatype = Datatype.CHAR if version >= 7 else Datatype.FLOAT
        self.window = WINDOW
        self.pairs = 1
        self.columns: list[str] = []

    def what(self) -> tuple[str | None, str]:
        """(mpiarena's benchmark or None, how its figure reads: us, mbs, mbs-window)."""
        t = self.title.lower()
        op, _, kind = t.rpartition(" ")
        if t == "latency":
            return "pingpong", "us"
        if t == "bandwidth":
            return "ping", "mbs"
        if t == "bi-directional bandwidth":
            return "bibw", "mbs-window2"
        if t == "multiple bandwidth / message rate":
            return ("ping" if self.pairs == 1 else None), "mbs"
        if kind == "latency" and op in OPS:
            return OPS[op], "us"
        if kind == "latency" and op.startswith("non-blocking "):
            name = "i" + OPS.get(op.removeprefix("non-blocking "), "?")
            return (name if name in NONBLOCKING else None), "pure"
        sync = SYNCS.get(self.sync)
        if op in RMA and sync is not None and kind == "latency":
            return f"{RMA[op]}-{sync}", "us"
        if op in ("mpi_put", "mpi_get") and sync is not None and kind == "bandwidth":
            return f"{RMA[op]}-bw-{sync}", "mbs-window"
        return None, ""


def _title(line: str) -> str:
    """'# OSU MPI-CUDA Allreduce Latency Test v7.3' -> 'Allreduce Latency'; 'MPI_Put-CUDA
    Latency' -> 'MPI_Put Latency'."""
    t = re.sub(r"\s+v?\d[\d.]*\w*\s*$", "", line.removeprefix("# OSU").strip())
    t = re.sub(r"-(CUDA|OPENACC|ROCM)\b", "", t, flags=re.IGNORECASE)
    t = re.sub(r"\s+Test$", "", t)
    return re.sub(r"^MPI(-\w+)?\s+", "", t)


def _version(line: str) -> int:
    """The major version a title line ends with ('... Test v7.3' -> 7; none: 0)."""
    m = re.search(r"v?(\d+)[\d.]*\w*\s*$", line)
    return int(m.group(1)) if m else 0


def _columns(line: str) -> list[str]:
    """'# Size      Avg Latency(us)   Min Latency(us)' -> ['Size', 'Avg Latency(us)', ...]."""
    return [c for c in re.split(r"\s{2,}|\t", line.lstrip("#").strip()) if c]


def parse(path: Path, text: str, choices: Choices) -> Parsed:
    chosen = Choices(choices.figure_of(path, "OSU", FIGURES), choices.np)
    runs: list[list[Figure]] = []
    unmapped: list[str] = []
    windows: set[int] = set()
    datatypes: set[Datatype] = set()
    test: _Test | None = None
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if line.startswith("# OSU"):
            test = _Test(_title(line), _version(line))
            runs.append([])
        elif not line:
            continue
        elif test is None:
            raise bad(path, n, "text before OSU's title line ('# OSU MPI ... Test vN'): is this "
                      "the output of an OSU micro-benchmark?")
        elif line.startswith("# Synchronization:"):
            test.sync = line.split(":", 1)[1].strip()
        elif line.startswith("# Datatype:"):
            test.datatype = datatype_named(path, n, "OSU", line.split(":", 1)[1])
        elif m := re.search(r"pairs:\s*(\d+)", line):
            test.pairs = int(m.group(1))
            if w := re.search(r"window size:\s*(\d+)", line):
                test.window = int(w.group(1))
        elif line.startswith("#") and re.search(r"Size|Latency|MB/s|Bandwidth", line):
            test.columns = _columns(line)
        elif line.startswith("#"):
            continue
        elif not test.columns:
            raise bad(path, n, f"OSU {test.title} figures before its column header "
                      "('# Size  Latency (us)')")
        else:
            bench, reads = test.what()
            if bench is None:
                if test.title not in unmapped:
                    unmapped.append(test.title)
                continue
            runs[-1].append(_figure(_Row(path, n, line), test, bench, reads, chosen))
            if BENCHMARKS[bench].sums:
                datatypes.add(test.datatype)
            if reads.startswith("mbs-window"):
                windows.add(test.window)
    if len(windows) > 1:
        raise bad(path, 0, f"bandwidth tests with different windows ({sorted(windows)}): import "
                  "them separately")
    return found(path, EXPECTED, runs, unmapped, windows.pop() if windows else None,
                 one_datatype(path, "OSU", datatypes))


@dataclass(frozen=True)
class _Row:
    """A line of figures in a file, and its number."""

    path: Path
    n: int
    line: str


def _figure(row: _Row, test: _Test, bench: str, reads: str, chosen: Choices) -> Figure:
    """The row's figure of `bench`, read as `reads` says, in the chosen figure (its column)."""
    path, n, line = row.path, row.n, row.line
    figure, np = chosen.figure or FIGURES[0], chosen.np
    words = line.split()
    sized = test.columns[0].lower().startswith("size")
    columns = test.columns if sized else ["Size", *test.columns]
    words = words if sized else ["0", *words]
    values = [w for w in words if not w.isalpha()]  # OSU 7's Pass/Fail validation column
    if len(values) < 2:
        raise bad(path, n, f"OSU {test.title} row '{line[:60]}' has no figure")
    size = integer(path, n, values[0], "Size")
    pick = _column(row, test, columns, reads, bench, figure)
    if pick >= len(values):
        raise bad(path, n, f"OSU {test.title} row has {len(values)} columns, its header "
                  f"{len(columns)}: the file is cut or garbled")
    raw = number(path, n, values[pick], columns[pick])
    collective = bench in COLLECTIVES or bench in NONBLOCKING
    if collective and np is None:
        raise bad(path, n, f"OSU {test.title}: OSU does not print how many ranks ran it; give "
                  "--np N")
    ranks = (np or 2) if collective else 2 * test.pairs
    if reads.startswith("mbs"):
        per = size * (test.window if reads.startswith("mbs-window") else 1)
        value = per * (2 if reads == "mbs-window2" else 1) / (raw * 1e6) if raw > 0 else 0.0
    else:
        value = raw * 1e-6
    timing = "osu-mean" if not collective else \
        "osu-mean-avg" if reads == "pure" else f"osu-mean-{figure}"
    return Figure(bench, size, ranks, value, timing, f"OSU {test.title} {columns[pick]}", n)


def _column(row: _Row, test: _Test, columns: list[str], reads: str, bench: str,
            figure: str) -> int:
    """Which column holds the figure: the first after Size, a collective's chosen one (-f)."""
    path, n = row.path, row.n
    if reads == "pure":
        found = [i for i, c in enumerate(columns) if c.lower().startswith("pure comm")]
        if not found:
            raise bad(path, n, f"OSU {test.title} has no 'Pure Comm.(us)' column")
        return found[0]
    if bench in COLLECTIVES and figure != "avg":
        found = [i for i, c in enumerate(columns) if c.lower().startswith(figure)]
        if not found:
            raise bad(path, n, f"OSU {test.title} has no {figure.capitalize()} Latency column: "
                      "it was run without -f; import it with --figure avg")
        return found[0]
    return 1
