"""Results of other suites (OSU, IMB, NetPIPE, ReproMPI) read from their own output: one parser
module per suite, each turning a file into `records.Parsed`; `ingest` stores them as a run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..base.errors import ArenaError
from . import imb, netpipe, osu, repro
from .records import Choices, Parsed

PARSERS: dict[str, Callable[[Path, str, Choices], Parsed]] = {
    "osu": osu.parse, "imb": imb.parse, "netpipe": netpipe.parse, "repro": repro.parse}


def read(suite: str, path: Path, choices: Choices) -> Parsed:
    """A file of `suite`'s output, parsed; a file that is not is one line naming it."""
    try:
        text = path.read_text(errors="replace")
    except OSError as e:
        raise ArenaError(f"cannot read {path}: {e.strerror}") from e
    return PARSERS[suite](path, text, choices)
