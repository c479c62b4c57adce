"""Per-rank figures of a collective at many ranks: each rank's time against the median rank's,
and the ranks that are slowest over every observation."""

from __future__ import annotations

import numpy as np

from ..store.results import Group

SLOWEST = 3  # ranks named per variant under a per-rank view


def rank_matrix(group: Group) -> np.ndarray:
    """Every rank's time over the median rank's, rank x observation (all launches in order)."""
    rows = list(group.per_rank)
    width = max(len(r) for r in rows)
    m = np.full((len(rows), width), np.nan)
    for i, r in enumerate(rows):
        m[i, :len(r)] = r
    ratios: np.ndarray = m / np.nanmedian(m, axis=1, keepdims=True)
    return ratios.T


def slowest_ranks(m: np.ndarray, n: int = SLOWEST) -> list[tuple[int, float]]:
    """The n ranks whose median over observations of time / median rank is highest."""
    typical = np.nanmedian(m, axis=1)
    order = np.argsort(-np.nan_to_num(typical, nan=-np.inf))[:n]
    return [(int(r), float(typical[r])) for r in order]
