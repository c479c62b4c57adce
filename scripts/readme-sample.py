#!/usr/bin/env python3
"""Write README.md's sample and docs/commands.md's table excerpt from a committed store
(tests/golden/four.db.gz: four MPI libraries, the floor): what `mpiarena show` prints of its
run (the first screen at 100 columns; the pingpong table with `--tables` at 160), between each
file's sample markers, under a line that says which run and machine. With --check, write
nothing and exit 1 where either file's block differs (tests/test_golden.py runs it so).

Usage: scripts/readme-sample.py [--db FILE.db.gz] [--check]"""

from __future__ import annotations

import argparse
import gzip
import io
import re
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BEGIN, END = "<!-- sample: begin (scripts/readme-sample.py) -->", "<!-- sample: end -->"
STORE = ROOT / "tests" / "golden" / "four.db.gz"
SHOWN = 16  # lines of the first screen


def shown(db: Path, columns: int, tables: bool = False) -> list[str]:
    """`mpiarena show latest` of the store at `columns`, no colour, as lines."""
    sys.path.insert(0, str(ROOT / "src"))
    from rich.console import Console

    from mpiarena.report.renderers import Format, RenderOptions, render
    from mpiarena.report.source import RunSource
    from mpiarena.store import Store

    store = Store(db)
    console = Console(file=io.StringIO(), width=columns, color_system=None, highlight=False,
                      force_terminal=False)
    text = render(RunSource(store, store.resolve("latest")), Format.TERMINAL,
                  RenderOptions(console, tables=tables))
    return text.splitlines()


def caption(db: Path, packed: Path, what: str) -> str:
    """Which run this is: the command, the implementations, the machine, the day, the store."""
    sys.path.insert(0, str(ROOT / "src"))
    from mpiarena.store import Store
    from mpiarena.store.results import load

    store = Store(db)
    data = load(store, store.resolve("latest"))
    m = data.machine
    ids = ", ".join(i.impl_id for i in data.implementations)
    command = re.sub(r" --db \S+", "", data.run.command)  # the scratch store is no one's
    return (f"`{command}` ({ids}) on a {m.get('cores')}-core VM shared with other work, "
            f"{data.run.started[:10]}; {what}, from {packed.relative_to(ROOT)}:")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=STORE, help="a gzipped store")
    parser.add_argument("--check", action="store_true", help="exit 1 where a block differs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        db = Path(scratch) / "sample.db"
        with gzip.open(args.db) as packed, db.open("wb") as out:
            shutil.copyfileobj(packed, out)
        first = shown(db, 100)[:SHOWN]
        blocks = {ROOT / "README.md": (caption(db, args.db, f"the first {SHOWN} lines of "
                                               "`mpiarena show` at 100 columns"), first),
                  ROOT / "docs" / "commands.md": (caption(db, args.db, "its pingpong table "
                                                          "from `mpiarena show RUN --tables` at "
                                                          "160 columns"),
                                                  pingpong(shown(db, 160, tables=True)))}
    stale = [path for path, (head, lines) in blocks.items() if write(path, head, lines,
                                                                     args.check)]
    for path in stale:
        print(f"{path.relative_to(ROOT)}: the sample differs from {args.db.name}'s render "
              "(run scripts/readme-sample.py)")
    return 1 if stale else 0


def pingpong(lines: list[str]) -> list[str]:
    """The pingpong table, its verdicts and switches: up to the next benchmark's title."""
    start = next(i for i, line in enumerate(lines) if line.startswith("pingpong: "))
    end = next((i for i in range(start + 1, len(lines)) if lines[i][:1].isalpha()), len(lines))
    return lines[start:end]


def write(path: Path, head: str, lines: list[str], check: bool) -> bool:
    """lines, under head, between path's sample markers; whether they differed (with check,
    nothing is written)."""
    text = path.read_text()
    if BEGIN not in text or END not in text:
        sys.exit(f"{path} lacks the sample markers {BEGIN!r} and {END!r}")
    before, rest = text.split(BEGIN, 1)
    block = "\n".join([BEGIN, head, "", "```", *lines, "```", ""])
    new = before + block + END + rest.split(END, 1)[1]
    if new != text and not check:
        path.write_text(new)
        print(f"wrote {len(lines)} lines into {path}")
    return new != text and check


if __name__ == "__main__":
    sys.exit(main())
