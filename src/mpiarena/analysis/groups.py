"""A cell's groups of observations as every statistic sees them: measured or not, its figure,
and the variants that can be compared."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypeGuard

from ..base.records import Cell
from ..base.status import CellStatus
from ..store.results import Group, RunData
from .stats import Sample, center


def measured(group: Group | None) -> TypeGuard[Group]:
    """The group holds observations of a cell that ran as planned."""
    return group is not None and group.status == CellStatus.OK and bool(group.values)


def figure(group: Group) -> float:
    """A cell's figure: the median of its launch medians."""
    return center(group.nested)


def comparable(cell: dict[str, Group]) -> dict[str, Sample]:
    """The variants of a cell that measured something, as observations per launch."""
    return {v: g.nested for v, g in cell.items() if measured(g)}


def beside(data: RunData, bench: str, other: str) -> Iterator[tuple[str, Cell, Group, Group]]:
    """Every variant's measured cell of bench with its own measured cell of `other` at the same
    size and rank count: (variant, bench's key, bench's group, other's group)."""
    for key in sorted(k for k in data.cells if k.bench == bench):
        theirs = data.cells.get(Cell(other, key.size, key.np), {})
        for variant in data.variants:
            mine, along = data.cells[key].get(variant), theirs.get(variant)
            if measured(mine) and measured(along):
                yield variant, key, mine, along


def launch_ids(group: Group) -> list[int]:
    """The launches of a group's `nested` samples, in the same order: what pairs two cells one
    job measured, launch by launch."""
    return sorted(set(group.launches)) if len(group.launches) == len(group.values) else [0]
