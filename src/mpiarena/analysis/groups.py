"""A cell's groups of observations as every statistic sees them: measured or not, its figure,
and the variants that can be compared."""

from __future__ import annotations

from typing import TypeGuard

from ..results import Group
from ..status import CellStatus
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
