"""Narrow signatures: no function in src/ or bench/ outside a click command takes more than
six parameters (`self` and `cls` not counted), and the command line's options live in modules
of one job each, not in one commands/options.py."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MOST = 6


@dataclass(frozen=True)
class Wide:
    where: str  # path:qualified name
    line: int
    count: int


def _is_command(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A click command: decorated with click's command, option or argument."""
    return any(word in ast.unparse(d) for d in node.decorator_list
               for word in ("command", "option", "argument", "click"))


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    a = node.args
    names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
    return len(names[1:] if names and names[0] in ("self", "cls") else names)


def wide(path: Path) -> list[Wide]:
    """The functions of the file that take more than MOST parameters, by qualified name."""
    found: list[Wide] = []
    rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                if (count := _parameters(child)) > MOST and not _is_command(child):
                    found.append(Wide(f"{rel}:{name}", child.lineno, count))
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text()), "")
    return found


def _sources() -> list[Path]:
    return sorted(p for folder in ("src", "bench") for p in (ROOT / folder).rglob("*.py")
                  if "__pycache__" not in p.parts)


def test_the_scan_sees_a_wide_function(tmp_path: Path):
    f = tmp_path / "probe.py"
    f.write_text("def a(p, q, r, s, t, u, v):\n    pass\n\n"
                 "class C:\n    def b(self, p, q, r, s, t, u):\n        pass\n\n"
                 "@click.command()\ndef c(p, q, r, s, t, u, v):\n    pass\n")
    assert [(w.where, w.count) for w in wide(f)] == [("probe.py:a", 7)]


def test_no_function_takes_more_than_six_parameters():
    found = [w for p in _sources() for w in wide(p)]
    offenders = [f"{w.where} (line {w.line}): {w.count}" for w in found]
    assert not offenders, "more than six parameters:\n" + "\n".join(offenders)


def test_options_are_split_by_job():
    """commands/options.py is gone: each job of the old module has one module of its own."""
    assert not (ROOT / "src" / "mpiarena" / "commands" / "options.py").exists()
