"""What every report shares: the terminal summary, the HTML report and the Markdown summary.

`analyse` computes, once per report, the tables in order, the verdicts (Holm-corrected across
the whole report), per-cell statistics, protocol switches, derived figures and every warning,
so that all reports say the same.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..analysis import (
    Derived,
    Switch,
    cell_warnings,
    derived,
    protocol_switches,
    warning_lines,
)
from ..benchmarks import BENCHMARKS
from ..errors import ArenaError
from ..impls.registry import families
from ..records import ImplementationRecord, VariantRecord
from ..results import Group, Key, RunData
from ..sizes import format_size
from ..stats import Sample, Summary, Verdict, boot_centers, center, summarize, verdicts
from ..status import CellStatus, JobStatus, RunStatus
from . import units

METHOD = ("Each variant ran in {launches} independent launches per rank count, interleaved "
          "across variants. Each observation times k calls (k chosen so that they last at least "
          "{target}), after a warm-up, preceded by mpiarena's own dissemination barrier; "
          "point-to-point: ranks 0 and 1 (pingpong: half the round trip); collectives and "
          "start-up: the slowest rank. Cells show the median of the launch medians; intervals "
          "come from the launches (a hierarchical bootstrap for ratios). 'faster' needs the whole "
          "ratio interval beyond 5% and a Mann-Whitney test on launch medians (Holm-corrected "
          "across the report); 'indistinguishable' needs the whole interval within 5%; anything "
          "else is undecided.")
TIMING = {
    "loop": "loop (k calls back to back, the loop's time divided by k)",
    "barrier": "barrier (mpiarena's own barrier before every call, each call timed alone, each "
               "rank's mean per call; the slowest rank's mean is IMB's t_max)",
    "window": "window (every call released at a common start time on a clock synchronised across "
              "ranks: each rank's offset and drift to rank 0 fitted from ping-pongs, as in HCA; a "
              "call's time is its exit minus its window's start; calls that any rank reached "
              "late are dropped; each rank's mean over the kept calls; the slowest rank's mean)",
}
STATUS_TEXT = {CellStatus.NA: "n/a", CellStatus.INVALID: "INVALID", CellStatus.FAILED: "failed",
               CellStatus.SKIPPED: "skipped"}


def comparable(cell: dict[str, Group]) -> dict[str, Sample]:
    """The variants of a cell that measured something, as observations per launch."""
    return {v: g.nested for v, g in cell.items() if g.status == CellStatus.OK and g.values}


def median(group: Group) -> float:
    """A cell's figure: the median of its launch medians."""
    return center(group.nested)


def bandwidth(bench: str, size: int, reduced: float, window: int) -> float | None:
    """Bytes per second for a point-to-point benchmark, as the terminal summary computes it."""
    if size <= 0:
        return None
    return BENCHMARKS[bench].bandwidth(size, reduced, window)


@dataclass(frozen=True)
class Notice:
    level: str  # error | warn | info
    text: str
    kind: str  # what it is about, for one line per kind: "failed cells", "launches disagree"
    count: int = 1  # how many cells (or jobs) it covers


@dataclass
class Analysis:
    data: RunData
    baseline: str
    baseline_given: bool
    cores: int
    window: int
    tables: dict[tuple[str, int], list[Key]] = field(default_factory=dict)
    judged: dict[Key, list[Verdict]] = field(default_factory=dict)

    def oversub(self, np_: int) -> str:
        return f" [oversubscribed: {np_} ranks on {self.cores} cores]" if np_ > self.cores else ""

    def label(self, key: Key) -> str:
        """The label verdict lines start with, as in the terminal summary."""
        bench, size, np_ = key
        text = f"{bench} {BENCHMARKS[bench].size_text(size)}" if BENCHMARKS[bench].sized else bench
        return text + self.oversub(np_)

    def title(self, bench: str, np_: int) -> str:
        return f"{bench}: {BENCHMARKS[bench].doc} ({np_} ranks){self.oversub(np_)}"

    def summary_keys(self, keys: list[Key]) -> list[Key]:
        """The keys whose verdicts the terminal prints by default: the first and last size."""
        return sorted({keys[0], keys[-1]}, key=keys.index)

    def best(self, key: Key) -> str | None:
        ok = comparable(self.data.cells[key])
        return min(ok, key=lambda v: center(ok[v])) if len(ok) > 1 else None

    def cell_text(self, key: Key, variant: str) -> str:
        """Median and (point-to-point) bandwidth, or why there is none: the terminal's cell."""
        group = self.data.cells[key].get(variant)
        if group is None:
            return "n/a"
        if group.status != CellStatus.OK or not group.values:
            return STATUS_TEXT.get(group.status, "-")
        text = units.seconds(median(group))
        bw = bandwidth(key[0], key[1], median(group), self.window)
        if bw is not None:
            text += f"  {units.bandwidth(bw)}"
        return text

    @cached_property
    def summaries(self) -> dict[Key, dict[str, Summary]]:
        return {k: {v: summarize(a) for v, a in comparable(cell).items()}
                for k, cell in self.data.cells.items()}

    @cached_property
    def warnings(self) -> list[Notice]:
        return _warnings(self)

    @cached_property
    def switches(self) -> dict[str, list[Switch]]:
        """Protocol switches seen on each variant's pingpong curve."""
        return protocol_switches(self.data)

    @cached_property
    def derived(self) -> dict[str, Derived]:
        """Latency, peak bandwidth and n1/2 of each variant's pingpong curve."""
        return derived(self.data)


