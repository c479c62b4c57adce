"""Docs that cannot drift from the command line: docs/commands.md's option rows are the
commands' own, every option of every command is named in a document in that command's context,
and every option a document names in a command's context exists."""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import click
import pytest

from mpiarena.commands.consoles import CONVENTIONS

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
GLOBAL = {"--help", "--version", *CONVENTIONS}


def _option_rows():  # scripts/ is no package: loaded from its file
    spec = importlib.util.spec_from_file_location("option_rows", ROOT / "scripts" /
                                                  "option_rows.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks itself up there
    spec.loader.exec_module(module)
    return module


rows = _option_rows()
COMMANDS: dict[str, click.Command] = dict(rows.commands())
GROUPS = {name.split()[0] for name in COMMANDS if " " in name}


def spellings(command: click.Command) -> set[str]:
    """Every spelling a command takes, its old spellings left out: a document names them only
    on a line that calls them old."""
    return {o for p in rows.options(command) for o in [*p.opts, *p.secondary_opts]} | GLOBAL


@dataclass(frozen=True)
class Named:
    """An option a document names, and the commands whose context it stands in (one, or those
    its line and section name before it; none for no command's: not checked)."""

    commands: tuple[str, ...]
    option: str
    where: str  # file:line


OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[a-zA-Z])(?![\w-])")
SPAN = re.compile(r"`([^`\n]+)`")


def _command_at(words: list[str]) -> str | None:
    """The command `words` start with ('cluster up' for a group's), or None."""
    if not words:
        return None
    if words[0] in GROUPS and len(words) > 1 and f"{words[0]} {words[1]}" in COMMANDS:
        return f"{words[0]} {words[1]}"
    return words[0] if words[0] in COMMANDS and words[0] not in GROUPS else None


def _in_code(code: str, context: tuple[str, ...], where: str, fenced: bool
             ) -> Iterator[Named]:
    """The options one code span or command line names, each with its command: the one after
    'mpiarena' (a span may hold several), the one a span starts with, or, for a span of bare
    options, those of `context`'s commands. What follows '--' is a program's, a shell
    comment no one's."""
    code = re.split(r"\s--(?:\s|$)", code.split(" # ")[0])[0]
    parts = re.split(r"\bmpiarena\s+", code)
    if len(parts) > 1:
        for part in parts[1:]:
            command = _command_at(part.split())
            for option in OPTION.findall(part):
                yield Named((command,) if command else (), option, where)
        return
    if fenced:  # a fenced line without 'mpiarena' is output or another tool's command
        return
    words = code.split()
    if words and (command := _command_at(words)) is not None:
        yield from (Named((command,), o, where) for o in OPTION.findall(code))
    elif words and words[0].startswith("-") and context:
        yield from (Named(context, o, where) for o in OPTION.findall(code))


def named_in(path: Path) -> Iterator[Named]:
    """Every option `path` names in code, with its command context: a heading naming commands
    ('### `mpiarena run`') is the context of the bare options in its section and subsections, a
    span starting with a command that of the bare options after it on its line."""
    headings: list[tuple[int, tuple[str, ...]]] = [(0, ())]  # level, commands in context
    fenced = False
    pending = ""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        where = f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{number}"
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            pending += line.rstrip("\\") + " "
            if not line.endswith("\\"):
                yield from _in_code(pending, headings[-1][1], where, fenced=True)
                pending = ""
            continue
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            while headings[-1][0] >= level:
                headings.pop()
            named = {_command_at(m.split()) for m in re.findall(r"mpiarena\s+([\w -]+)", line)}
            headings.append((level, tuple(c for c in named if c) or headings[-1][1]))
        if "Old spellings" in line:
            continue
        context = headings[-1][1]  # with the commands the line's spans started with so far
        for code in SPAN.findall(line):
            yield from _in_code(code, context, where, fenced=False)
            if (command := _command_at(code.replace("mpiarena ", "").split())) is not None:
                context = (*context, command)


NAMED = [n for path in DOCS for n in named_in(path)]


def test_the_option_rows_are_the_commands_own():
    text = rows.DOC.read_text(encoding="utf-8")
    assert rows.current(text) == rows.markdown(), \
        "docs/commands.md's option rows differ from the commands: run scripts/option_rows.py"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_option_of_a_command_is_named_in_its_context(name):
    documented = {n.option for n in NAMED if name in n.commands}
    missing = sorted(o for p in rows.options(COMMANDS[name]) for o in p.opts
                     if o not in documented)
    assert not missing, f"mpiarena {name}: no document names {', '.join(missing)}"


def test_every_option_a_document_names_exists():
    every = set().union(*map(spellings, COMMANDS.values()))
    wrong = [f"{n.where}: {n.option} (mpiarena {' or '.join(n.commands) or '?'})" for n in NAMED
             if not any(n.option in spellings(COMMANDS[c]) for c in n.commands)
             and (n.commands or n.option not in every)]
    assert not wrong, "options the documents name that no command has:\n" + "\n".join(wrong)


def test_the_scanner_tells_a_command_from_another_tool(tmp_path):
    """What the two tests above rest on: a span after 'mpiarena', a span starting with a
    command, bare options under a command's heading; another tool's options are not ours."""
    doc = tmp_path / "x.md"
    doc.write_text("### `mpiarena run`\n`--budget 3m`, `show RUN --tables` (`--all`), "
                   "`srun --mpi=list`\n## Else\n`--bind-to core`\n```\n$ mpiarena history "
                   "--sizes 8 \\\n  --np 2  # or --junit\nrun with --nothing\n```\n"
                   "`mpiarena program --np 2 -- prog -n 3`\n")
    found = [(n.commands, n.option) for n in named_in(doc)]
    assert found == [(("run",), "--budget"), (("show",), "--tables"), (("run", "show"), "--all"),
                     (("history",), "--sizes"), (("history",), "--np"), (("program",), "--np")]
