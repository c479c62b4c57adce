"""The application kernels' figures: time inside each kind of call, and the correctness
figure each kernel reports."""

from __future__ import annotations

import math

import numpy as np

from ..model.benchmarks import APP_CALLS, APP_CHECKS
from ..store.results import Group


def call_times(group: Group) -> dict[str, float]:
    """Median over observations of the slowest rank's seconds in each kind of call."""
    out = {}
    for call in APP_CALLS:
        per_obs = [max((v for v in x[f"t_{call}"] if math.isfinite(v)), default=math.nan)
                   for x in group.extras if f"t_{call}" in x]
        if per_obs:
            out[call] = float(np.nanmedian(per_obs))
    return out


def check_figure(group: Group) -> tuple[str, float] | None:
    """The correctness figure's name and its worst value over observations (rank 0)."""
    for name in APP_CHECKS:
        values = [x[name][0] for x in group.extras if name in x and math.isfinite(x[name][0])]
        if values:
            return name, max(values, key=abs)
    return None
