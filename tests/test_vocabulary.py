"""One vocabulary: a decision's words are the enums of analysis/verdicts.py, compared as members
and never as strings outside that module, and no two classes or type aliases share a name.

Read from every module's source (as tests/test_layers.py reads imports): a comparison (==, !=,
in, not in, a match case), a count of a word, or a table keyed only by words, with a string
literal that is one of the enums' words, fails; so does a template comparing to one.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from mpiarena.analysis import verdicts

SRC = Path(__file__).resolve().parent.parent / "src" / "mpiarena"
HOME = SRC / "analysis" / "verdicts.py"
# words of the enums that also name something else, compared as that
OTHER_MEANINGS = {
    "failed": "a cell's, job's or launch's status (status.py)",
    "better": "a study claim's check (studies.CHECKS)",
}
WORDS = {m.value for e in vars(verdicts).values()
         if isinstance(e, type) and issubclass(e, StrEnum) and e is not StrEnum
         for m in e} - set(OTHER_MEANINGS)
# a class, or a module-level type alias (CapWords = a type)
ALIAS = re.compile(r"[A-Z][a-z0-9]\w*")


@dataclass(frozen=True)
class Found:
    path: Path
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path.relative_to(SRC.parent)}:{self.line}: {self.what}"


def _words(node: ast.expr) -> list[str]:
    """The words among a literal or a literal tuple, list or set."""
    items = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else [node]
    return [n.value for n in items if isinstance(n, ast.Constant) and n.value in WORDS]


def word_comparisons(path: Path, source: str) -> list[Found]:
    """Where a module compares a decision's word as a string."""
    found = []
    for node in ast.walk(ast.parse(source, str(path))):
        said: list[str] = []
        if isinstance(node, ast.Compare):
            said = [w for side in (node.left, *node.comparators) for w in _words(side)]
        elif isinstance(node, ast.MatchValue):
            said = _words(node.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("count", "index") and node.args:
            said = _words(node.args[0])
        elif isinstance(node, ast.Dict) and node.keys and all(
                k is not None and _words(k) for k in node.keys):
            said = [w for k in node.keys if k is not None for w in _words(k)]
        if said:
            found.append(Found(path, getattr(node, "lineno", 0), f"compares {said}"))
    return found


def template_comparisons(path: Path, source: str) -> list[Found]:
    """Where a Jinja template compares a decision's word as a string."""
    words = "|".join(sorted(WORDS))
    pattern = re.compile(rf"""(?:==|!=|equalto["']\s*,)\s*["']({words})["']""")
    return [Found(path, source.count("\n", 0, m.start()) + 1, f"compares '{m.group(1)}'")
            for m in pattern.finditer(source)]


def definitions() -> dict[str, list[Found]]:
    """Every class (anywhere) and module-level type alias, by name."""
    out: dict[str, list[Found]] = defaultdict(list)
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                out[node.name].append(Found(path, node.lineno, f"class {node.name}"))
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], ast.Name) \
                    and ALIAS.fullmatch(node.targets[0].id):
                name = node.targets[0].id
                out[name].append(Found(path, node.lineno, f"alias {name}"))
    return out


def test_the_enums_hold_words():
    assert {"above", "faster", "regression", "violated", "does not hold"} <= WORDS


def test_no_decision_word_is_compared_as_a_string():
    found = [f for path in sorted(SRC.rglob("*.py")) if path != HOME
             for f in word_comparisons(path, path.read_text())]
    found += [f for path in sorted(SRC.rglob("*.j2"))
              for f in template_comparisons(path, path.read_text())]
    assert not found, "compare the members of analysis/verdicts.py:\n" + "\n".join(map(str, found))


def test_the_check_finds_a_comparison():
    source = ('def f(v):\n    if v.outcome == "faster" or v in ("x", "open"):\n'
              '        return {"regression": 1, "improvement": 2}\n'
              '    match v:\n        case "held":\n            return [].count("same")\n'
              '    return v.check == "better" or {"outcome": "faster"}\n')
    assert sorted(f.line for f in word_comparisons(HOME, source)) == [2, 2, 3, 5, 6]
    template = '{% if v.outcome == "faster" %}{{ x | selectattr("o", "equalto", "open") }}'
    assert len(template_comparisons(HOME, template)) == 2


def test_no_two_classes_or_aliases_share_a_name():
    shared = {name: found for name, found in definitions().items() if len(found) > 1}
    assert not shared, "one name per concept:\n" + "\n".join(
        f"{name}: {', '.join(map(str, found))}" for name, found in sorted(shared.items()))


# how a family of tests could be corrected, by the names a text would give it
CORRECTIONS = re.compile(r"\b(Holm|Bonferroni|[SŠ]id[aá]k|Hommel|"
                         r"(?<!Benjamini-)(?<!Benjamini and )Hochberg)\b", re.IGNORECASE)
ROOT = SRC.parent.parent
# dated records of measurements taken under earlier rules: history, not a rule stated
HISTORY = {ROOT / "docs" / "results.md"}


def test_every_text_names_the_one_correction_the_constants_define():
    """No output, schema, template, doc, test or bench names a correction other than the one
    `stats.CORRECTION` names (Benjamini-Hochberg), and the rule's own text renders it."""
    from mpiarena.analysis.stats import CORRECTION
    from mpiarena.report.summary import rule_text

    assert CORRECTION == "Benjamini-Hochberg"
    assert f"{CORRECTION}-corrected" in rule_text()
    places = [*SRC.rglob("*.py"), *SRC.rglob("*.j2"), *SRC.rglob("*.json"), *SRC.rglob("*.toml"),
              *(ROOT / "tests").glob("*.py"), *(ROOT / "bench").glob("*.py"),
              ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
    found = [f"{p.relative_to(ROOT)}:{i}: {m[0]}" for p in places if p not in HISTORY
             and p != Path(__file__).resolve()
             for i, line in enumerate(p.read_text().splitlines(), 1)
             for m in CORRECTIONS.finditer(line)]
    assert not found, found
