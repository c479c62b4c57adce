"""What `compare` and `history` share for continuous integration: --threshold, --junit FILE and
--fail-on-regression (exit status 3 when a decided regression appears)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

from ..analysis.stats import THRESHOLD
from ..base.errors import ArenaError
from .consoles import err
from .exit_status import Exit
from .grouping import grouped

F = TypeVar("F", bound=Callable[..., Any])


def _fraction(text: str) -> float:
    """'5%' or '0.05' -> 0.05; '100%' (twice as slow) and more with the sign only (a bare 5
    would be 500%, a threshold no regression reaches: more likely a slip)."""
    percent = text.endswith("%")
    try:
        value = float(text.rstrip("%")) / (100 if percent else 1)
    except ValueError:
        value = math.nan
    if not 0 < value < (math.inf if percent else 1):
        raise ArenaError(f"bad --threshold '{text}'; give a percentage above 0, e.g. 5% (or "
                         "the fraction 0.05)")
    return value


@dataclass(frozen=True)
class CI:
    fail_on_regression: bool
    threshold: float  # 'faster' and 'slower' mean by more than this
    junit: Path | None

    @classmethod
    def parse(cls, fail_on_regression: bool, threshold: str, junit: str | None) -> CI:
        return cls(fail_on_regression, _fraction(threshold), Path(junit) if junit else None)


def ci_options(f: F) -> F:
    """--fail-on-regression, --threshold and --junit into `ci`."""
    return grouped(
        "ci", CI.parse,
        click.option("--fail-on-regression", is_flag=True,
                     help=f"exit status {Exit.FOUND:d} when a decided regression (beyond "
                          "--threshold) appears"),
        click.option("--threshold", default=f"{THRESHOLD:.0%}", show_default=True,
                     help="a regression or improvement is decided only when the whole 95% "
                          "interval of the ratio lies beyond this"),
        click.option("--junit", type=click.Path(dir_okay=False),
                     help="write JUnit XML here: a testcase per cell, failed by a decided "
                          "regression, skipped where the launches cannot tell"),
        title="For CI")(f)


def finish(ci: CI, xml: Callable[[], str], regressions: Sequence[str]) -> None:
    """Write the JUnit file when asked; exit with Exit.FOUND under --fail-on-regression
    when `regressions` (one line each) is not empty."""
    if ci.junit:
        try:
            ci.junit.write_text(xml(), encoding="utf-8")
        except OSError as e:
            raise ArenaError(f"cannot write {ci.junit}: {e.strerror}; choose another "
                             "--junit FILE") from e
    if ci.fail_on_regression and regressions:
        for line in regressions:
            err.print(f"regression: {line}", soft_wrap=True, markup=False, highlight=False)
        err.print(f"mpiarena: {len(regressions)} decided regressions beyond "
                  f"{ci.threshold:.0%}: exit status {Exit.FOUND:d}", soft_wrap=True)
        raise SystemExit(Exit.FOUND)
