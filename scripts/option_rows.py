"""The per-command option rows and examples of docs/commands.md, made from the commands' own
click definitions and commands/guide.py's examples (the end of each --help): `python
scripts/option_rows.py` rewrites them between their two marker comments, `--check` exits 1 when
they are not what the commands define (tests/test_docs.py checks it)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import click

from mpiarena.commands import cli
from mpiarena.commands.consoles import CONVENTIONS
from mpiarena.commands.guide import ENTRIES
from mpiarena.commands.renames import OLD_PREFIX

DOC = Path(__file__).resolve().parent.parent / "docs" / "commands.md"
BEGIN = ("<!-- option rows: made by scripts/option_rows.py from the commands' definitions; "
         "edit the commands, then run it -->")
END = "<!-- end of the option rows -->"


@dataclass(frozen=True)
class Row:
    """One option of one command, as its --help says it."""

    flags: str  # every spelling, e.g. `-o`/`--output`
    value: str  # the metavar, or 'flag'
    default: str
    help: str


def commands() -> Iterator[tuple[str, click.Command]]:
    """Every command, a group's subcommands as 'cluster up', in the order --help lists them."""
    ctx = click.Context(cli, info_name="mpiarena")
    for name in cli.list_commands(ctx):
        command = cli.get_command(ctx, name)
        if isinstance(command, click.Group):
            sub = click.Context(command, info_name=name, parent=ctx)
            for subname in command.list_commands(sub):
                subcommand = command.get_command(sub, subname)
                if subcommand is not None:
                    yield f"{name} {subname}", subcommand
        elif command is not None:
            yield name, command


def options(command: click.Command) -> list[click.Option]:
    """A command's options, --help, the conventions every command takes (-q, -v, --no-color:
    one paragraph of docs/commands.md) and the hidden old spellings left out."""
    return [p for p in command.params if isinstance(p, click.Option) and not p.hidden
            and not CONVENTIONS & set(p.opts)]


def old_spellings(command: click.Command) -> list[str]:
    """The old spellings a command still takes this release, each with its new one."""
    current = {p.name: p for p in options(command)}
    return [f"{'/'.join(f'`{o}`' for o in p.opts)} (now "
            f"{'/'.join(f'`{o}`' for o in current[p.name.removeprefix(OLD_PREFIX)].opts)})"
            for p in command.params if isinstance(p, click.Option) and p.hidden and p.name]


def _default(p: click.Option) -> str:
    value = p.to_info_dict()["default"]  # None where none is set
    if value is None or value is False or value == () or callable(value):
        return ""
    if isinstance(value, tuple | list):
        return ", ".join(map(str, value))
    return str(value)


def rows(name: str, command: click.Command) -> list[Row]:
    ctx = click.Context(command, info_name=f"mpiarena {name}")
    return [Row("/".join(f"`{o}`" for o in [*p.opts, *p.secondary_opts]),
                "flag" if p.is_flag else p.make_metavar(ctx), _default(p),
                " ".join((p.help or "").split()).replace("|", "\\|"))
            for p in options(command)]


def markdown() -> str:
    """The generated part of docs/commands.md, markers included."""
    out = [BEGIN, ""]
    for name, command in commands():
        ctx = click.Context(command, info_name=f"mpiarena {name}")
        out += [f"### `mpiarena {name}`", "",
                f"`mpiarena {name} {' '.join(command.collect_usage_pieces(ctx))}`: "
                f"{' '.join((command.help or '').split())}", ""]
        found = rows(name, command)
        if found:
            out += ["| option | value | default | what it does |", "| --- | --- | --- | --- |",
                    *(f"| {r.flags} | {r.value} | {r.default} | {r.help} |" for r in found), ""]
        if old := old_spellings(command):
            out += [f"Old spellings, taken until the next release with a one-line notice: "
                    f"{', '.join(old)}.", ""]
        out += ["Examples:", "", "```sh",
                *(line for e in ENTRIES[name].examples for line in (f"# {e.does}", e.line)),
                "```", ""]
    return "\n".join([*out, END])


def current(text: str) -> str:
    """The generated part as it stands in `text`, markers included."""
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[start:end]


def main(argv: list[str]) -> int:
    text = DOC.read_text(encoding="utf-8")
    made = markdown()
    if "--check" in argv:
        if current(text) != made:
            print(f"{DOC}: the option rows are not the commands' own: run "
                  "scripts/option_rows.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text.replace(current(text), made), encoding="utf-8")
    print(f"wrote the option rows of {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
