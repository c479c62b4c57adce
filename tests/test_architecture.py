"""docs/architecture.md cannot drift from the source tree: every module of src/mpiarena and
every file of the C core is named in its home bullet, every file the document names exists,
and the bullets and the layer list follow tests/test_layers.py.

A bullet is a line starting "- " and the indented lines under it. Its first word says what it
is home to: a package (`report/`, or `src/mpiarena/report/`) for that package's files (no
module sits at the top of src/mpiarena: tests/test_layers.py). A bare name (`text.py`) means
the file of the bullet's package;
a path (`report/text.py`, `tests/test_layers.py`) means itself, from src/mpiarena or the
repository's root, in any bullet.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

from test_layers import LAYERS, layer

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "mpiarena"
DOC = ROOT / "docs" / "architecture.md"
LAYER_NAMES = [name for name, _ in LAYERS]
C_CORE = "kernels"  # C, in no Python layer

FILE = re.compile(r"(?<![\w/.*-])((?:[\w.-]+/)*[\w-]+\.(?:py|c|h))(?![\w*])")
PACKAGE_HEAD = re.compile(r"`(?:src/mpiarena/)?([\w/]+)/`")


@dataclass(frozen=True)
class Bullet:
    home: str | None  # a package ('report'), or None for a bullet of no home
    text: str
    line: int


def bullets(text: str) -> list[Bullet]:
    """The document's bullets, and its other lines as bullets of no home."""
    found: list[Bullet] = []
    lines: list[str] = []
    start = 0

    def close() -> None:
        if lines:
            found.append(Bullet(_home(lines[0]), "\n".join(lines), start))
        lines.clear()

    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("- ") or not line.startswith(" ") or not lines:
            close()
            start = number
        lines.append(line)
    close()
    return found


def _home(first: str) -> str | None:
    if not first.startswith("- "):
        return None
    head = first[2:]
    m = PACKAGE_HEAD.match(head)
    return m.group(1) if m else None


def names(b: Bullet) -> list[tuple[str, int]]:
    """The file names a bullet holds, each with its line."""
    return [(m.group(1), b.line + b.text.count("\n", 0, m.start()))
            for m in FILE.finditer(b.text)]


def meaning(name: str, home: str | None) -> Path:
    """The file a name in a bullet of `home` stands for (it may not exist)."""
    if "/" in name:
        in_package = PACKAGE / name
        return in_package if in_package.exists() else ROOT / name
    return PACKAGE / (home or "") / name


def sources() -> list[Path]:
    """Every module of src/mpiarena but the packages' __init__.py, every file of the C core."""
    modules = [p for p in PACKAGE.rglob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    core = [*(PACKAGE / C_CORE).glob("*.c"), *(PACKAGE / C_CORE).glob("*.h")]
    return sorted(modules + core)


def home_of(path: Path) -> str:
    """The bullet a file must be named in: its package's."""
    return path.parent.relative_to(PACKAGE).as_posix()


def named_at_home(doc: list[Bullet]) -> set[Path]:
    """Files named bare in their home bullet, or by a path that places them."""
    named = set()
    for b in doc:
        for name, _ in names(b):
            path = meaning(name, b.home)
            if "/" in name or (path.exists() and home_of(path) == b.home):
                named.add(path)
    return named


def test_every_module_is_named_in_its_home_bullet():
    named = named_at_home(bullets(DOC.read_text()))
    missing = [f"{p.relative_to(PACKAGE)} (in the bullet of {home_of(p)})"
               for p in sources() if p not in named]
    assert not missing, "docs/architecture.md does not name:\n" + "\n".join(missing)


def test_every_file_named_exists():
    absent = [f"line {line}: {name}" for b in bullets(DOC.read_text())
              for name, line in names(b) if not meaning(name, b.home).exists()]
    assert not absent, "docs/architecture.md names files that do not exist:\n" + "\n".join(
        absent)


def rank(home: str) -> int:
    """The layer of a bullet's home, as tests/test_layers.py ranks them."""
    return layer(f"mpiarena.{home}")


def out_of_order(doc: list[Bullet]) -> list[str]:
    """Bullets whose layer is below the one before them (the C core's has none)."""
    ranked = [(b, rank(b.home)) for b in doc if b.home and b.home != C_CORE]
    return [f"line {b.line}: {b.home} after {a.home}"
            for (a, ra), (b, rb) in pairwise(ranked) if rb < ra]


def test_every_package_has_a_bullet_in_layer_order():
    doc = bullets(DOC.read_text())
    homes = {b.home for b in doc}
    packages = sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py"))
    lacking = [h for h in [C_CORE, *packages] if h not in homes]
    assert not lacking, f"docs/architecture.md has no bullet for {lacking}"
    wrong = out_of_order(doc)
    assert not wrong, "bullets out of tests/test_layers.py's order:\n" + "\n".join(wrong)


def test_the_layer_list_is_test_layers():
    listed = re.search(r"down the layers[^(]*\(([^)]*)\)", " ".join(DOC.read_text().split()))
    assert listed, "docs/architecture.md lists no layers ('down the layers ... (a, b, ...)')"
    assert [w.strip() for w in listed.group(1).split(",")] == LAYER_NAMES


def test_the_names_are_read_as_their_files():
    """The reading itself: a bare name is its bullet's package's, a path anywhere is itself,
    a name at home is named there only, and a file the tree lacks is caught."""
    doc = bullets("- `report/` `text.py`, `plan.py`\n  `cell.c` and `analysis/run.py`\n"
                  "- `base/` `errors.py`, `reproduction.py`\n- `kernels/` `cell.c`\n")
    assert [b.home for b in doc] == ["report", "base", "kernels"]
    named = named_at_home(doc)
    assert {PACKAGE / "report/text.py", PACKAGE / "analysis/run.py", PACKAGE / "base/errors.py",
            PACKAGE / "kernels/cell.c"} <= named
    assert PACKAGE / "report/plan.py" not in named  # platform's, not report's
    assert not (PACKAGE / "base/reproduction.py").exists()
    assert meaning("cell.c", "report") == PACKAGE / "report/cell.c"  # not there: caught
    assert ("analysis/run.py", 2) in names(doc[0])
    assert meaning("tests/test_layers.py", None) == ROOT / "tests/test_layers.py"
    assert out_of_order(doc) == ["line 3: base after report"]  # kernels: none
