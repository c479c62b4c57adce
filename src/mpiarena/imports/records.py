"""What a suite's output file holds once read: its figures, each mapped onto one of mpiarena's
benchmarks in the store's unit, grouped by the run of the suite they came from."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..base.errors import ArenaError
from ..base.records import Datatype

# What each suite measured, as the store's cells.timing records it (report/summary.py words it)
TIMING = {
    "osu-mean": "OSU's mean over the iterations of one run (point-to-point: rank 0; one-way "
                "latency is half the round trip; bandwidth: bytes over the time of a window)",
    "osu-mean-avg": "OSU's average over ranks of each rank's mean per call (a collective's "
                    "Avg Latency)",
    "osu-mean-max": "OSU's largest over ranks of each rank's mean per call (-f, Max Latency)",
    "osu-mean-min": "OSU's smallest over ranks of each rank's mean per call (-f, Min Latency)",
    "imb-t": "IMB's t (PingPong: half the round trip, mean over the repetitions)",
    "imb-t_max": "IMB's t_max (the largest over ranks of each rank's mean per call, IMB's "
                 "barrier between calls)",
    "imb-t_avg": "IMB's t_avg (the average over ranks of each rank's mean per call)",
    "imb-t_min": "IMB's t_min (the smallest over ranks of each rank's mean per call)",
    "imb-t_pure": "IMB-NBC's t_pure (the slowest rank's time of the non-blocking call then "
                  "its wait, no computation)",
    "netpipe-best": "NetPIPE's one-way time (half the round trip), the best of its trials",
}
SUITE_PREFIX = "imported "  # a run's suite column: "imported osu"
IMPORTED_METHOD = ("Imported from {suite} output, not measured by mpiarena: each run of the suite "
                   "(with --launch-per-file, each file) is one launch, up to {launches} a "
                   "variant; each figure the suite printed is one observation (ReproMPI: each "
                   "repetition), as the suite measured it (below). ")


def imported_suite(suite: str) -> str | None:
    """The suite an imported run's figures came from (None: mpiarena measured the run)."""
    return suite.removeprefix(SUITE_PREFIX) if suite.startswith(SUITE_PREFIX) else None


REPRO_TIMING = ("ReproMPI's {sync} (process synchronisation, then runtime type): each "
                "repetition one call, one observation, the largest over ranks")


def timing_text(method: str) -> str | None:
    """What an imported timing method means in words (None: not an imported one)."""
    if method.startswith("repro-"):
        return REPRO_TIMING.format(sync=method.removeprefix("repro-"))
    return TIMING.get(method)


@dataclass(frozen=True)
class Figure:
    """One figure of the suite, as one observation of one of mpiarena's benchmarks: `value` in
    the benchmark's unit (seconds as mpiarena's benchmark defines them, e.g. pingpong's half
    round trip, bibw's time per window)."""

    bench: str
    size: int
    np: int
    value: float
    timing: str  # what the suite measured (TIMING)
    source: str  # the suite's name for it, e.g. "osu_latency", "IMB PingPong t[usec]"
    line: int  # where in the file


@dataclass(frozen=True)
class SuiteRun:
    """What one run of the suite printed (a file holds one or several, concatenated)."""

    figures: tuple[Figure, ...]


@dataclass(frozen=True)
class Parsed:
    """A file of a suite's output: its runs, what in it has no counterpart in mpiarena, the
    window its bandwidth figures were converted with (None: none) and the datatype its sums
    (reductions) added up (None: it has none, or the suite does not say)."""

    path: Path
    suite: str
    runs: tuple[SuiteRun, ...]
    unmapped: tuple[str, ...] = ()
    window: int | None = None
    datatype: Datatype | None = None


@dataclass(frozen=True)
class Choices:
    """What the command line chose for a suite's figures: which column (IMB: t_min, t_avg or
    t_max; OSU -f: avg, min or max; None: the suite's default) and the rank count where the
    file does not say (OSU's collectives)."""

    figure: str | None = None
    np: int | None = None

    def figure_of(self, path: Path, suite: str, figures: tuple[str, ...]) -> str:
        """The chosen figure among the suite's (the first is its default); one line if it has
        no such figure."""
        figure = self.figure or figures[0]
        if figure not in figures:
            raise bad(path, 0, f"{suite} has no figure '{figure}'; --figure takes "
                      f"{', '.join(figures)}")
        return figure


@dataclass(frozen=True)
class Expected:
    """A suite as its parser names it: its name, the line said when no run of it began in a
    file (`header`), and what its parts are called (IMB tables...)."""

    suite: str
    header: str
    parts: str


def found(path: Path, expected: Expected, runs: list[list[Figure]], unmapped: list[str],
          window: int | None = None, datatype: Datatype | None = None) -> Parsed:
    """What a parser found, or one line: the expected header when no run of the suite began in
    the file; when none of its runs has a figure to import, the parts it held."""
    if not runs:
        raise bad(path, 1, expected.header)
    if not any(runs):
        raise bad(path, 1, f"no figures mpiarena can import ({expected.parts}: "
                  f"{', '.join(unmapped) or 'none'})")
    return Parsed(path, expected.suite, tuple(SuiteRun(tuple(r)) for r in runs), tuple(unmapped),
                  window, datatype)


def one_datatype(path: Path, suite: str, used: set[Datatype]) -> Datatype | None:
    """The one datatype a file's sums added up (None: it has no sums), or one line: figures
    of two datatypes are two measurements, never one cell's."""
    if len(used) > 1:
        raise bad(path, 0, f"{suite} sums of different datatypes "
                  f"({', '.join(sorted(t.mpi for t in used))}): import them separately")
    return next(iter(used), None)


def datatype_named(path: Path, line: int, suite: str, name: str) -> Datatype:
    """A datatype as a suite's output names it ('MPI_CHAR.'), or one line if it is not one of
    those mpiarena records."""
    if (datatype := Datatype.of_mpi(name)) is None:
        raise bad(path, line, f"{suite} summed {name.strip().rstrip('.')}: mpiarena records "
                  f"{', '.join(t.mpi for t in Datatype)}")
    return datatype


def bad(path: Path, line: int, what: str) -> ArenaError:
    """A file that is not what it claims: one line naming the file and line."""
    where = f"{path}:{line}" if line else str(path)
    return ArenaError(f"{where}: {what}")


def number(path: Path, line: int, text: str, what: str) -> float:
    """A float from the file, or a clear error naming the file and line."""
    try:
        value = float(text)
    except ValueError:
        raise bad(path, line, f"'{text}' is not a number ({what})") from None
    if value != value or value < 0:
        raise bad(path, line, f"'{text}' is not a figure ({what})")
    return value


def integer(path: Path, line: int, text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise bad(path, line, f"'{text}' is not a whole number ({what})") from None
