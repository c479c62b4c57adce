"""What `mpiarena tune` prints: the choice per cell, the size ranges and the files written;
and, for --verify, one line per cell with the gain of the tuned file and its interval."""

from __future__ import annotations

import shlex

from rich.console import Console
from rich.table import Table

from ..analysis.library_tuning import Gain
from ..analysis.stats import CONFIDENCE, THRESHOLD
from ..analysis.verdicts import Speed, TuningEffect
from ..base import units
from ..base.sizes import format_size
from ..runner.library_tuning import Tuning
from . import fingerprint
from .summary import rule_text


def _sizes(lo: int, hi: int | None) -> str:
    return f"{format_size(lo)} and up" if hi is None else \
        f"{format_size(lo)} to under {format_size(hi)}"


def _algorithm(variant: str | None) -> str:
    return "default" if variant is None else variant.split(":", 1)[1].split("=", 1)[1]


def render(done: Tuning, out: Console) -> None:
    """Per implementation, collective and rank count: each size's default, fastest algorithm
    and the verdict; then what each default behaves like, the ranges, what crashed, and the
    files with how to load them."""
    out.print(f"Tuning run {done.run_id} (see 'mpiarena show {done.run_id}', 'mpiarena report "
              f"{done.run_id}'). An algorithm replaces the default only where it is faster by the "
              f"verdicts' rule: {rule_text('the run')}")
    table = Table("impl", "coll", "ranks", "size", "default", "fastest algorithm", "time",
                  f"default / it ({CONFIDENCE:.0%} CI)", "choice")
    for c in done.picked:
        fig = "failed" if c.default_figure is None else units.seconds(c.default_figure)
        best = "-" if c.fastest_figure is None else units.seconds(c.fastest_figure)
        table.add_row(c.impl, c.coll, str(c.np), format_size(c.size), fig,
                      _algorithm(c.fastest), best,
                      f"{c.ratio:.2f}x ({c.ci_low:.2f}-{c.ci_high:.2f})" if c.default_ok else "-",
                      _algorithm(c.fastest if c.switch else None)
                      + ("" if c.switch or c.outcome == Speed.FASTER else f" ({c.outcome})"))
    out.print(table)
    fingerprint.render(done.prints, out)
    for r in done.ranges:
        out.print(f"  {r.impl} {r.coll}, {r.np} ranks, {_sizes(r.lo, r.hi)}: "
                  f"{_algorithm(r.variant)}")
    for line in done.untuned:
        out.print(f"  no algorithm to choose from: {line}")
    for line in done.lost:
        out.print(f"  [yellow]{line}[/]")
    for impl, f in done.files.items():
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in f.env)
        out.print(f"{impl}: wrote {f.path}; load with: {env or '(nothing: default kept)'}"
                  + (f" ({f.note})" if f.note else ""))


def gain_line(g: Gain) -> str:
    """One verify cell: the default's time over the tuned file's, with its interval."""
    where = f"{g.impl} {g.coll} {format_size(g.size)}, {g.np} ranks"
    if g.outcome == TuningEffect.FAILED:
        return f"{where}: FAILED, not compared: {g.reason}"
    ci = f"{CONFIDENCE:.0%} CI {g.ci_low:.2f}-{g.ci_high:.2f}, {g.launches} launches"
    if g.outcome == TuningEffect.WORSE:
        return f"{where}: WORSE with the tuning file: {g.ratio:.2f}x the default's speed ({ci})"
    text = {TuningEffect.BETTER: "faster with the tuning file",
            TuningEffect.SAME: f"the same within {THRESHOLD:.0%}",
            TuningEffect.UNDECIDED: "undecided"}[g.outcome]
    return f"{where}: {text}: {g.ratio:.2f}x ({ci})"


def verify_lines(run_id: int, found: list[Gain], out: Console) -> None:
    out.print(f"A/B run {run_id}: the default against the tuning file; the gain is the "
              "default's time over the tuned time (above 1: the file helps).")
    for g in found:
        out.print(gain_line(g), soft_wrap=True, markup=False)
    better = sum(g.outcome == TuningEffect.BETTER for g in found)
    worse = sum(g.outcome == TuningEffect.WORSE for g in found)
    failed = sum(g.outcome == TuningEffect.FAILED for g in found)
    out.print(f"{better} cells better, {worse} worse, "
              f"{failed} failed, {len(found)} in all")
