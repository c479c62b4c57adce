"""A run analysed once for every report: `analyse` computes the tables in order, the verdicts
(corrected across the whole report), per-cell statistics, protocol switches, derived
figures, every warning and the scoreboard's standings, so that all reports say the same;
`report/` only renders them."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import cached_property

import numpy as np

from ..base.errors import ArenaError
from ..base.records import Cell, JobRecord, RunKind
from ..base.status import CellStatus, JobStatus, RunStatus
from ..impls.registry import families
from ..model.benchmarks import BENCHMARKS, Kind, element_type
from ..store.results import Levels, RunData
from .cells import Cause, cell_warnings, warning_lines
from .curves import Derived, Switch, derived, protocol_switches
from .floor import LinkFloor, MachineFloor, link_floor, split
from .groups import comparable, figure, measured
from .run_spread import RunSpread, learn, stated
from .stats import (
    JudgedCell,
    RunAllowance,
    Summary,
    Verdict,
    center,
    fastest,
    final_alpha,
    judge_cells,
    launch_medians,
    ratio_ci,
    summarize,
)
from .verdicts import Speed, Sureness


def bandwidth(bench: str, size: int, reduced: float, window: int) -> float | None:
    """Bytes per second for a point-to-point benchmark, as the terminal summary computes it."""
    if size <= 0:
        return None
    return BENCHMARKS[bench].bandwidth(size, reduced, window)


class Level(StrEnum):
    """How much a notice matters: an error, a warning, or information."""

    ERROR = "error"
    WARN = "warn"
    INFO = "info"


@dataclass(frozen=True)
class Notice:
    level: Level
    text: str
    kind: str  # what it is about, for one line per kind: "failed cells", "launches disagree"
    count: int = 1  # how many cells (or jobs) it covers
    example: str = ""  # a line of many cells: its first cell in words
    jobs: bool = False  # it counts jobs, not cells


@dataclass
class Analysis:
    data: RunData
    baseline: str
    baseline_given: bool
    cores: int
    window: int
    tables: dict[tuple[str, int], list[Cell]] = field(default_factory=dict)
    judged: dict[Cell, list[Verdict]] = field(default_factory=dict)  # the fastest against others
    pairs: dict[Cell, JudgedCell] = field(default_factory=dict)  # every pair of each cell
    spread: RunSpread | None = None  # what intervals carry for reruns (None: a simulation)
    floor: MachineFloor | None = None  # the machine floor, kept out of `data` (floor.split)
    link: LinkFloor | None = None  # an emulated cluster's link as set (floor.link_floor)

    def oversub(self, np_: int) -> str:
        return f" [oversubscribed: {np_} ranks on {self.cores} cores]" if np_ > self.cores else ""

    def label(self, key: Cell) -> str:
        """The label verdict lines start with, as in the terminal summary."""
        bench, size, np_ = key
        text = f"{bench} {BENCHMARKS[bench].size_text(size)}" if BENCHMARKS[bench].sized else bench
        return text + self.oversub(np_)

    def title(self, bench: str, np_: int) -> str:
        """What a benchmark's table holds: its doc, its datatype where that matters, ranks."""
        typed = element_type(bench, self.data.settings)
        return (f"{bench}: {BENCHMARKS[bench].doc} ({f'{typed}, ' if typed else ''}{np_} ranks)"
                f"{self.oversub(np_)}")

    def summary_keys(self, keys: list[Cell]) -> list[Cell]:
        """The keys whose verdicts the terminal prints by default: the first and last size."""
        return sorted({keys[0], keys[-1]}, key=keys.index)

    @cached_property
    def log_launch_medians(self) -> dict[tuple[Cell, str], np.ndarray]:
        """Each measured cell's launch medians, logged: what every standing resamples (the
        answer asks for several standings over the same cells)."""
        with np.errstate(divide="ignore"):  # a median of 0 logs as -inf, as the standings take it
            return {(k, v): np.log(launch_medians(sample)) for k, cell in self.data.cells.items()
                    for v, sample in comparable(cell).items()}

    def best(self, key: Cell) -> str | None:
        """The cell's fastest variant, as its verdicts pick it (`stats.fastest`)."""
        if self.judged.get(key):
            return self.judged[key][0].fast
        ok = comparable(self.data.cells[key])
        return fastest(ok) if len(ok) > 1 else None

    @cached_property
    def summaries(self) -> dict[Cell, dict[str, Summary]]:
        """Each cell's figures; its rerun range widened by the run-to-run spread."""
        return {k: {v: self._rerun(k, summarize(a)) for v, a in comparable(cell).items()}
                for k, cell in self.data.cells.items()}

    def _rerun(self, key: Cell, s: Summary) -> Summary:
        if self.spread is None:
            return s
        low, high = self.spread.widened_rerun(key, s.median, s.rerun_low, s.rerun_high)
        return replace(s, rerun_low=low, rerun_high=high)

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


