"""`program --tune` in words: the search space and why, the race, the verification's verdicts, and
the winning settings ready to use."""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict
from typing import Any

from rich.console import Console

from ..analysis.program_tuning import TuneResult
from ..analysis.program_tuning_space import Space, configurations
from ..analysis.race import Verified
from ..base.units import seconds
from ..model.programs import Role
from ..model.runs import program_settings

NO_GAIN = "no setting found beats the default"


def space_lines(spaces: list[Space]) -> list[str]:
    """Each library's dimensions, with why each is searched and what was left out."""
    out = []
    for s in spaces:
        out.append(f"search space of {s.impl} ({len(configurations(s))} configurations):")
        out += [f"  {d.name}: {', '.join(v.name for v in d.values)} ({d.why})"
                for d in s.dimensions]
        if not s.dimensions:
            out.append("  nothing to search: the default alone")
        out += [f"  not searched: {x.name} ({x.why})" for x in s.left_out]
    return out


def _median(values: list[float]) -> str:
    return seconds(statistics.median(values)) if values else "-"


def race_lines(r: TuneResult) -> list[str]:
    rounds = max((len(v) for v in r.race.values()), default=0)
    out = [f"race: {r.launches} launches over {len(r.configs)} configurations, {rounds} "
           "rounds (median wall time of its race launches):"]
    named = {c.variant: c.variant + (" (default)" if c.variant == c.impl_id else "")
             for c in r.configs}
    width = max(map(len, named.values()), default=0)
    for c in r.configs:
        how = ("overall winner" if c.role == Role.OVERALL else "winner" if c.role else
               f"dropped after round {c.dropped}: {c.reason}" if c.dropped else "stayed")
        out.append(f"  {named[c.variant]:<{width}}  {_median(r.race[c.variant]):>8}  "
                   f"{r.spent[c.variant]:>2} launches  {how}")
    return out


def verdict_line(v: Verified) -> str:
    interval = f"95% CI {v.ci_low:.2f}-{v.ci_high:.2f}" if math.isfinite(v.ci_high) else \
        "no interval yet"
    if v.gain:
        return (f"{v.library}: {v.setting} is {v.speedup:.2f}x faster than the default "
                f"({interval}, {v.launches} fresh launches each)")
    return (f"{v.library}: {NO_GAIN} ({v.setting}: {v.speedup:.2f}x the default's speed, "
            f"{interval}, {v.launches} fresh launches each: not a decided gain)")


def verification_lines(r: TuneResult) -> list[str]:
    out = ["verified (fresh interleaved launches against each library's default):"]
    judged = {v.library for v in r.verified}
    for impl, winner in r.winners.items():
        if impl not in judged and winner == impl:
            out.append(f"  {impl}: {NO_GAIN} (the default led its race)")
    out += [f"  {verdict_line(v)}" for v in r.verified]
    out += [f"  {impl}: left out, its profiled launch failed: {why}"
            for impl, why in r.failed_profiles.items()]
    return out


def _gains(r: TuneResult) -> list[str]:
    """The settings the verification backs a gain of against their own library's default, each
    once: the only settings worth recommending."""
    return list(dict.fromkeys(v.setting for v in r.verified
                              if v.gain and v.library == r.ready[v.setting].impl_id))


def _library_gains(r: TuneResult) -> dict[str, list[str]]:
    """Library -> the other libraries' defaults it was verified faster than, where no setting
    of its own was decided faster than its own default: the gain is the library's, and the
    recommendation is the library with its defaults."""
    own = set(_gains(r))
    out: dict[str, list[str]] = {}
    for v in r.verified:
        impl = r.ready[v.setting].impl_id
        if v.gain and v.library != impl and v.setting not in own:
            out.setdefault(impl, []).append(v.default)
    return out


