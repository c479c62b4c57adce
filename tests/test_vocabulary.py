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


# a record's field that holds a word of a closed set (a status, kind, role, cause, level...):
# compared as a member of its enum, never as a string
CLOSED = re.compile(r"(?:^|_)(status|kind|role|cause|why|level|shape|outcome|direction|check)$")
# reading a stored sentence back by its words (the store keeps only the sentence): only in the
# module of the enum whose words they are
READS_BACK = ("startswith", "endswith", "removeprefix", "removesuffix")
# a comparison in a file another part of issue 53 changes this round, made a member's after
# the merge
def _closed(node: ast.expr) -> bool:
    """A field (x.kind, BENCHMARKS[b].kind, x.kind()) named for a closed set."""
    while isinstance(node, ast.Call):
        node = node.func
    return isinstance(node, ast.Attribute) and CLOSED.search(node.attr) is not None


def _strings(node: ast.expr) -> list[str]:
    """The string literals of a literal or a literal tuple, list or set."""
    items = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else [node]
    return [n.value for n in items if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _pattern_strings(pattern: ast.pattern) -> list[str]:
    if isinstance(pattern, ast.MatchValue):
        return _strings(pattern.value)
    if isinstance(pattern, ast.MatchOr):
        return [w for p in pattern.patterns for w in _pattern_strings(p)]
    return []


def _word_table(node: ast.expr) -> bool:
    return isinstance(node, ast.Dict) and bool(node.keys) and all(
        k is not None and _strings(k) for k in node.keys)


def closed_comparisons(path: Path, source: str) -> list[Found]:
    """Where a module compares a closed set's field with a string: ==, !=, in, a match case,
    a table of words looked up by it, or its words read back by their prefix."""
    found = []
    for node in ast.walk(ast.parse(source, str(path))):
        what = None
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(map(_closed, sides)) and any(_strings(s) for s in sides):
                what = "compares"
        elif isinstance(node, ast.Match) and _closed(node.subject):
            if any(_pattern_strings(c.pattern) for c in node.cases):
                what = "matches"
        elif isinstance(node, ast.Subscript) and _word_table(node.value) \
                and _closed(node.slice):
            what = "looks up"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "get" and _word_table(node.func.value) and node.args \
                    and _closed(node.args[0]):
                what = "looks up"
            elif node.func.attr in READS_BACK and _closed(node.func.value):
                what = "reads back"
        if what:
            found.append(Found(path, node.lineno, f"{what} {ast.unparse(node)}"))
    return found


def closed_template_comparisons(path: Path, source: str) -> list[Found]:
    """Where a Jinja template compares a closed set's field with a string."""
    field = r"\w*(?:status|kind|role|cause|why|level|shape|outcome|direction|check)"
    pattern = re.compile(rf"""\.{field}\s*(?:(?:==|!=)\s*|(?:not\s+)?in\s*[(\[]\s*)["']"""
                         rf"""|selectattr\(\s*["']{field}["']\s*,\s*["']equalto["']\s*,\s*["']""")
    return [Found(path, source.count("\n", 0, m.start()) + 1, f"compares {m.group(0)}")
            for m in pattern.finditer(source)]


def test_no_status_kind_role_or_cause_is_compared_as_a_string():
    found = [f for path in sorted(SRC.rglob("*.py"))
             for f in closed_comparisons(path, path.read_text())]
    found += [f for path in sorted(SRC.rglob("*.j2"))
              for f in closed_template_comparisons(path, path.read_text())]
    assert not found, "compare the members of the field's enum:\n" + "\n".join(map(str, found))


def test_the_closed_set_check_finds_a_planted_comparison(tmp_path):
    """A copy of a module with one bad line of each shape fails the check; the module does
    not."""
    path = SRC / "analysis" / "program_tuning.py"
    source = path.read_text()
    assert not closed_comparisons(path, source)
    planted = source + (
        "\n\ndef _planted(x, c, d, k):\n"
        "    if x.status == 'ok' or x.kind in ('race', 'verify') or c.role != 'overall':\n"
        "        return {'cpu': 1, 'memory': 2}[k.kind]\n"
        "    match BENCHMARKS[x.bench].kind:\n"
        "        case 'p2p' | 'coll':\n"
        "            return d.cause.startswith('slower than')\n"
        "    return {'launches': 1}.get(x.why)\n")
    copy = tmp_path / "analysis" / "program_tuning.py"
    copy.parent.mkdir()
    copy.write_text(planted)
    found = closed_comparisons(path, copy.read_text())
    lines = len(source.splitlines())
    assert sorted(f.line - lines for f in found) == [4, 4, 4, 5, 6, 8, 9], found
    template = ("{% if j.status not in ('ok', 'done') %}{{ c.status != 'ok' }}{% endif %}"
                "{{ ws | selectattr('level', 'equalto', 'error') | list }}"
                "{% if j.status != JobStatus.OK %}{% endif %}")
    assert len(closed_template_comparisons(path, template)) == 3


def test_the_tables_of_a_closed_set_hold_every_member():
    """A table that gives each member of a closed set its words, colour or marker names every
    member: a new member cannot fall through to a default."""
    from mpiarena.analysis.cells import Cause
    from mpiarena.analysis.claims import CHECKED_BY
    from mpiarena.analysis.costs import CostKind
    from mpiarena.analysis.race import DropCause
    from mpiarena.analysis.run import CAUSES, Level
    from mpiarena.report.costs import KIND_NAMES
    from mpiarena.report.race_plot import ENDS, Kept
    from mpiarena.report.terminal import COLOURS
    from mpiarena.studies import ClaimCheck

    assert set(CAUSES) == set(Cause)
    assert set(KIND_NAMES) == set(CostKind)
    assert set(ENDS) == {*DropCause, *Kept}
    assert set(COLOURS) == set(Level)
    assert set(CHECKED_BY) == set(ClaimCheck) - {ClaimCheck.ALL, ClaimCheck.CANNOT}
    for words in (verdicts.SPEED_OF_B, verdicts.SPEED_OF_FASTEST, verdicts.MOVEMENTS,
                  verdicts.GUIDELINE_RESULTS, verdicts.TUNING_EFFECTS):
        assert set(words) == set(verdicts.Judgement)


def test_each_context_reads_its_words_off_one_comparison():
    """A pair is judged once, b over a; the records that embed the comparison read its figures
    through and give its outcome their own words, in the order the tables fix."""
    from mpiarena.analysis.comparison import Comparison, Why
    from mpiarena.analysis.counterparts import COUNTERPARTS, CounterpartCheck
    from mpiarena.analysis.stats import Verdict
    from mpiarena.analysis.verdicts import Judgement, Speed

    slower = Comparison(1.5, 1.3, 1.7, 0.001, Judgement.ABOVE, 12, 10, 0)
    check = CounterpartCheck(COUNTERPARTS[0], "v", ("bcast_init", 8, 2), 1.5, 1.0, slower)
    verdict = Verdict("fast", "slow", slower)
    assert check.outcome == Speed.SLOWER and verdict.outcome == Speed.FASTER
    assert (check.ratio, check.ci_low, check.launches) == (1.5, 1.3, 10)
    assert (verdict.launches_fast, verdict.launches_slow, verdict.why) == (12, 10, None)
    against = Verdict("fast", "slow", Comparison(0.8, 0.7, 0.9, 0.001, Judgement.BELOW, 9, 9, 0))
    assert against.outcome == Speed.UNDECIDED and against.why == Why.TEST


def test_a_stored_race_reason_reads_back_as_its_cause():
    from mpiarena.analysis.race import DropCause, Dropped

    for cause in DropCause:
        dropped = Dropped("lib:a", 2, cause, ": some detail")
        assert DropCause.of(dropped.reason) is cause
        assert dropped.reason == f"{cause}: some detail"


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