def levels_of(data: RunData) -> Levels:
    """The run's own launch medians per (cell, variant), as the store's earlier runs give
    theirs."""
    medians, timing = {}, {}
    for key, cell in data.cells.items():
        for variant, sample in comparable(cell).items():
            medians[(key, variant)] = launch_medians(sample)
            timing[(key, variant)] = cell[variant].timing
    return Levels(data.run_id, medians, timing)


def analyse(data: RunData, baseline: str | None = None) -> Analysis:
    data, machine_floor = split(data)
    if baseline is not None and baseline not in data.variants:
        raise ArenaError(f"unknown baseline '{baseline}'; run {data.run_id} has "
                         f"{', '.join(data.variants) or 'no variants'}")
    chosen = baseline or (data.variants[0] if data.variants else "")
    out = Analysis(data, chosen, baseline is not None, int(data.machine.get("cores", 1)),
                   data.settings.window, floor=machine_floor, link=link_floor(data))
    order = list(BENCHMARKS)
    timed = [k for k in data.cells if BENCHMARKS[k.bench].kind != Kind.COST]  # costs: costs.py
    for key in sorted(timed, key=lambda k: (order.index(k.bench), k.np, k.size)):
        out.tables.setdefault((key.bench, key.np), []).append(key)
    cells = [(k, comparable(data.cells[k])) for keys in out.tables.values() for k in keys]
    cells = [(k, c) for k, c in cells if len(c) > 1]
    if data.run.kind != RunKind.SIMULATED:
        out.spread = learn(levels_of(data), data.earlier) if data.earlier else stated()
    allowances = [out.spread.allowance(k, c) if out.spread else RunAllowance() for k, c in cells]
    out.pairs = dict(zip([k for k, _ in cells],
                         judge_cells([c for _, c in cells], final_alpha(data.settings.budget > 0),
                                     allowances=allowances),
                         strict=True))
    out.judged = {k: c.against_fastest for k, c in out.pairs.items()}
    return out


def _where(keys: list[Cell]) -> str:
    first = keys[0]
    spec = BENCHMARKS[first.bench]
    size = f" {spec.size_text(first.size)}" if spec.sized else ""
    more = {1: "", 2: " and 1 more cell"}.get(len(keys), f" and {len(keys) - 1} more cells")
    return f"{first.bench}{size}, {first.np} ranks{more}"


# a cell warning's cause -> the kind of notice it is
CAUSES = {Cause.LAUNCHES: "launches disagree", Cause.NOISE: "noisy cells",
          Cause.INTERFERENCE: "interference", Cause.WARM_UP: "warm-up in the observations",
          Cause.OVERSUBSCRIBED: "oversubscribed cells"}


@dataclass(frozen=True)
class Problem:
    """A variant's cells lost the same way: their status (None: nothing was stored), or the
    status of the one launch that lost cells other launches measured; and the cause."""

    variant: str
    status: CellStatus | None
    cause: str
    measured_before: int | None = None  # lost in a launch after this many measured them

    @property
    def said(self) -> str:
        if self.status is None:
            return "empty"
        if self.measured_before is not None:
            return (f"{self.status} in a launch (measured in {self.measured_before} before it, "
                    "not asked again)")
        return self.status

    @property
    def kind(self) -> str:
        return "cells lost in a launch" if self.measured_before is not None else \
            f"{self.said} cells"


@dataclass
class Flagged:
    """A run's cells that need a word, by what is wrong with them."""

    problems: dict[Problem, list[Cell]] = field(default_factory=dict)
    unexpressible: dict[tuple[str, str], list[Cell]] = field(default_factory=dict)  # variant, why
    short: dict[str, list[Cell]] = field(default_factory=dict)  # variant -> cells


def _flagged(data: RunData) -> Flagged:
    """Every variant's cell that failed, was lost in a launch, is not expressible, holds fewer
    observations than asked, or holds none."""
    out = Flagged()
    wanted = data.settings.observations * data.settings.launches
    for key, cell in data.cells.items():
        for variant, group in cell.items():
            if group.status in (CellStatus.FAILED, CellStatus.INVALID, CellStatus.SKIPPED):
                out.problems.setdefault(Problem(variant, group.status, group.reason),
                                        []).append(key)
            elif group.status == CellStatus.NA:
                out.unexpressible.setdefault((variant, group.reason), []).append(key)
            elif group.lost:  # measured in some launches, lost in others: say so, and why
                for status, why in set(group.lost.values()):
                    out.problems.setdefault(Problem(variant, status, why, len(group.nested)),
                                            []).append(key)
            elif (group.values and len(group.values) < wanted
                  and BENCHMARKS[key.bench].kind != Kind.STARTUP):
                out.short.setdefault(variant, []).append(key)
            elif not group.values:
                out.problems.setdefault(Problem(variant, None, "no observation was stored"),
                                        []).append(key)
    return out


