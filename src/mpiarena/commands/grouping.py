"""Options grouped into one record, and the --help sections they show under."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast

import click

F = TypeVar("F", bound=Callable[..., Any])

SECTIONS = "__arena_sections__"  # a command function's: parameter name -> its --help section


class Sectioned(click.Command):
    """A command whose --help lists its options under the titles grouped() gave them, the
    others last."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        titles: dict[str, str] = vars(self.callback).get(SECTIONS, {}) if self.callback else {}
        rest = "Other options" if titles else "Options"
        rows: dict[str, list[tuple[str, str]]] = {}
        for p in self.get_params(ctx):
            if (record := p.get_help_record(ctx)) is not None:
                rows.setdefault(titles.get(p.name or "", rest), []).append(record)
        for title, found in rows.items():
            with formatter.section(title):
                formatter.write_dl(found)


def grouped(into: str, build: Callable[..., Any],
            *decorators: Callable[[Callable[..., Any]], Callable[..., Any]],
            title: str | None = None) -> Callable[[F], F]:
    """Options (click.option decorators, in the order they show) whose values reach the command
    as one record: parameter `into` = build(their values by parameter name); with `title`, the
    section of a Sectioned command's --help they show under."""
    def probe() -> None: ...
    for decorate in reversed(decorators):
        decorate(probe)
    params: list[click.Parameter] = vars(probe)["__click_params__"]
    names = [p.name for p in params if p.name and p.expose_value]

    def wrap(f: F) -> F:
        @functools.wraps(f)
        def command(*args: Any, **kwargs: Any) -> Any:
            kwargs[into] = build(**{n: kwargs.pop(n) for n in names})
            return f(*args, **kwargs)

        vars(command)["__click_params__"] = [*vars(f).get("__click_params__", []), *params]
        if title:
            vars(command)[SECTIONS] = {**vars(f).get(SECTIONS, {}),
                                       **{p.name: title for p in params if p.name}}
        return cast(F, command)
    return wrap