def analyse(data: RunData, baseline: str | None = None) -> Analysis:
    if baseline is not None and baseline not in data.variants:
        raise ArenaError(f"unknown baseline '{baseline}'; run {data.run_id} has "
                         f"{', '.join(data.variants) or 'no variants'}")
    chosen = baseline or (data.variants[0] if data.variants else "")
    out = Analysis(data, chosen, baseline is not None, int(data.machine.get("cores", 1)),
                   int(data.settings.get("window", 64)))
    order = list(BENCHMARKS)
    timed = [k for k in data.cells if BENCHMARKS[k[0]].kind != "cost"]  # costs: costs.py
    for key in sorted(timed, key=lambda k: (order.index(k[0]), k[2], k[1])):
        out.tables.setdefault((key[0], key[2]), []).append(key)
    cells = [(k, comparable(data.cells[k])) for keys in out.tables.values() for k in keys]
    cells = [(k, c) for k, c in cells if len(c) > 1]
    out.judged = dict(zip([k for k, _ in cells], verdicts([c for _, c in cells]), strict=True))
    return out


def verdict_text(label: str, v: Verdict) -> str:
    """One verdict line, word for word the terminal's (without its colours)."""
    ci = f"95% CI {v.ci_low:.2f}-{v.ci_high:.2f}"
    if v.outcome == "faster":
        return f"{label}: {v.fast} ran {v.ratio:.2f}x faster than {v.slow} ({ci})"
    if v.outcome == "indistinguishable":
        return f"{label}: {v.fast} and {v.slow} are indistinguishable (ratio {v.ratio:.2f}, {ci})"
    if v.needed:
        why = (f"{v.launches_fast} and {v.launches_slow} launches cannot back it: the test on "
               f"launches needs {v.needed} per variant (--launches {v.needed})")
    elif v.ci_low > 1.05:
        why = f"the launches disagree too much to back it (p={v.p_adjusted:.2g} after Holm)"
    else:
        why = "the interval reaches within 5%: more launches would tell"
    return f"{label}: undecided, {v.fast} looks {v.ratio:.2f}x faster than {v.slow} ({ci}); {why}"


def _where(keys: list[Key]) -> str:
    first = keys[0]
    size = f" {BENCHMARKS[first[0]].size_text(first[1])}" if BENCHMARKS[first[0]].sized else ""
    more = {1: "", 2: " and 1 more cell"}.get(len(keys), f" and {len(keys) - 1} more cells")
    return f"{first[0]}{size}, {first[2]} ranks{more}"


# a cell warning's cause -> the kind of notice it is
CAUSES = {"launches": "launches disagree", "noise": "noisy cells", "interference":
          "interference", "warm-up": "warm-up in the observations", "oversubscribed":
          "oversubscribed cells"}
_CAUSE = re.compile(rf"^(?:{'|'.join(BENCHMARKS)})(?: \d+ (?:[KMG]i)?B)?: ")


