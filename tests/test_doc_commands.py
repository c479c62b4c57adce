"""The command lines of README.md and docs/*.md: every `mpiarena` line of a code block (a line
of synopsis with `...` or `[...]` aside) is one the command line takes, its options and values
parsed by click as they would be when typed; and the README's own-program example runs as
written. tests/test_docs.py checks the option names in the prose."""

from __future__ import annotations

import re
import shlex
import warnings
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from conftest import mpiarena

from mpiarena.commands import cli

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BEFORE = {"sudo", "salloc", "srun", "env", "exec", "time"}  # what may start a line before it
SYNOPSIS = re.compile(r"\.\.\.|\[-")  # a placeholder or an optional part: not a command line


def block_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Each line of the fenced code blocks, continuations joined, with its first line's number."""
    inside, joined, first = False, "", 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("```"):
            inside, joined = not inside, ""
            continue
        if not inside:
            continue
        joined, first = (f"{joined} {line.strip()}", first) if joined else (line.strip(), number)
        if joined.endswith("\\"):
            joined = joined[:-1]
            continue
        yield first, joined.removeprefix("$ ")
        joined = ""


def command_lines(path: Path) -> Iterator[tuple[str, list[str]]]:
    """Where and what: each mpiarena command of a code block, split at ;, && and |."""
    for number, line in block_lines(path):
        try:
            tokens = shlex.split(line, comments=True)
        except ValueError:  # an output line with an odd quote
            continue
        start = 0
        for end in [*(i for i, t in enumerate(tokens) if t in (";", "&&", "||", "|")),
                    len(tokens)]:
            part, start = tokens[start:end], end + 1
            if "mpiarena" not in part or SYNOPSIS.search(" ".join(part)):
                continue
            at = part.index("mpiarena")
            if all(t in BEFORE or re.match(r"\w+=", t) or t.startswith("-") or t.isdigit()
                   for t in part[:at]) and (at == 0 or part[0] in BEFORE or "=" in part[0]):
                yield f"{path.name}:{number}", part[at + 1:]


COMMAND_LINES = [found for path in DOCS for found in command_lines(path)]


def parse(args: list[str]) -> None:
    """Parse `args` as `mpiarena ARGS` would be, down to the (sub)command, without running it."""
    ctx = cli.make_context("mpiarena", list(args))
    command: click.Command = cli
    while isinstance(command, click.Group) and (rest := _unparsed(ctx)):
        sub = command.get_command(ctx, rest[0])
        if sub is None:
            raise click.UsageError(f"no command '{rest[0]}'")
        ctx, command = sub.make_context(rest[0], rest[1:], parent=ctx), sub


def _unparsed(ctx: click.Context) -> list[str]:
    """A group's subcommand and its arguments (click 8 keeps the first apart)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return [*ctx.protected_args, *ctx.args]


def test_the_documents_have_command_lines():
    assert len(COMMAND_LINES) > 100
    assert {where.split(":")[0] for where, _ in COMMAND_LINES} >= {"README.md", "commands.md",
                                                                   "program.md", "clusters.md"}


def test_every_documented_command_line_parses():
    wrong = []
    for where, args in COMMAND_LINES:
        try:
            parse(args)
        except click.exceptions.Exit:  # --help, --version
            pass
        except click.ClickException as e:
            wrong.append(f"{where}: mpiarena {shlex.join(args)}: {e.format_message()}")
    assert not wrong, "command lines the documents show that mpiarena refuses:\n" + \
        "\n".join(wrong)


def test_the_checker_refuses_a_wrong_line(tmp_path):
    doc = tmp_path / "x.md"
    doc.write_text("```sh\nmpiarena run --np 0 --suite quick   # bad ranks\n"
                   "sudo mpiarena doctor && mpiarena show --nosuch\n"
                   "mpiarena history [--impl ID ...]\n```\nmpiarena run --nope\n")
    found = list(command_lines(doc))
    assert [args for _, args in found] == [["run", "--np", "0", "--suite", "quick"], ["doctor"],
                                           ["show", "--nosuch"]]
    for _, args in (found[0], found[2]):
        with pytest.raises(click.ClickException):
            parse(args)
    parse(found[1][1])


@pytest.mark.skipif(not Path("/usr/bin/NPmpich2").exists() or
                    not Path("/usr/bin/NPopenmpi").exists(),
                    reason="needs Debian's NetPIPE for MPICH and Open MPI")
def test_the_readmes_own_program_example_runs_as_written(tmp_path):
    """Its first line: Debian's NetPIPE binaries of MPICH and Open MPI, 6 launches each."""
    readme = [args for where, args in COMMAND_LINES if where.startswith("README.md:")
              and args[0] == "program"]
    done = mpiarena(*readme[0], cwd=ROOT, env={"MPIARENA_DB": str(tmp_path / "readme.db")})
    assert done.returncode == 0, done.stderr
    assert re.search(r"^wall: ", done.stdout, re.M) and re.search(r"^bw: ", done.stdout, re.M)


def test_the_readmes_first_steps_that_measure_nothing_run_as_written(tmp_path):
    """`mpiarena doctor` and `mpiarena impls` as the README's first steps write them."""
    ran = []
    for where, args in COMMAND_LINES:
        if where.startswith("README.md:") and args in (["doctor"], ["impls"]):
            done = mpiarena(*args, cwd=tmp_path)
            assert done.returncode == 0 and done.stdout, (where, done.stderr)
            ran.append(args[0])
    assert sorted(set(ran)) == ["doctor", "impls"]
