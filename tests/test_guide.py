"""The commands as a user meets them (commands/guide.py): `mpiarena` alone says what to run
first and exits 0; --help lists every command once, in its section, with a whole summary; every
command's help ends with its examples, and docs/commands.md shows the same ones."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import mpiarena

from mpiarena.commands import all_commands
from mpiarena.commands.guide import ENTRIES, SECTIONS

ROOT = Path(__file__).resolve().parent.parent


def test_mpiarena_alone_says_what_to_run_first():
    done = mpiarena()
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert re.search(r"^  mpiarena doctor +# ", done.stdout, re.M), done.stdout
    assert "mpiarena run --suite quick" in done.stdout and "Usage" not in done.stdout


def test_help_lists_each_command_once_in_its_section_whole():
    done = mpiarena("--help", env={"COLUMNS": "100"})
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "..." not in text.split("\n\n", 1)[1]  # the usage line's ARGS... aside
    titles = [s.title for s in SECTIONS]
    assert titles == ["Compare libraries", "Your program", "Clusters", "Results", "Set-up"]
    at = [text.index(f"\n{t}:\n") for t in titles]
    assert at == sorted(at), text
    for section, start, end in zip(SECTIONS, at, [*at[1:], len(text)], strict=True):
        for entry in section.entries:
            if " " not in entry.name:  # a group's subcommands: in the group's own --help
                assert re.search(rf"^  {entry.name} +{re.escape(entry.summary)}$",
                                 text[start:end], re.M), (entry.name, text[start:end])
    listed = [e.name for s in SECTIONS for e in s.entries if " " not in e.name]
    assert sorted(listed) == sorted(c.name for c in all_commands() if c.name)


def test_every_command_ends_its_help_with_two_or_three_examples():
    assert {n.split()[0] for n in ENTRIES} == {c.name for c in all_commands()}
    for name, entry in ENTRIES.items():
        assert 2 <= len(entry.examples) <= 3, name
        assert all(f"mpiarena {name}" in e.line for e in entry.examples), name
    done = mpiarena("cluster", "up", "--help", env={"COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    tail = done.stdout.split("Examples:\n", 1)[1].splitlines()
    assert tail == [f"    {line}" for e in ENTRIES["cluster up"].examples
                    for line in (f"# {e.does}", e.line)]


def test_commands_md_shows_each_commands_examples():
    text = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    for name, entry in ENTRIES.items():
        if name in ("cluster", "store"):  # no section of their own: their subcommands have theirs
            continue
        section = text.split(f"### `mpiarena {name}`\n", 1)[1].split("\n### ", 1)[0]
        block = section.split("Examples:\n\n```sh\n", 1)[1].split("```", 1)[0]
        assert block.splitlines() == [line for e in entry.examples
                                      for line in (f"# {e.does}", e.line)], name


def test_run_help_lists_its_options_in_sections():
    done = mpiarena("run", "--help")
    assert done.returncode == 0, done.stderr
    titles = [line[:-1] for line in done.stdout.splitlines() if line and line[0] != " "
              and line.endswith(":")]
    assert titles == ["What to run", "How to measure", "Where ranks run", "As a Slurm batch job",
                      "What the summary adds", "Other options"], done.stdout
    sections = done.stdout.split("\n\n")
    assert any(s.startswith("Where ranks run:") and "--hosts FILE" in s for s in sections)
    assert any(s.startswith("Other options:") and "--db FILE" in s and "--no-color" in s
               for s in sections)