def _run_notices(a: Analysis) -> list[Notice]:
    """An incomplete run, and rank counts above the machine's cores."""
    data = a.data
    out = []
    if data.status != RunStatus.COMPLETE:
        note = f" ({data.run.note})" if data.run.note else ""
        out.append(Notice(Level.ERROR, f"run {data.run_id} is {data.status}{note}: only part of "
                                    "the plan was measured", "incomplete run"))
    for np_ in sorted({k.np for k in data.cells}):
        if np_ > a.cores:
            out.append(Notice(Level.WARN, f"{np_} ranks on {a.cores} cores: oversubscribed; ranks "
                                       "run unbound and busy-polling libraries measure the "
                                       "scheduler (every line at this rank count is marked)",
                              "oversubscribed"))
    return out


def _problem_notices(problems: dict[Problem, list[Cell]]) -> list[Notice]:
    """One line per variant, status and cause (skipped cells warn, the others are errors)."""
    return [Notice(Level.WARN if p.status == CellStatus.SKIPPED else Level.ERROR,
                   f"{p.variant} {p.said} at {_where(keys)}: {p.cause or 'no reason'}", p.kind,
                   len(keys))
            for p, keys in problems.items()]


def _job_notices(jobs: list[JobRecord], problems: dict[Problem, list[Cell]]) -> list[Notice]:
    """The jobs that failed for a cause no line about the variant's cells gives."""
    said = {(p.variant, p.cause) for p in problems}
    return [Notice(Level.ERROR, f"{job.variant} job at {job.np} ranks {job.status}: "
                            f"{job.why or 'no reason'}", f"{job.status} jobs", jobs=True)
            for job in jobs
            if job.status not in (JobStatus.OK, JobStatus.DONE, JobStatus.RUNNING)
            and (job.variant, job.reason or "") not in said]


def _short_notices(data: RunData, short: dict[str, list[Cell]]) -> list[Notice]:
    wanted = data.settings.observations * data.settings.launches
    out = []
    for variant, keys in short.items():
        cells = "1 cell has" if len(keys) == 1 else f"{len(keys)} cells have"
        out.append(Notice(Level.INFO, f"{variant}: {cells} fewer than {wanted} "
                                   f"observations (a cell stops taking observations after "
                                   f"{data.settings.max_cell_time} s), "
                                   f"first at {_where(keys)}", "short of observations",
                                   len(keys)))
    return out


def _unexpressible_notices(unexpressible: dict[tuple[str, str], list[Cell]]) -> list[Notice]:
    out = []
    for (variant, reason), keys in unexpressible.items():
        benches = sorted({k.bench for k in keys}, key=list(BENCHMARKS).index)
        out.append(Notice(Level.INFO, f"{variant}: n/a for {', '.join(benches)} "
                                   f"({reason or 'not expressible'})", "not expressible (n/a)",
                                   len(keys)))
    return out


def _warnings(a: Analysis) -> list[Notice]:
    """Every notice about the run, in the order the reports give them."""
    cells = _flagged(a.data)
    return [*_run_notices(a), *_problem_notices(cells.problems),
            *_job_notices(a.data.jobs, cells.problems), *_short_notices(a.data, cells.short),
            *(Notice(Level.WARN, w.text, CAUSES[w.cause], w.cells, w.example)
              for w in warning_lines(cell_warnings(a.data))),
            *_unexpressible_notices(cells.unexpressible)]


def reference_variant(data: RunData) -> str | None:
    """The run's plain variant of the reference family (raw TCP), if it has one."""
    references = {f.name for f in families() if f.reference}
    return next((i.impl_id for i in data.implementations
                 if i.family in references and i.impl_id in data.variants), None)


