"""The types of durations (90s, 3m, 1h) and of Slurm's time limits."""

from __future__ import annotations

import math
import re

import click

UNITS = {"s": 1, "m": 60, "h": 3600}
DURATION_HELP = "seconds, or with a unit: 90s, 3m, 1h"


def seconds_of(text: str) -> float:
    """'90', '90s', '3m' or '1h' -> seconds (a bare number is seconds); NaN if not one."""
    text = text.strip().lower()
    scale = UNITS.get(text[-1:], 1)
    try:
        return float(text[:-1] if text[-1:] in UNITS else text) * scale
    except ValueError:
        return math.nan


class Duration(click.ParamType[float]):
    """Every duration option's type: a bare number is seconds, 90s, 3m or 1h its units; with
    `off`, also 0, off or none for none (0.0)."""

    name = "duration"

    def __init__(self, off: bool = False):
        self.off = off

    def convert(self, value: str | float, param: click.Parameter | None,
                ctx: click.Context | None) -> float:
        if isinstance(value, int | float):
            seconds = float(value)
        elif self.off and value.strip().lower() in ("0", "off", "none"):
            return 0.0
        else:
            seconds = seconds_of(value)
        if not 0 < seconds < math.inf:
            example = f"{param.opts[0] if param else ''} 90s".strip()
            self.fail(f"'{value}' is not a duration above 0; give seconds or a unit, e.g. "
                      f"{example}, 3m or 1h" + (", or off for none" if self.off else ""),
                      param, ctx)
        return seconds


DURATION = Duration()
DURATION_OR_OFF = Duration(off=True)
SLURM_TIME = re.compile(r"\d+(-\d+)?(:\d+){1,2}|\d+-\d+")  # M:S, H:M:S, D-H, D-H:M[:S]


class SlurmTime(click.ParamType[str]):
    """--sbatch-time: Slurm's time format as sbatch takes it (a bare number is minutes, M:S,
    H:M:S, D-H, D-H:M[:S]), or a duration with its unit (90s, 30m, 1h) turned into H:M:S."""

    name = "slurm-time"

    def convert(self, value: str, param: click.Parameter | None,
                ctx: click.Context | None) -> str:
        text = value.strip()
        if SLURM_TIME.fullmatch(text) or text.isdigit():
            return text
        if text[-1:].lower() not in UNITS:
            self.fail(f"'{value}' is not a Slurm time limit; give minutes (30), H:M:S (1:30:00) "
                      "or a duration with its unit (90s, 30m, 1h)", param, ctx)
        seconds = math.ceil(DURATION.convert(text, param, ctx))
        return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


SLURM_TIME_TYPE = SlurmTime()