def ready_lines(r: TuneResult) -> list[str]:
    """The settings of every gain verified against its own library's default, as the library
    takes them; where a library won only against the others' defaults, that library with its
    own defaults."""
    gains, libraries = _gains(r), _library_gains(r)
    if not gains and not libraries:
        return [f"ready to use: nothing; {NO_GAIN}, keep it"]
    where = r.directory
    out = [f"ready to use (written to {where}):" if where else
           "ready to use (program --tune --dir DIR writes these files):"]
    out += [f"  {impl} with its defaults: verified faster than {', '.join(over)}; no setting "
            f"of it was decided faster than its own default, so the gain is the library's"
            for impl, over in libraries.items()]
    for variant in gains:
        ready = r.ready[variant]
        over = [v.default for v in r.verified if v.setting == variant and v.gain]
        out.append(f"  {variant}: verified faster than {', '.join(over)}; environment file "
                   f"{ready.env_name} (set -a; . FILE; set +a):")
        out += [f"    {line}" for line in ready.env_file(where).splitlines()]
        if ready.binding != "auto":
            out.append(f"    # binding: {ready.binding} (in the launch line)")
        if (sel := ready.selection) is not None:
            loads = " ".join(f"{k}={v}" for k, v in
                             sel.env({}, f"{where or 'DIR'}/{sel.name}").items())
            out.append(f"  {sel.kind} {sel.name} (loaded by {loads}" +
                       ("" if where else f", in place of {', '.join(sel.replaces)}") + "):")
            out += [f"    {line}" for line in sel.text.splitlines()]
        out.append(f"  launch: {ready.command(where)}")
    return out


def ready_files(r: TuneResult, directory: str) -> dict[str, str]:
    """File name -> text of what `--dir DIR` writes: every verified gain's environment file, and
    its library's selection file where it has one."""
    out = {}
    for variant in _gains(r):
        ready = r.ready[variant]
        out[ready.env_name] = ready.env_file(directory)
        if ready.selection is not None:
            out[ready.selection.name] = ready.selection.text
    return out


def lines(r: TuneResult, with_space: bool = True) -> list[str]:
    settings = program_settings(r.run)
    budget = "budget not recorded" if r.budget is None else f"budget {r.budget:.0f} s"
    head = (f"program tuning run {r.run.id}: {' '.join(settings.program)} on {settings.np} "
            f"ranks, {budget}")
    return [head, *(space_lines(r.spaces) if with_space else []), *race_lines(r),
            *verification_lines(r), *ready_lines(r)]


def render(r: TuneResult, console: Console, with_space: bool = True) -> None:
    for line in lines(r, with_space):
        console.print(line, soft_wrap=True, markup=False, highlight=False)


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def tuned_summary(r: TuneResult) -> dict[str, Any]:
    """`export --summary`'s `tuned` section: the spaces, the race, the verdicts, and each
    verified gain's settings as its library takes them."""
    where = r.directory
    return {
        "budget": r.budget, "launches": r.launches, "directory": where,
        "spaces": [asdict(s) for s in r.spaces],
        "configurations": [
            {"variant": c.variant, "library": c.impl_id, "values": c.values,
             "launches": r.spent[c.variant],
             "median_wall": statistics.median(r.race[c.variant]) if r.race[c.variant] else None,
             "dropped_after": c.dropped, "reason": c.reason, "role": c.role}
            for c in r.configs],
        "verified": [{"library": v.library, "setting": v.setting, "speedup": _finite(v.speedup),
                      "ci_low": _finite(v.ci_low), "ci_high": _finite(v.ci_high),
                      "p_adjusted": v.p_adjusted, "gain": v.gain, "launches": v.launches}
                     for v in r.verified],
        "ready": [{"variant": variant, "library": ready.impl_id, "env": ready.env(where),
                   "binding": ready.binding, "launch": ready.command(where),
                   "env_file": ready.env_file(where),
                   "selection_file": None if ready.selection is None else
                   {"kind": ready.selection.kind, "name": ready.selection.name,
                    "text": ready.selection.text}}
                  for variant in _gains(r) for ready in [r.ready[variant]]]}
