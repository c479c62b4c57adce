"""Markdown's escaping and its one table writer, shared by every Markdown rendering (a run's
summary, a program run's, a reproduction's)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def escape(text: str) -> str:
    """Text that Markdown shows as it is: no table cell ends at its |, no * or _ emphasis."""
    return text.replace("|", "\\|").replace("*", "\\*").replace("_", "\\_")


def table(header: Sequence[str], rows: Iterable[Sequence[object]], left: int = 1) -> list[str]:
    """A pipe table's lines: the first `left` columns left-aligned, the others right-aligned.
    Cells are written as given (already escaped, or Markdown on purpose)."""
    align = ["---" if i < left else "---:" for i in range(len(header))]
    return [_row(header), _row(align), *map(_row, rows)]


def _row(cells: Sequence[object]) -> str:
    return "| " + " | ".join(map(str, cells)) + " |"