def _warnings(a: Analysis) -> list[Notice]:
    data = a.data
    out: list[Notice] = []
    if data.status != RunStatus.COMPLETE:
        note = f" ({data.run.note})" if data.run.note else ""
        out.append(Notice("error", f"run {data.run_id} is {data.status}{note}: only part of "
                                    "the plan was measured", "incomplete run"))
    for np_ in sorted({k[2] for k in data.cells}):
        if np_ > a.cores:
            out.append(Notice("warn", f"{np_} ranks on {a.cores} cores: oversubscribed; ranks "
                                       "run unbound and busy-polling libraries measure the "
                                       "scheduler (every line at this rank count is marked)",
                              "oversubscribed"))
    problems: dict[tuple[str, str, str], list[Key]] = {}
    unexpressible: dict[tuple[str, str], list[Key]] = {}
    short: dict[str, list[Key]] = {}
    wanted = int(data.settings.get("observations", 0)) * int(data.settings.get("launches", 1))
    for key, cell in data.cells.items():
        for variant, group in cell.items():
            if group.status in (CellStatus.FAILED, CellStatus.INVALID, CellStatus.SKIPPED):
                # later cells of a failed job say "<bench> <size>: <why>": one line per cause
                reason = _CAUSE.sub("", group.reason or "")
                problems.setdefault((variant, group.status, reason), []).append(key)
            elif group.status == CellStatus.NA:
                unexpressible.setdefault((variant, group.reason), []).append(key)
            elif group.lost:  # measured in some launches, lost in others: say so, and why
                for status, why in set(group.lost.values()):
                    problems.setdefault((variant, f"{status} in a launch (measured in "
                                         f"{len(group.nested)} before it, not asked again)",
                                         _CAUSE.sub("", why)), []).append(key)
            elif (group.values and len(group.values) < wanted
                  and BENCHMARKS[key[0]].kind != "startup"):
                short.setdefault(variant, []).append(key)
            elif not group.values:
                problems.setdefault((variant, "empty", "no observation was stored"),
                                    []).append(key)
    for (variant, status, reason), keys in problems.items():
        level = "warn" if status.startswith(CellStatus.SKIPPED) else "error"
        out.append(Notice(level, f"{variant} {status} at {_where(keys)}: {reason or 'no reason'}",
                          f"{status} cells" if " " not in status else "cells lost in a launch",
                          len(keys)))
    for job in data.jobs:
        cause = _CAUSE.sub("", job.reason or "")
        if job.status not in (JobStatus.OK, JobStatus.DONE, JobStatus.RUNNING) and not any(
                v == job.variant and r == cause for v, _, r in problems):
            out.append(Notice("error", f"{job.variant} job at {job.np} ranks "
                                        f"{job.status}: {job.reason or 'no reason'}",
                              f"{job.status} jobs"))
    for variant, keys in short.items():
        cells = "1 cell has" if len(keys) == 1 else f"{len(keys)} cells have"
        out.append(Notice("info", f"{variant}: {cells} fewer than {wanted} "
                                   f"observations (a cell stops taking observations after "
                                   f"{data.settings.get('max_cell_time', '?')} s), "
                                   f"first at {_where(keys)}", "short of observations",
                                   len(keys)))
    out += [Notice("warn", line, CAUSES[cause], n)
            for cause, n, line in warning_lines(cell_warnings(data))]
    for (variant, reason), keys in unexpressible.items():
        benches = sorted({k[0] for k in keys}, key=list(BENCHMARKS).index)
        out.append(Notice("info", f"{variant}: n/a for {', '.join(benches)} "
                                   f"({reason or 'not expressible'})", "not expressible (n/a)",
                                   len(keys)))
    return out


def reference_variant(data: RunData) -> str | None:
    """The run's plain variant of the reference family (raw TCP), if it has one."""
    references = {f.name for f in families() if f.reference}
    return next((i.impl_id for i in data.implementations
                 if i.family in references and i.impl_id in data.variants), None)


def notice_kinds(notices: list[Notice]) -> list[Notice]:
    """One notice per level and kind, in order of first appearance: how many cells (or jobs)
    the kind covers, how many detailed lines stand behind it, and the first one's text."""
    by: dict[tuple[str, str], list[Notice]] = {}
    for n in notices:
        by.setdefault((n.level, n.kind), []).append(n)
    out = []
    for (level, kind), ns in by.items():
        if len(ns) == 1:
            out.append(ns[0])
            continue
        count = sum(n.count for n in ns)
        unit = "jobs" if kind.endswith("jobs") else "cells"
        out.append(Notice(level, f"{kind}: {count} {unit} ({len(ns)} lines with --all); "
                                 f"e.g. {ns[0].text}", kind, count))
    return out


def method_lines(data: RunData) -> list[str]:
    """The method as every report states it: how observations are taken, how each benchmark's
    calls were timed (as stored with its cells), and what the window method dropped."""
    target = units.seconds(data.settings.get("target_time", 0))
    return [METHOD.format(target=target, launches=data.settings.get("launches", 1)),
            *_timing_lines(data), *_late_lines(data)]


