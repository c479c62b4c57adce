"""ReproMPI's per-repetition output: header comments ("#@nprocs=4", "#@sync=MPI_Barrier",
"#@datatype_size_bytes=1"...) then a table "test nrep count|msize_bytes [errorcode] runtime_sec",
one row per repetition: the call's time, the largest over ranks, timed by the run's
synchronisation method (#@procsync: MPI_Barrier, a window on a global clock...) and runtime
type (#@runtime_type: local or global times). Each repetition is one observation of one launch;
a repetition whose errorcode is not 0 (it missed its window) is left out, as ReproMPI's own
summary leaves it out. A run starts at its "#MPI calls:" header."""

from __future__ import annotations

import math
from pathlib import Path

from .records import Choices, Expected, Figure, Parsed, bad, found, integer, number

CALLS = {"MPI_Allreduce": "allreduce", "MPI_Bcast": "bcast", "MPI_Reduce": "reduce",
         "MPI_Allgather": "allgather", "MPI_Alltoall": "alltoall", "MPI_Gather": "gather",
         "MPI_Scatter": "scatter", "MPI_Barrier": "barrier", "MPI_Scan": "scan",
         "MPI_Exscan": "exscan", "MPI_Reduce_scatter_block": "reduce_scatter_block",
         "MPI_Allgatherv": "allgatherv", "MPI_Alltoallv": "alltoallv",
         "MPI_Gatherv": "gatherv", "MPI_Scatterv": "scatterv"}
SYNC_KEYS = ("procsync", "process_sync", "sync", "windowsync")
EXPECTED = Expected("repro", "no ReproMPI header ('#MPI calls:', '#@nprocs=N'): not ReproMPI's "
                    "output", "ReproMPI calls")


class _Run:
    def __init__(self, line: int):
        self.line = line
        self.keys: dict[str, str] = {}
        self.columns: list[str] = []

    def timing(self) -> str:
        """repro-<process synchronisation>[-<runtime type>], e.g. repro-window-global."""
        sync = next((self.keys[k] for k in SYNC_KEYS if k in self.keys), "MPI_Barrier")
        kind = self.keys.get("runtime_type")
        return f"repro-{sync}" + (f"-{kind}" if kind else "")


def parse(path: Path, text: str, choices: Choices) -> Parsed:
    if choices.figure is not None:
        raise bad(path, 0, "ReproMPI gives one figure per repetition; --figure is for imb and "
                  "osu")
    runs: list[list[Figure]] = []
    unmapped: list[str] = []
    run: _Run | None = None
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if line.startswith("#MPI calls:"):
            run = _Run(n)
            runs.append([])
        elif not line or line.startswith("# "):
            continue
        elif run is None and line.startswith("#"):
            continue  # "#Command-Line Arguments: ..." before the header
        elif run is None:
            raise bad(path, n, "text before ReproMPI's header ('#MPI calls:'): is this "
                      "ReproMPI's output?")
        elif line.startswith("#@") and "=" in line:
            key, _, value = line[2:].partition("=")
            run.keys[key.strip()] = value.strip()
        elif line.startswith("#"):
            continue
        elif line.split()[:2] == ["test", "nrep"]:
            run.columns = line.split()
            if "runtime_sec" not in run.columns:
                raise bad(path, n, "ReproMPI's verbose output (per-process start and end "
                          "times) is not imported; rerun without --verbose")
        elif line.split()[:2] == ["test", "count"] or "total_nrep" in line:
            raise bad(path, n, "ReproMPI's --summary output holds no repetitions; rerun "
                      "without --summary and import that")
        elif not run.columns:
            raise bad(path, n, "ReproMPI figures before its column header ('test nrep count "
                      "runtime_sec')")
        else:
            figure = _row(path, n, line, run, choices.np)
            if isinstance(figure, str):
                if figure not in unmapped:
                    unmapped.append(figure)
            else:
                runs[-1].append(figure)
    return found(path, EXPECTED, runs, unmapped)


def _row(path: Path, n: int, line: str, run: _Run, np: int | None) -> Figure | str:
    """A repetition's figure (NaN where it missed its window); the call's name where mpiarena
    has no counterpart."""
    words = line.split()
    if len(words) != len(run.columns):
        raise bad(path, n, f"ReproMPI row has {len(words)} columns, its header "
                  f"{len(run.columns)}: the file is cut or garbled")
    row = dict(zip(run.columns, words, strict=True))
    bench = CALLS.get(row["test"])
    if bench is None:
        return row["test"]
    ranks = run.keys.get("nprocs")
    if ranks is None and np is None:
        raise bad(path, n, "ReproMPI's header has no '#@nprocs=N' line; give --np N")
    if "msize_bytes" in row:
        size = integer(path, n, row["msize_bytes"], "msize_bytes")
    else:
        count = integer(path, n, row.get("count", row.get("msize", "")), "count")
        size = count * integer(path, n, run.keys.get("datatype_size_bytes", "1"),
                               "#@datatype_size_bytes")
    value = number(path, n, row["runtime_sec"], "runtime_sec") \
        if row.get("errorcode", "0") == "0" else math.nan
    nranks = np if ranks is None else integer(path, run.line, ranks, "#@nprocs")
    assert nranks is not None
    return Figure(bench, 0 if bench == "barrier" else size, nranks, value,
                  run.timing(), f"ReproMPI {row['test']}", n)
