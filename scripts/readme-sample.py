#!/usr/bin/env python3
"""Write README.md's sample and docs/commands.md's table excerpt from a real run: what
`mpiarena show` prints of it (the first screen at 100 columns; the pingpong table with
`--tables`), between each file's sample markers, under a line that says which run, machine and
commit.

Usage: scripts/readme-sample.py [--db FILE] [--run ID]   (default: a new quick run, measured now
into a scratch store, as `make demo` runs it; the machine should be quiet)"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BEGIN, END = "<!-- sample: begin (scripts/readme-sample.py) -->", "<!-- sample: end -->"
SHOWN = 40  # lines of the first screen and what follows it


def mpiarena(*args: str, columns: int = 100) -> str:
    done = subprocess.run([sys.executable, "-c", "from mpiarena.commands import main; main()",
                           *args], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": str(columns)}, check=False)
    if done.returncode != 0:
        sys.exit(f"mpiarena {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def caption(db: str, run: str, what: str) -> str:
    """Which run this is: the command, the implementations, the machine, the day, the commit."""
    sys.path.insert(0, str(ROOT / "src"))
    from mpiarena.results import load
    from mpiarena.store import Store

    store = Store(Path(db))
    data = load(store, store.resolve(run))
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True, check=False).stdout.strip()
    m = data.machine
    ids = ", ".join(i.impl_id for i in data.implementations)
    command = re.sub(r" --db \S+", "", data.run.command)  # the scratch store is no one's
    return (f"`{command}` over the {len(data.implementations)} implementations a fresh "
            f"machine has ({ids}) on a {m.get('cores')}-core VM, {data.run.started[:10]}, "
            f"commit {commit or 'unknown'}; {what}:")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", help="a store holding the run (default: measure one now)")
    parser.add_argument("--run", default="latest")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        db = args.db or str(Path(scratch) / "sample.db")
        if args.db is None:
            mpiarena("run", "--suite", "quick", "--db", db)
        first = mpiarena("show", args.run, "--db", db).splitlines()[:SHOWN]
        write(ROOT / "README.md", caption(db, args.run, f"the first {SHOWN} lines of `mpiarena "
                                          "show` at 100 columns"), first)
        tables = mpiarena("show", args.run, "--tables", "--db", db, columns=160).splitlines()
        write(ROOT / "docs" / "commands.md", caption(db, args.run, "its pingpong table from "
                                                    "`mpiarena show RUN --tables` at 160 columns"),
              pingpong(tables))
    return 0


def pingpong(lines: list[str]) -> list[str]:
    """The pingpong table, its verdicts and switches: up to the next benchmark's title."""
    start = next(i for i, line in enumerate(lines) if line.startswith("pingpong: "))
    end = next((i for i in range(start + 1, len(lines)) if lines[i][:1].isalpha()), len(lines))
    return lines[start:end]


def write(path: Path, head: str, shown: list[str]) -> None:
    """shown, under head, between path's sample markers."""
    text = path.read_text()
    if BEGIN not in text or END not in text:
        sys.exit(f"{path} lacks the sample markers {BEGIN!r} and {END!r}")
    before, rest = text.split(BEGIN, 1)
    block = "\n".join([BEGIN, head, "", "```", *shown, "```", ""])
    path.write_text(before + block + END + rest.split(END, 1)[1])
    print(f"wrote {len(shown)} lines into {path}")


if __name__ == "__main__":
    sys.exit(main())