def _timing_lines(data: RunData) -> list[str]:
    """'Timed by METHOD (what it means): BENCH, BENCH at N ranks (VARIANT), ...' per method
    used, as stored with the cells; a benchmark timed in more than one way is named per rank
    count, with the variants where not all of them."""
    uses: dict[str, dict[tuple[str, int], set[str]]] = {}  # method -> (bench, np) -> variants
    everyone: dict[tuple[str, int], set[str]] = {}
    methods: dict[str, set[str]] = {}  # bench -> the methods of its cells
    for (bench, _, np_), cell in data.cells.items():
        if BENCHMARKS[bench].kind in ("timer", "p2p", "coll"):
            for variant, group in cell.items():
                uses.setdefault(group.timing, {}).setdefault((bench, np_), set()).add(variant)
                everyone.setdefault((bench, np_), set()).add(variant)
                methods.setdefault(bench, set()).add(group.timing)
    out = []
    for method in (m for m in TIMING if m in uses):
        names: list[str] = []
        for bench in (b for b in BENCHMARKS if b in methods):
            keys = sorted(k for k in uses[method] if k[0] == bench)
            if keys and len(methods[bench]) == 1:
                names.append(bench)
            for key in keys if len(methods[bench]) > 1 else []:
                who = uses[method][key]
                names.append(f"{bench} at {key[1]} ranks" + (
                    "" if who == everyone[key] else f" ({', '.join(sorted(who))})"))
        out.append(f"Timed by {TIMING[method]}: {', '.join(names)}.")
    return out


def _late_lines(data: RunData) -> list[str]:
    """Per variant timed by the window method, the share of calls it dropped, where above 0."""
    shares: dict[str, list[tuple[float, Key]]] = {}
    for key, cell in data.cells.items():
        for variant, group in cell.items():
            shares.setdefault(variant, []).extend((s, key) for s in group.late)
    out = []
    for variant in data.variants:
        got = shares.get(variant, [])
        if got and (mean := float(np.mean([s for s, _ in got]))) > 0:
            worst, key = max(got)
            size = f" {format_size(key[1])}" if BENCHMARKS[key[0]].sized else ""
            out.append(f"{variant}: the window method dropped {mean:.1%} of its calls (a rank "
                       f"reached the call's window late), at most {worst:.0%} of an observation "
                       f"({key[0]}{size}, {key[2]} ranks).")
    return out


def implementation_line(impl: ImplementationRecord) -> str:
    first = impl.version_string.splitlines()[0] if impl.version_string else ""
    return f"{impl.impl_id}: {first} ({impl.origin}, {impl.wrapper})"


def variant_settings(row: VariantRecord) -> str:
    parts = [f"{k}={v}" for k, v in row.env.items()] + [str(x) for x in row.args]
    return " ".join(parts) or "defaults"


def machine_line(data: RunData) -> str:
    m = data.machine
    return (f"{m.get('hostname')}: {m.get('cpu_model')}, {m.get('cores')} cores, "
            f"{int(m.get('memory_bytes', 0)) / 2**30:.1f} GiB, kernel {m.get('kernel')}, "
            f"governor {m.get('governor')}")


def variant_rows(data: RunData, rows: list[VariantRecord] | None) -> list[VariantRecord]:
    """The store's variant rows in the report's order; bare names when none are given."""
    known = {r.variant: r for r in rows or []}
    return [known.get(v, VariantRecord(data.run_id, v, "", "", {}, [], "auto"))
            for v in data.variants]


def switch_text(variant: str, s: Switch) -> str:
    """One protocol switch, in words."""
    return (f"{variant} switches protocol between {format_size(s.last_before)} and "
            f"{format_size(s.size)}: {s.kind} changes x{s.jump:.1f}")


def derived_text(variant: str, d: Derived) -> str:
    """Latency, peak and n1/2 of one variant, in words."""
    text = f"{variant}: latency {units.seconds(d.latency)} at {format_size(d.latency_size)}"
    if d.peak_bandwidth:
        text += (f", peak {units.bandwidth(d.peak_bandwidth)} at "
                 f"{format_size(d.peak_size or 0)}")
    if d.n_half:
        text += f", half of it from {format_size(round(d.n_half))}"
    return text


# --- the answer first -----------------------------------------------------------------------


