#!/usr/bin/env python3
"""Write the golden renders: each committed store under tests/golden/ (a gzipped SQLite file)
rendered as `show` (100 columns, no colour), `report --format md` and `export --summary`
print its latest run, into tests/golden/expected/. tests/test_golden.py renders them the same
way and compares, so a change of output is a reviewed diff of these files.

Usage: scripts/update-goldens.py   (then review `git diff tests/golden/expected`)"""

from __future__ import annotations

import gzip
import io
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
EXPECTED = GOLDEN / "expected"
COLUMNS = 100
# the file each render goes to, after the store's name, and the format asked for (the summary
# export as CSV: its records, each cell's figures and verdicts; the JSON adds what ran, large)
RENDERS = {"show.txt": "terminal", "report.md": "md", "summary.csv": "summary-csv"}


def stores() -> list[Path]:
    """The committed stores, by name."""
    return sorted(GOLDEN.glob("*.db.gz"))


def opened(store: Path, scratch: Path) -> Path:
    """The store unpacked into scratch (opening a store may write to it: never the committed
    one)."""
    db = scratch / store.name.removesuffix(".gz")
    with gzip.open(store) as packed, db.open("wb") as out:
        shutil.copyfileobj(packed, out)
    return db


def renders(store: Path) -> dict[str, str]:
    """Each render of the store's latest run, by the file it is kept in."""
    sys.path.insert(0, str(ROOT / "src"))
    from rich.console import Console

    from mpiarena.report.renderers import Format, RenderOptions, render
    from mpiarena.report.source import RunSource
    from mpiarena.store import Store

    name = store.name.removesuffix(".db.gz")
    with tempfile.TemporaryDirectory() as scratch:
        db = Store(opened(store, Path(scratch)))
        console = Console(file=io.StringIO(), width=COLUMNS, color_system=None,
                          highlight=False, force_terminal=False)
        source = RunSource(db, db.resolve("latest"))
        return {f"{name}.{suffix}": render(source, Format(fmt), RenderOptions(console))
                for suffix, fmt in RENDERS.items()}


def main() -> int:
    EXPECTED.mkdir(exist_ok=True)
    for store in stores():
        for file, text in renders(store).items():
            (EXPECTED / file).write_bytes(text.encode())  # as rendered: CSV's line ends kept
            print(f"wrote {EXPECTED.relative_to(ROOT) / file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