def notice_kinds(notices: list[Notice]) -> list[Notice]:
    """One notice per level and kind, in order of first appearance: how many cells (or jobs)
    the kind covers, how many detailed lines stand behind it, and the first one's text (or,
    for lines of many cells, the first cell's)."""
    by: dict[tuple[Level, str], list[Notice]] = {}
    for n in notices:
        by.setdefault((n.level, n.kind), []).append(n)
    out = []
    for (level, kind), ns in by.items():
        if len(ns) == 1 and not ns[0].example:
            out.append(ns[0])
            continue
        count = sum(n.count for n in ns)
        unit = "jobs" if ns[0].jobs else "cells"
        lines = f"{len(ns)} lines with --all" if len(ns) > 1 else "--all lists them"
        out.append(Notice(level, f"{kind}: {count} {unit} ({lines}); "
                                 f"e.g. {ns[0].example or ns[0].text}", kind, count,
                          jobs=ns[0].jobs))
    return out


# --- the answer first -----------------------------------------------------------------------


@dataclass(frozen=True)
class Stretch:
    """Neighbouring sizes of one benchmark where one variant has the lowest figure, and how
    sure that is: decided against every other variant, level with some (indistinguishable,
    the rest decided), or open against some."""

    winner: str
    first: int
    last: int
    state: Sureness
    others: tuple[str, ...] = ()  # level: those within the threshold; open: those undecided


def _state(verdicts: list[Verdict]) -> tuple[Sureness, tuple[str, ...]]:
    level = tuple(v.slow for v in verdicts if v.outcome == Speed.INDISTINGUISHABLE)
    undecided = tuple(v.slow for v in verdicts if v.outcome == Speed.UNDECIDED)
    if undecided:
        return Sureness.OPEN, undecided
    return (Sureness.LEVEL, level) if level else (Sureness.DECIDED, ())


@dataclass(frozen=True)
class Standing:
    """A variant against the leader over the cells every ranked variant measured: the geometric
    mean of its time ratios (1.0: as fast as the leader), with a bootstrap interval."""

    variant: str
    geomean: float
    ci_low: float
    ci_high: float
    cells: int


def stretches(a: Analysis, bench: str, np_: int) -> list[Stretch]:
    """Who has the lowest figure across a table's sizes and how sure that is, one entry per
    change of winner or of sureness."""
    out: list[Stretch] = []
    for key in a.tables[(bench, np_)]:
        best = a.best(key)
        if best is None:
            continue
        state, others = _state(a.judged.get(key, []))
        if out and (out[-1].winner, out[-1].state) == (best, state):
            s = out[-1]
            out[-1] = Stretch(best, s.first, key.size, state,
                              tuple(dict.fromkeys(s.others + others)))
        else:
            out.append(Stretch(best, key.size, key.size, state, others))
    return out


def standings(a: Analysis, variants: Sequence[str] | None = None,
              keys: Sequence[Cell] | None = None, leader: str | None = None,
              rounds: int = 1000, unless_led_by: str | None = None) -> list[Standing]:
    """Every variant (of `variants`, default all) that measured at least half of the cells
    (`keys`, default the run's point-to-point and collective time cells), against the leader
    (`leader`, default the lowest geometric mean) over the cells all of them measured, best
    first. The interval resamples each variant's launches jointly across the cells (one launch
    measures all its cells), so shared launch levels are not counted as independent evidence.
    Empty at once, before any resampling, where `unless_led_by` has the lowest geometric mean."""
    if keys is None:
        keys = [k for ks in a.tables.values() for k in ks
                if BENCHMARKS[k.bench].kind in (Kind.P2P, Kind.COLL)]
    cells = {k: comparable(a.data.cells[k]) for k in keys}
    counts = {v: sum(v in c for c in cells.values()) for v in variants or a.data.variants}
    ranked = [v for v, n in counts.items() if n and n >= max(counts.values()) / 2]
    common = [k for k, c in cells.items() if all(v in c for v in ranked)]
    if len(ranked) < 2 or not common or (leader is not None and leader not in ranked):
        return []
    logs = {v: np.array([math.log(center(cells[k][v])) for k in common]) for v in ranked}
    lowest = min(ranked, key=lambda v: logs[v].mean())
    if lowest == unless_led_by:
        return []
    leader = leader or lowest
    rng = np.random.default_rng(0)
    boot = {}
    for v in ranked:
        medians = [a.log_launch_medians[k, v] for k in common]
        # one draw per launch slot shared by every cell, scaled to each cell's launch count
        draws = rng.random((rounds, max(map(len, medians))))
        boot[v] = np.mean([np.median(m[(draws[:, :len(m)] * len(m)).astype(int)], axis=1)
                           for m in medians], axis=0)
    out = []
    for v in ranked:
        lo, hi = np.exp(np.percentile(boot[v] - boot[leader], [2.5, 97.5])) \
            if v != leader else (1.0, 1.0)
        out.append(Standing(v, math.exp(float(np.mean(logs[v] - logs[leader]))), float(lo),
                            float(hi), len(common)))
    return sorted(out, key=lambda s: s.geomean)


