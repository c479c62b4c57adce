"""NetPIPE output: its np.out (three columns: bytes, Mbps, seconds) or what it prints while it
runs ("N: B bytes R times --> X Mbps in T usec", on stderr). NetPIPE's time is one way, half
the round trip, the best of its trials: mpiarena's pingpong at 2 ranks. Sizes restart from the
smallest where a file holds several runs."""

from __future__ import annotations

import re
from pathlib import Path

from .records import Choices, Figure, Parsed, SuiteRun, bad, integer, number

# the counter "N:" and the rest are two writes: another process's output may split them
STDOUT = re.compile(r"^\s*(?:\d+:)?\s*(\d+) bytes\s+\d+ times -->\s+(\S+) Mbps in\s+(\S+) usec")
COUNTERS = re.compile(r"^(\d+:\s*)+")
NOISE = ("Sending output to", "Now starting", "Receiving", "Latency:", "Sync Time:",
         "Starting", "Using", "Send and receive", "Printing", "Preposting")


def parse(path: Path, text: str, choices: Choices) -> Parsed:
    if choices.figure is not None:
        raise bad(path, 0, "NetPIPE gives one figure per size; --figure is for imb and osu")
    runs: list[list[Figure]] = []
    last = None
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        bare = COUNTERS.sub("", line)  # a counter, or counters split from their lines
        if not bare or bare.startswith(NOISE) or (bare != line and re.match(r"^\S+$", bare)):
            continue  # blank, NetPIPE's chatter, "0: host", counters split from their lines
        if m := STDOUT.match(line) or STDOUT.match(bare):
            size, seconds = int(m.group(1)), number(path, n, m.group(3), "usec") * 1e-6
        else:
            words = line.split()
            if len(words) < 3:
                raise bad(path, n, f"'{line[:60]}' is not a NetPIPE line (np.out: bytes, Mbps, "
                          "seconds; stdout: 'N: B bytes R times --> X Mbps in T usec')")
            size = integer(path, n, words[0], "bytes")
            number(path, n, words[1], "Mbps")
            seconds = number(path, n, words[2], "seconds")
        if last is None or size <= last:
            runs.append([])
        last = size
        runs[-1].append(Figure("pingpong", size, 2, seconds, "netpipe-best", "NetPIPE", n))
    if not runs:
        raise bad(path, 1, "no NetPIPE figures in the file (np.out: bytes, Mbps, seconds)")
    return Parsed(path, "netpipe", tuple(SuiteRun(tuple(r)) for r in runs))
