"""docs/glossary.md's table holds in the code: every name it gives a concept exists in
src/mpiarena (a module or an identifier), and no module or identifier matches a spelling the
table rules out, so that one concept keeps one noun."""

from __future__ import annotations

import io
import re
import tokenize
from fnmatch import fnmatchcase
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "mpiarena"
GLOSSARY = ROOT / "docs" / "glossary.md"
CODE = re.compile(r"`([^`]+)`")


def rows() -> list[tuple[str, list[str], list[str]]]:
    """(noun, names in code, spellings ruled out) per row of the table."""
    out = []
    for line in GLOSSARY.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[1] not in ("noun", "---"):
            out.append((cells[1], CODE.findall(cells[2]), CODE.findall(cells[3])))
    return out


def names(text: str) -> set[str]:
    return {t.string for t in tokenize.generate_tokens(io.StringIO(text).readline)
            if t.type == tokenize.NAME}


def code_names() -> dict[str, set[Path]]:
    """Every identifier and module (by its path in the package, `commands/tune.py`) of
    src/mpiarena, with the files it appears in."""
    found: dict[str, set[Path]] = {}
    for path in PACKAGE.rglob("*.py"):
        for name in names(path.read_text()) | {path.relative_to(PACKAGE).as_posix()}:
            found.setdefault(name, set()).add(path.relative_to(PACKAGE))
    return found


def ruled_out(name: str, patterns: list[str], allowed: set[str]) -> bool:
    return name not in allowed and any(fnmatchcase(name, p) for p in patterns)


def test_every_noun_of_the_glossary_is_in_the_code():
    found = code_names()
    missing = [f"{noun}: {n}" for noun, given, _ in rows() for n in given if n not in found]
    assert rows() and not missing, "docs/glossary.md names what the code lacks:\n" + "\n".join(
        missing)


def test_no_identifier_spells_a_concept_another_way():
    table = rows()
    allowed = {n for _, given, _ in table for n in given}
    found = code_names()
    wrong = sorted(f"{name} ({', '.join(sorted(map(str, files)))}): not {noun}'s spelling"
                   for noun, _, never in table for name, files in found.items()
                   if ruled_out(name, never, allowed))
    assert not wrong, "identifiers the glossary rules out:\n" + "\n".join(wrong)


def test_the_check_catches_an_old_spelling():
    table = {noun: never for noun, _, never in rows()}
    allowed = {n for _, given, _ in rows() for n in given}
    planted = names("def measure_app(lib):\n    return AppRunner(lib)\n")
    caught = {n for n in planted for never in table.values() if ruled_out(n, never, allowed)}
    assert caught == {"measure_app", "lib", "AppRunner"}