def strongest(a: Analysis, count: int = 5, among: set[str] | None = None
              ) -> list[tuple[Cell, Verdict]]:
    """The decided differences that matter most: the largest lower bounds of the ratio, one per
    pair of variants (a pair that differs a thousandfold everywhere would fill the list), of
    pairs within `among` where given."""
    decided = [(k, v) for k, vs in a.judged.items() for v in vs if v.outcome == Speed.FASTER
               and (among is None or {v.fast, v.slow} <= among)]
    best: dict[tuple[str, str], tuple[Cell, Verdict]] = {}
    for key, v in sorted(decided, key=lambda kv: -kv[1].ci_low):
        best.setdefault((v.fast, v.slow), (key, v))
    return list(best.values())[:count]


def launch_figures(a: Analysis, key: Cell) -> dict[str, tuple[np.ndarray, float]]:
    """Per variant that measured the cell: each launch's median, and the cell's figure."""
    return {v: (launch_medians(s), center(s)) for v, s in comparable(a.data.cells[key]).items()}


def relative_to_baseline(a: Analysis, bench: str, np_: int
                         ) -> dict[str, list[tuple[int, float, float, float]]]:
    """Per variant other than the baseline, per size: the baseline's figure over the variant's
    in % (200: twice as fast) with its 95% interval over launches; a 0-byte cell of a
    sized benchmark counts as 1 byte on a log axis."""
    out: dict[str, list[tuple[int, float, float, float]]] = {}
    for key in a.tables[(bench, np_)]:
        ok = comparable(a.data.cells[key])
        if a.baseline not in ok or not (key.size > 0 or not BENCHMARKS[bench].sized):
            continue
        for variant in (v for v in a.data.variants if v != a.baseline and v in ok):
            ratio, lo, hi = ratio_ci(ok[variant], ok[a.baseline])
            out.setdefault(variant, []).append((max(key.size, 1), 100 * ratio, 100 * lo,
                                                100 * hi))
    return out


@dataclass(frozen=True)
class Board:
    """A variant's line on the HTML scoreboard."""

    variant: str
    fastest: int  # cells where its figure was the lowest
    backed: int  # of those, cells where the verdict against the runner-up is 'faster'
    measured: int
    problems: int  # failed, invalid or skipped cells


def scoreboard(a: Analysis) -> list[Board]:
    """Every variant's wins, backed wins, measured and lost cells; most backed wins first."""
    board = {v: [0, 0, 0, 0] for v in a.data.variants}
    for vs in a.judged.values():
        if vs:
            board[vs[0].fast][0] += 1
            board[vs[0].fast][1] += vs[0].outcome == Speed.FASTER
    for cell in a.data.cells.values():
        for variant, group in cell.items():
            if variant in board:
                board[variant][2] += measured(group)
                board[variant][3] += group.status in (CellStatus.FAILED, CellStatus.INVALID,
                                                      CellStatus.SKIPPED)
    rows = [Board(v, *counts) for v, counts in board.items()]
    return sorted(rows, key=lambda r: (-r.backed, -r.fastest, r.variant))


def against_reference(data: RunData) -> tuple[str, int, dict[str, float]] | None:
    """The reference variant (raw TCP), the largest pingpong size it measured, and every other
    variant's bandwidth there in times the reference's (figures: medians of launch medians)."""
    ref = reference_variant(data)
    sizes = sorted(k.size for k, c in data.cells.items()
                   if k.bench == "pingpong" and k.np == 2 and measured(c.get(ref or "")))
    if ref is None or not sizes:
        return None
    cell = data.cells[Cell("pingpong", sizes[-1], 2)]
    return ref, sizes[-1], {v: figure(cell[ref]) / figure(g) for v, g in cell.items()
                            if v != ref and measured(g)}


@dataclass(frozen=True)
class Late:
    """Calls the window method dropped for one variant (a rank reached the call's window late)."""

    mean: float  # share dropped, over its observations
    worst: float  # the largest share of one observation
    key: Cell  # that observation's cell


def late_calls(data: RunData) -> dict[str, Late]:
    """Per variant whose window method dropped calls, how many."""
    shares: dict[str, list[tuple[float, Cell]]] = {}
    for key, cell in data.cells.items():
        for variant, group in cell.items():
            shares.setdefault(variant, []).extend((s, key) for s in group.late)
    out: dict[str, Late] = {}
    for variant in data.variants:
        got = shares.get(variant, [])
        if got and (mean := float(np.mean([s for s, _ in got]))) > 0:
            worst, key = max(got)
            out[variant] = Late(mean, worst, key)
    return out
