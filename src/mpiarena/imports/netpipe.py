"""NetPIPE output: its np.out (three columns: bytes, Mbps, seconds) or what it prints while it
runs ("N: B bytes R times --> X Mbps in T usec", on stderr). NetPIPE's time is one way, half
the round trip, the best of its trials: mpiarena's pingpong at 2 ranks. Sizes restart from the
smallest where a file holds several runs."""

from __future__ import annotations

import re
from pathlib import Path

from .records import Choices, Figure, Parsed, SuiteRun, bad, integer, number

# one size's line "N: B bytes R times --> X Mbps in T usec" is written in parts, and another
# process's output (its other rank's, the launcher's) may land between them, even mid-line:
# a size is its head and the next tail with no other head between them
SIZE = re.compile(r"(\d+) bytes\s+\d+ times -->(?:(?!\d+ bytes\s+\d+ times -->).)*?"
                  r"(\S+) Mbps in\s+(\S+) usec", re.S)


def parse(path: Path, text: str, choices: Choices) -> Parsed:
    if choices.figure is not None:
        raise bad(path, 0, "NetPIPE gives one figure per size; --figure is for imb and osu")
    figures = _printed(path, text) if "times -->" in text else _np_out(path, text)
    runs: list[list[Figure]] = []
    last = None
    for figure in figures:
        if last is None or figure.size <= last:
            runs.append([])
        last = figure.size
        runs[-1].append(figure)
    if not runs:
        raise bad(path, 1, "no NetPIPE figures in the file (np.out: bytes, Mbps, seconds)")
    return Parsed(path, "netpipe", tuple(SuiteRun(tuple(r)) for r in runs))


def _figure(line: int, size: int, seconds: float) -> Figure:
    return Figure("pingpong", size, 2, seconds, "netpipe-best", "NetPIPE", line)


def _printed(path: Path, text: str) -> list[Figure]:
    """What NetPIPE printed while it ran: its sizes wherever other output split them."""
    figures, line, at = [], 1, 0
    for m in SIZE.finditer(text):
        line, at = line + text.count("\n", at, m.start()), m.start()
        figures.append(_figure(line, integer(path, line, m.group(1), "bytes"),
                               number(path, line, m.group(3), "usec") * 1e-6))
    return figures


def _np_out(path: Path, text: str) -> list[Figure]:
    """np.out: bytes, Mbps and seconds on each line."""
    figures = []
    for n, raw in enumerate(text.splitlines(), start=1):
        words = raw.split()
        if not words:
            continue
        if len(words) < 3:
            raise bad(path, n, f"'{raw.strip()[:60]}' is not a NetPIPE line (np.out: bytes, "
                      "Mbps, seconds; stdout: 'N: B bytes R times --> X Mbps in T usec')")
        number(path, n, words[1], "Mbps")
        figures.append(_figure(n, integer(path, n, words[0], "bytes"),
                               number(path, n, words[2], "seconds")))
    return figures