@dataclass(frozen=True)
class Stretch:
    """Sizes of one benchmark over which one variant has the lowest figure."""

    winner: str
    first: int
    last: int
    sizes: int
    decided: int  # sizes where it ran faster than every other variant, with the verdict's backing


@dataclass(frozen=True)
class Standing:
    """A variant against the fastest of each cell it measured: the geometric mean of its ratios
    (1.0: always the fastest), with a hierarchical bootstrap interval."""

    variant: str
    geomean: float
    ci_low: float
    ci_high: float
    cells: int


def stretches(a: Analysis, bench: str, np_: int) -> list[Stretch]:
    """Who has the lowest figure across a table's sizes, one entry per change of winner."""
    out: list[Stretch] = []
    for key in a.tables[(bench, np_)]:
        best = a.best(key)
        if best is None:
            continue
        decided = all(v.outcome == "faster" for v in a.judged.get(key, [])) and bool(
            a.judged.get(key))
        if out and out[-1].winner == best:
            s = out[-1]
            out[-1] = Stretch(best, s.first, key[1], s.sizes + 1, s.decided + decided)
        else:
            out.append(Stretch(best, key[1], key[1], 1, int(decided)))
    return out


def standings(a: Analysis, rounds: int = 400) -> list[Standing]:
    """Every variant's standing over the time cells of point-to-point and collective
    benchmarks where at least two variants measured something, best first."""
    rng = np.random.default_rng(0)
    logs: dict[str, list[np.ndarray]] = {}
    points: dict[str, list[float]] = {}
    for keys in a.tables.values():
        for key in keys:
            if BENCHMARKS[key[0]].kind not in ("p2p", "coll"):
                continue
            ok = comparable(a.data.cells[key])
            if len(ok) < 2:
                continue
            boot = {v: boot_centers(s, rng, rounds) for v, s in ok.items()}
            best = min(ok, key=lambda v: center(ok[v]))
            for v, s in ok.items():
                logs.setdefault(v, []).append(np.log(boot[v] / boot[best]))
                points.setdefault(v, []).append(math.log(center(s) / center(ok[best])))
    out = []
    for v, rows in logs.items():
        means = np.exp(np.mean(np.stack(rows), axis=0))
        lo, hi = np.percentile(means, [2.5, 97.5])
        out.append(Standing(v, math.exp(float(np.mean(points[v]))), float(lo), float(hi),
                            len(rows)))
    return sorted(out, key=lambda s: s.geomean)


def strongest(a: Analysis, count: int = 5) -> list[tuple[Key, Verdict]]:
    """The decided differences that matter most: the largest lower bounds of the ratio."""
    decided = [(k, v) for k, vs in a.judged.items() for v in vs if v.outcome == "faster"]
    return sorted(decided, key=lambda kv: -kv[1].ci_low)[:count]


def stretch_text(bench: str, s: Stretch) -> str:
    spec = BENCHMARKS[bench]
    where = (spec.size_text(s.first) if s.first == s.last else
             f"{spec.size_text(s.first)}-{spec.size_text(s.last)}") if spec.sized else ""
    backed = (f"decided at {s.decided} of {s.sizes} size{'s' if s.sizes > 1 else ''}"
              if spec.sized else ("decided" if s.decided else "not decided"))
    return f"{s.winner}{' ' + where if where else ''} ({backed})"


def scoreboard_lines(a: Analysis) -> list[str]:
    """The answer on one screen: who wins each benchmark over which sizes, each variant's
    standing against the fastest, and the strongest decided differences."""
    lines = ["Who is fastest (lowest median of launch medians; 'decided': the launch statistics "
             "back it against every other variant):"]
    for (bench, np_), _keys in a.tables.items():
        if BENCHMARKS[bench].kind not in ("p2p", "coll", "startup", "timer"):
            continue
        parts = [stretch_text(bench, s) for s in stretches(a, bench, np_)]
        if parts:
            lines.append(f"  {bench} ({np_} ranks{a.oversub(np_)}): " + "; ".join(parts))
    ranked = standings(a)
    if len(ranked) > 1:
        lines.append("Overall, against the fastest of each cell (geometric mean of time ratios "
                     "over the point-to-point and collective cells, 95% CI):")
        lines += [f"  {s.variant}: {s.geomean:.2f}x ({s.ci_low:.2f}-{s.ci_high:.2f}) over "
                  f"{s.cells} cells" for s in ranked]
    if top := strongest(a):
        lines.append("Largest decided differences:")
        lines += [f"  {verdict_text(a.label(k), v)}" for k, v in top]
    return lines
