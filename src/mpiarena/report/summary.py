"""What every report says in the same words: the method, how calls were timed, verdicts, the
scoreboard, switches and derived figures. The figures and decisions come from
`analysis.run.analyse`; this module only puts them into words."""

from __future__ import annotations

import math
from typing import assert_never

from ..analysis.answer import (
    KINDS,
    Answer,
    BySize,
    Decisions,
    Lead,
    Leading,
    Scope,
    SizeRange,
    Statement,
    answer,
    cell_lead,
    mpi_variants,
)
from ..analysis.comparison import Why
from ..analysis.curves import Derived, Jump, Switch
from ..analysis.floor import (
    LinkFloor,
    MachineFloor,
    Multiple,
    headline_keys,
    link_headline,
    link_multiple,
    multiple,
    steadiness,
)
from ..analysis.groups import figure, measured
from ..analysis.run import (
    Analysis,
    Standing,
    Stretch,
    bandwidth,
    late_calls,
    standings,
    stretches,
    strongest,
)
from ..analysis.run_spread import RunSpread
from ..analysis.stats import (
    ALPHA,
    CONFIDENCE,
    CORRECTION,
    INTERVAL_HOLDS_RERUN,
    LOOK_ALPHA,
    MAX_LOOKS,
    MIN_LAUNCHES,
    PAIRED_FROM,
    PAIRED_SHARE,
    RERUN_SURE_FROM,
    SAME_LOOK_TAIL,
    THRESHOLD,
    Verdict,
    final_alpha,
)
from ..analysis.verdicts import Speed, Sureness
from ..base import units
from ..base.records import LOCAL, Cell, ImplementationRecord, RunKind, VariantRecord, impl_of
from ..base.sizes import format_size
from ..base.status import CellStatus
from ..imports.records import IMPORTED_METHOD, imported_suite, timing_text
from ..model.benchmarks import BENCHMARKS, Kind, rounded_up
from ..store.results import RunData

METHOD = ("Each variant ran in {launches} independent launches per rank count, interleaved "
          "across variants (launch i of every variant, one job at a time in a shuffled order, "
          "before launch i + 1 of any; a launch's cells back to back). Each observation "
          "times k calls (k chosen so that they last at least "
          "{target}), after a warm-up, preceded by mpiarena's own dissemination barrier; "
          "point-to-point: ranks 0 and 1 (pingpong: half the round trip); collectives and "
          "start-up: the slowest rank. Cells show the median of the launch medians; every "
          "interval and test works on the launch medians. A {confidence} interval holds "
          "the figure of a rerun only about {holds} of the time, since both runs vary: where a "
          "rerun of the same command lands ({confidence} or more from {sure} launches) is its "
          "rerun range (HTML report, summary export). {rule}")


def rule_text(family: str = "the report", subject: str = "faster") -> str:
    """The verdict rule in words, from the constants `stats.judge` decides by: every report,
    docs/statistics.md and the tests read it here."""
    c, t = f"{CONFIDENCE:.0%}", f"{THRESHOLD:.0%}"
    return (f"'{subject}' means by more than {t}: it needs the Mann-Whitney test on launch "
            f"medians of a time ratio beyond {t}, {CORRECTION}-corrected across {family} "
            f"(q < {ALPHA:g}: at most {ALPHA:.0%} of the '{subject}' verdicts of {family} are "
            f"expected to be false, its false discovery rate), and the whole {c} interval of "
            f"the ratio (Moses', over launches) beyond {t}; the ratio shown is the "
            "Hodges-Lehmann estimate the test and the interval make (two cells the same "
            f"launches measured, from {PAIRED_FROM} of them and {PAIRED_SHARE:.0%} of each "
            "side's: Wilcoxon's signed-rank test on the launches' ratios, Tukey's interval; a "
            "budget's partial launches compared with "
            f"partial ones: van Elteren's test). 'indistinguishable' needs the whole {c} "
            f"interval within {t} either way (per pair, not corrected across {family}); both "
            f"need {MIN_LAUNCHES} launches a side. {looks_text()} Anything else is undecided.")


def looks_text() -> str:
    """Under which looks the rule's rate holds, in words, from the constants."""
    same = 1 - 2 * SAME_LOOK_TAIL
    return (f"A budget looks at the comparisons as launches come in and stops buying launches "
            f"for one only past a boundary (p < {LOOK_ALPHA:g} and its {1 - LOOK_ALPHA:.1%} "
            f"interval beyond {THRESHOLD:.0%}, or its {same:.1%} interval within it), at the "
            f"base launches and each doubling, {MAX_LOOKS} looks at most; what the looks may "
            f"spend comes off the report's level (q < {final_alpha(True):.3g} where a budget "
            f"looked), so that a ratio on the {THRESHOLD:.0%} line is called 'faster' at most "
            f"{(final_alpha(True) + MAX_LOOKS * LOOK_ALPHA) / 2:.1%} of the time; where a "
            f"budget looked, 'indistinguishable' needs the {same:.1%} interval within "
            f"{THRESHOLD:.0%} (its own {(1 - CONFIDENCE) / 2:.1%} a side, split over the looks "
            f"and the report).")


TIMING = {
    "loop": "loop (k calls back to back, the loop's time divided by k)",
    "barrier": "barrier (mpiarena's own barrier before every call, each call timed alone, each "
               "rank's mean per call; the slowest rank's mean is IMB's t_max)",
    "window": "window (every call released at a common start time on a clock synchronised across "
              "ranks: each rank's offset and drift to rank 0 fitted from ping-pongs, as in HCA; a "
              "call's time is its exit minus its window's start; calls that any rank reached "
              "late are dropped; each rank's mean over the kept calls; the slowest rank's mean)",
}
STATUS_TEXT: dict[str, str] = {CellStatus.NA: "n/a", CellStatus.INVALID: "INVALID",
                               CellStatus.FAILED: "failed", CellStatus.SKIPPED: "skipped"}


def ci_text(low: float, high: float) -> str:
    """A ratio's interval as verdict lines print it."""
    return f"{CONFIDENCE:.0%} CI {low:.2f}-{high:.2f}" if high < float("inf") else \
        f"no {CONFIDENCE:.0%} interval from so few launches"


def verdict_text(label: str, v: Verdict) -> str:
    """One verdict line, word for word the terminal's (without its colours)."""
    ci = ci_text(v.ci_low, v.ci_high)
    if v.outcome == Speed.FASTER:
        return f"{label}: {v.fast} ran {v.ratio:.2f}x faster than {v.slow} ({ci})"
    if v.outcome == Speed.INDISTINGUISHABLE:
        return f"{label}: {v.fast} and {v.slow} are indistinguishable (ratio {v.ratio:.2f}, {ci})"
    return (f"{label}: undecided, {v.fast} looks {v.ratio:.2f}x faster than {v.slow} ({ci}); "
            f"{undecided_why(v)}")


PRACTICAL_LAUNCHES = 1000  # more launches a variant than anyone would run


def undecided_why(v: Verdict) -> str:
    """Why a verdict is undecided, and what would decide it."""
    more = (f": about {v.needed} launches per variant would decide it (--launches {v.needed})"
            if v.needed and v.needed <= PRACTICAL_LAUNCHES else
            f": the ratio sits so close to {THRESHOLD:.0%} that over {PRACTICAL_LAUNCHES} "
            "launches per variant would be needed" if v.needed else "")
    match v.why:
        case Why.LAUNCHES:
            return (f"{min(v.launches_fast, v.launches_slow)} launches cannot decide anything "
                    f"(--launches {MIN_LAUNCHES} at least)")
        case Why.TEST:
            return (f"the launch test does not back it after {CORRECTION} "
                    f"(q={v.p_adjusted:.2g}){more}")
        case Why.THRESHOLD:
            return (f"the ratio sits on the {THRESHOLD:.0%} line: no number of launches would "
                    "decide it")
        case Why.INTERVAL | None:
            return f"the interval reaches within {THRESHOLD:.0%}{more}"
        case Why.STATE:
            return ("a side's launches fall in two states and it holds in one only: a rerun's "
                    "median may land on the other")
        case Why.MOVED:
            return ("a side's level here moved from this machine's earlier runs: this run's "
                    "state may not hold")
        case Why.SPREAD:
            return (f"the launches decide it, but not beyond how far a ratio moves between runs "
                    f"here (+-{math.expm1(v.comparison.allowance):.0%}){more}")
        case _:
            assert_never(v.why)


def method_lines(data: RunData) -> list[str]:
    """The method as every report states it: how observations are taken, how each benchmark's
    calls were timed (as stored with its cells), and what the window method dropped."""
    target = units.seconds(data.settings.target_time)
    text = METHOD.format(target=target, launches=data.settings.launches,
                         confidence=f"{CONFIDENCE:.0%}", rule=rule_text(),
                         holds=f"{INTERVAL_HOLDS_RERUN:.0%}", sure=RERUN_SURE_FROM)
    if suite := imported_suite(data.run.suite):
        text = IMPORTED_METHOD.format(suite=suite, launches=data.settings.launches) + \
            text[text.index("Cells show"):]
    return [text, *_timing_lines(data), *datatype_lines(data), *_late_lines(data)]


def datatype_lines(data: RunData) -> list[str]:
    """What the run's sums added up and its datatype benchmarks' blocks were made of, where it
    measured any: 'Reductions: MPI_INT sums (reduce, allreduce), ...'."""
    ran = {key.bench for key in data.cells}
    sums = [b for b in BENCHMARKS if b in ran and BENCHMARKS[b].sums]
    blocks = [b for b in BENCHMARKS if b in ran and BENCHMARKS[b].group == "datatypes"]
    out = []
    if sums:
        t = data.settings.sums
        if t is None:
            out.append(f"Reductions: sums of {data.settings.sums_name} ({', '.join(sums)}).")
        else:
            odd = [] if imported_suite(data.run.suite) else rounded_up(
                tuple(sorted({k.size for k in data.cells if k.bench in sums})), t)
            out.append(f"Reductions: {t.mpi} sums ({', '.join(sums)}), sizes in bytes, {t.size} "
                       "B an element" + (f"; {', '.join(map(format_size, odd))} rounded up to "
                                         "whole elements" if odd else "") + ".")
    if blocks:
        out.append(f"Datatype benchmarks: 8-byte blocks of {data.settings.blocks} "
                   f"({', '.join(blocks)}).")
    return out


def _timing_lines(data: RunData) -> list[str]:
    """'Timed by METHOD (what it means): BENCH, BENCH at N ranks (VARIANT), ...' per method
    used, as stored with the cells."""
    return [f"Timed by {TIMING.get(method) or timing_text(method) or method}: "
            f"{', '.join(names)}." for method, names in _timed(data).items()]


def _timed(data: RunData) -> dict[str, list[str]]:
    """Per timing method used, as stored with the cells, the benchmarks it timed; a benchmark
    timed in more than one way is named per rank count, with the variants where not all of
    them."""
    uses: dict[str, dict[tuple[str, int], set[str]]] = {}  # method -> (bench, np) -> variants
    everyone: dict[tuple[str, int], set[str]] = {}
    methods: dict[str, set[str]] = {}  # bench -> the methods of its cells
    for (bench, _, np_), cell in data.cells.items():
        if BENCHMARKS[bench].kind in (Kind.TIMER, Kind.P2P, Kind.COLL):
            for variant, group in cell.items():
                if not measured(group):  # n/a or failed: nothing was timed
                    continue
                uses.setdefault(group.timing, {}).setdefault((bench, np_), set()).add(variant)
                everyone.setdefault((bench, np_), set()).add(variant)
                methods.setdefault(bench, set()).add(group.timing)
    out: dict[str, list[str]] = {}
    for method in [*(m for m in TIMING if m in uses), *sorted(set(uses) - set(TIMING))]:
        names: list[str] = []
        for bench in (b for b in BENCHMARKS if b in methods):
            keys = sorted(k for k in uses[method] if k[0] == bench)
            if keys and len(methods[bench]) == 1:
                names.append(bench)
            for key in keys if len(methods[bench]) > 1 else []:
                who = uses[method][key]
                names.append(f"{bench} at {key[1]} ranks" + (
                    "" if who == everyone[key] else f" ({', '.join(sorted(who))})"))
        out[method] = names
    return out


def _late_lines(data: RunData) -> list[str]:
    """Per variant timed by the window method, the share of calls it dropped, where above 0."""
    out = []
    for variant, late in late_calls(data).items():
        key = late.key
        size = f" {format_size(key.size)}" if BENCHMARKS[key.bench].sized else ""
        out.append(f"{variant}: the window method dropped {late.mean:.1%} of its calls (a rank "
                   f"reached the call's window late), at most {late.worst:.0%} of an observation "
                   f"({key.bench}{size}, {key.np} ranks).")
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
    return [known.get(v, VariantRecord(run_id=data.run_id, variant=v, impl_id="", name="",
                                       env={}, args=[], binding="auto"))
            for v in data.variants]


def switch_text(variant: str, s: Switch) -> str:
    """One protocol switch, in words: how much the time jumps (fixed cost) or the slope
    changes (cost per byte)."""
    change = s.jump if s.kind == Jump.FIXED or s.before <= 0 else s.after / s.before
    return (f"{variant} switches protocol between {format_size(s.last_before)} and "
            f"{format_size(s.size)}: {s.kind} changes x{change:.1f}")


def derived_text(variant: str, d: Derived) -> str:
    """Latency, peak and n1/2 of one variant, in words."""
    text = f"{variant}: latency {units.seconds(d.latency)} at {format_size(d.latency_size)}"
    if d.peak_bandwidth:
        text += (f", peak {units.bandwidth(d.peak_bandwidth)} at "
                 f"{format_size(d.peak_size or 0)}")
    if d.n_half:
        text += f", half of it from {format_size(round(d.n_half))}"
    return text


def stretch_text(bench: str, s: Stretch) -> str:
    """'0 B-512 B: openmpi-4.1.4', with how sure where it is not decided."""
    spec = BENCHMARKS[bench]
    where = (spec.size_text(s.first) if s.first == s.last else
             f"{spec.size_text(s.first)}-{spec.size_text(s.last)}") if spec.sized else ""
    others = ", ".join(s.others[:2]) + (f" +{len(s.others) - 2}" if len(s.others) > 2 else "")
    sure = {Sureness.DECIDED: "", Sureness.LEVEL: f" (within {THRESHOLD:.0%} of {others})",
            Sureness.OPEN: f" (undecided vs {others})"}[s.state]
    return f"{where + ': ' if where else ''}{s.winner}{sure}"


def standing_text(s: Standing) -> str:
    """'1.20x (1.16-1.24)': a standing against its leader as the ranking prints it."""
    if (s.ci_low, s.ci_high) == (1.0, 1.0):
        return f"{s.geomean:.2f}x"
    return f"{s.geomean:.2f}x ({s.ci_low:.2f}-{s.ci_high:.2f})"


WIDTH = 100  # the columns each statement of the answer fits in
NAMED = 3  # libraries a statement names, at most


def _names(names: tuple[str, ...]) -> str:
    """'a, b, c', or 'a, b, c +2' past `NAMED`."""
    more = len(names) - NAMED
    return ", ".join(names[:NAMED]) + (f" +{more}" if more > 0 else "")


def _span(first: int, last: int) -> str:
    return format_size(first) if first == last else f"{format_size(first)}-{format_size(last)}"


def _where(p: SizeRange) -> str:
    """'point-to-point at 8 B-4 KiB', 'point-to-point and collectives at every size'."""
    kinds = " and ".join(KINDS[k] for k in p.kinds)
    if p.every:
        return f"{kinds} at every size" if p.first != p.last or len(p.kinds) > 1 else kinds
    return f"{kinds} at {_span(p.first, p.last)}"


def _lead_texts(lead: Lead) -> list[str]:
    """The lead in words, shortest last: 'ahead of mpich-4.0.2 by 1.31x or more (95% CI
    1.22-1.40)', without the interval, without the runner-up."""
    said = f"ahead of {lead.over} by {lead.ratio:.2f}x or more"
    ci = f" (95% CI {lead.ci_low:.2f}-{lead.ci_high:.2f})" if lead.ci_high < float("inf") else ""
    return [said + ci, said, f"{lead.ratio:.2f}x or more ahead of the next"]


def _said(p: SizeRange) -> list[str]:
    """What the verdicts say over the range's cells, in words, shortest last."""
    open_ = f"; {p.open} of {p.cells} cells undecided" if p.open else ""
    match p.leading:
        case Leading.ONE:
            leads = _lead_texts(p.lead) if p.lead else [""]
            return [p.names[0] + (f", {x}" if x else "") + open_ for x in leads]
        case Leading.LEVEL:
            return [f"no single fastest: {_names(p.names)} within {THRESHOLD:.0%}{open_}"]
        case Leading.SPLIT:
            return [f"it differs by benchmark: {_names(p.names)} (see below){open_}"]
        case Leading.OPEN:
            return [f"undecided in all {p.cells} cells" if p.cells > 1 else
                    "undecided in its one cell"]
        case _:
            assert_never(p.leading)


def _fit(tries: list[str]) -> str:
    """The first that fits `WIDTH` (else the last, the shortest)."""
    return next((t for t in tries if len(t) <= WIDTH), tries[-1])


def _by_size_text(b: BySize) -> str:
    """'Fastest for point-to-point by size: X at 0 B-64 B, 1 MiB; Y at 4 KiB; none at
    2 of 9 sizes', with fewer sizes named where that would not fit `WIDTH`."""
    head, rest = f"Fastest for {KINDS[b.kind]} by size: ", \
        f"none at {b.rest} of {b.sizes} sizes" if b.rest else ""
    tries = []
    for spans, named, tail in ((True, 2, True), (False, 2, True), (False, 1, True),
                               (False, 1, False)):
        parts = [f"{x.variant} at " + (", ".join(_span(*s) for s in x.spans) if spans else
                                       f"{x.count} of {b.sizes} sizes")
                 for x in b.fastest[:named]]
        more = len(b.fastest) - named
        parts += [f"{more} more {'library' if more == 1 else 'libraries'}" if more > 0 and
                  tail else "", rest if tail else ""]
        tries.append(head + "; ".join(x for x in parts if x) + ".")
    return _fit(tries)


def statement_text(s: Statement, whole: bool, alone: bool) -> str:
    """One statement of the answer as a line of at most `WIDTH` columns where it can be;
    `alone`: the answer's only one; `whole`: the run's variants are libraries (not a library's
    variants, as a tuning run has)."""
    if isinstance(s, BySize):
        return _by_size_text(s)
    kinds = " and ".join(KINDS[k] for k in s.kinds)
    heads = [f"Fastest {'MPI library' if whole else 'variant'} here, for {where}: "
             for where in dict.fromkeys([_where(s), kinds if s.every else _where(s)])] \
        if alone else [f"Fastest for {_where(s)}: "]
    return _fit([f"{head}{x}." for head in heads for x in _said(s)])


def answer_text(ans: Answer) -> list[str]:
    """The answer's statements as lines, at most four, one statement a line."""
    names = [s.variant for s in ans.ranked]
    whole = len({impl_of(v) for v in names}) == len(names) and \
        all(impl_of(v) == v for v in names)
    alone = len(ans.statements) == 1
    return [statement_text(s, whole, alone) for s in ans.statements]


def _scope_text(scope: Scope, cores: int) -> str:
    ranks = ", ".join(map(str, scope.nps))
    hosts = "1 host (this machine: messages stay in its memory)" \
        if scope.topology == LOCAL and scope.hosts == 1 else \
        f"{scope.hosts} hosts ({scope.topology})"
    polling = (f"; above {cores} ranks on {cores} cores, libraries that poll measure the "
               "scheduler" if scope.nps and max(scope.nps) > cores else "")
    return f"Holds for {ranks} ranks on {hosts}{polling}."


def times_text(m: Multiple) -> str:
    """'2.94x': the figure over the floor's, three digits, as printed beside both."""
    return f"{m.times:.3g}x"


def below_text(m: Multiple) -> str:
    """Why a figure reads below its floor ("": it does not)."""
    if not m.below:
        return ""
    if m.placement:
        return "below the floor: its ranks ran on other CPUs than the floor's"
    if m.wrong:
        return ("below the floor by more than its interval: the floor's own launches were "
                "slowed (other work on the machine)")
    return "below the floor within the launches' spread: the floor runs in launches of its own"


def multiple_text(m: Multiple, link: bool = False) -> str:
    """'1.74x floor', '1.04x link floor'; below it, '(below: ...)' beside it."""
    said = f"{m.times:.2f}x link floor" if link else f"{times_text(m)} floor"
    why = "ranks on other CPUs" if m.placement else "the floor's own launches ran slower"
    return said + (f" (below: {why})" if m.below else "")


def link_line(a: Analysis, link: LinkFloor, leader: str | None) -> list[str]:
    """The fastest library's largest pingpong against the emulated link as set."""
    spec = link.spec
    m = link_headline(a.data, link, [leader] if leader else mpi_variants(a.data) or
                      a.data.variants)
    if m is None:
        return []
    return [f"Against the link's floor ({spec.link} set: {units.bandwidth(spec.payload_limit / 8)} "
            f"of TCP payload in full {spec.mtu}-byte frames, less tbf's {spec.burst}-byte bucket; "
            f"no delay emulated): {a.label(m.key)}: {m.variant} {units.seconds(m.figure)}, "
            f"{multiple_text(m, link=True)} of {units.seconds(m.floor)}."]


def _floor_said(a: Analysis, floor: MachineFloor, key: Cell, among: list[str]) -> str:
    """One headline cell against the floor: the library the verdicts call fastest there, its
    figure, the multiple, the floor's figure; or that no library is the fastest there."""
    under = floor.figure(key)
    if under is None:
        return ""
    lead = cell_lead(a, key, among) if len(among) > 1 else None
    best = lead.best if lead is not None else (among[0] if len(among) == 1 else None)
    m = multiple(a.data, floor, key, best) if best else None
    if m is None:
        return f"{a.label(key)}: none the verdicts call fastest; floor {units.seconds(under)}"
    level = f" (within {THRESHOLD:.0%}: {_names(lead.level[1:])})" \
        if lead is not None and len(lead.level) > 1 else ""
    why = below_text(m)
    return (f"{a.label(key)}: {m.variant}{level} {units.seconds(m.figure)}, {times_text(m)} "
            f"the floor's {units.seconds(m.floor)}" + (f" ({why})" if why else ""))


def floor_lines(a: Analysis) -> list[str]:
    """The pingpong of the library the verdicts call fastest against the machine floor, at
    latency and at bandwidth, or why the run has no floor."""
    mpi = mpi_variants(a.data)
    if a.floor is None and a.link is not None:
        best = cell_lead(a, k, mpi) if len(mpi) > 1 and (k := _largest_pingpong(a)) else None
        return link_line(a, a.link, best.best if best is not None else None)
    if a.floor is None:
        topology = a.data.settings.topology
        if topology == LOCAL:
            return ["No machine floor: this run measured none."]
        kind = "an imported suite's figures" if a.data.run.kind == RunKind.IMPORTED else \
            f"a run on {topology} (the floor is measured on this machine only)"
        return [f"No machine floor: {kind}."]
    among = mpi if len(mpi) > 1 else mpi or a.data.variants
    if not among:
        return _floor_alone(a.floor)
    said = [x for key in headline_keys(a.floor) if (x := _floor_said(a, a.floor, key, among))]
    if not said:
        return []
    return ["Against the machine floor (its own launches): " + "; ".join(said) + "."]


def _largest_pingpong(a: Analysis) -> Cell | None:
    keys = sorted((k for k in a.data.cells if k.bench == "pingpong"), key=lambda k: k.size)
    return keys[-1] if keys else None


def _floor_alone(floor: MachineFloor) -> list[str]:
    """A run of the floor alone: its figures, per benchmark and size."""
    lines = ["Machine floor (two processes on the ranks' cores, sharing memory), alone in "
             "this run:"]
    for bench in BENCHMARKS:
        keys = sorted((k for k in floor.cells if k.bench == bench), key=lambda k: (k.np, k.size))
        said = [f"{BENCHMARKS[bench].size_text(k.size)} {units.seconds(f)}" for k in keys
                if (f := floor.figure(k)) is not None]
        if said:
            lines.append(f"  {bench}: " + ", ".join(said))
    return lines


def steadiness_line(a: Analysis) -> str:
    """The floor's between-launch spread beside the median library's ("": no floor)."""
    s = steadiness(a.data, a.floor) if a.floor is not None else None
    if s is None:
        return ""
    verdict = "steadier than the libraries' figures" if s.steadier else \
        "it moves more than the libraries' figures: other work or placement moved it, not a floor"
    return (f"Machine floor: between launches its figures move by a log-sd of {s.floor:.3f} "
            f"(median over its {s.cells} cells), the median library's {s.library:.3f}: "
            f"{verdict}.")


def decided_text(t: Decisions, spread: RunSpread | None) -> str:
    """The one 'Decided:' line of a run with two MPI libraries, and what its intervals allow
    for between runs."""
    return (f"Decided: {t.decided} of {t.compared} comparisons between MPI libraries "
            f"({t.faster} faster, {t.level} within {THRESHOLD:.0%}); "
            f"{t.compared - t.decided} undecided{spread_text(spread)}.")


def spread_text(spread: RunSpread | None) -> str:
    """Where the run-to-run spread a run's intervals carry comes from ("": none)."""
    if spread is None:
        return ""
    source = (f"learned from {spread.runs} earlier run{'s' if spread.runs > 1 else ''}"
              if spread.learned else "stated: no earlier runs here")
    return f"; intervals allow for reruns ({source})"


def answer_lines(a: Analysis) -> list[str]:
    """The answer first: at most four statements by the verdict rule (the fastest MPI library
    for point-to-point and for collectives, by size range) and how many comparisons were
    decided, then the fastest library's distance from the machine floor, where it holds, the
    MPI libraries ranked by geometric mean (a summary, not the answer) and what is not MPI
    beside them."""
    ans = answer(a)
    if ans is None:
        return [*figure_lines(a), *floor_lines(a)]
    width = max(len(s.variant) for s in ans.ranked)
    decided = [decided_text(ans.decisions, a.spread)] if ans.decisions.compared else []
    lines = [*answer_text(ans), *decided,
             *floor_lines(a), _scope_text(ans.scope, a.cores),
             f"Ranked by geometric mean over {ans.ranked[0].cells} cells, relative to "
             f"{ans.ranked[0].variant} ({CONFIDENCE:.0%} CI; not the verdicts):"]
    lines += [f"  {s.variant.ljust(width)}  {standing_text(s)}" for s in ans.ranked]
    if ans.unranked:
        lines.append(f"  left out: {', '.join(ans.unranked)} (measured under half of the "
                     "cells the others did)")
    beside = [f"{b.variant} {standing_text(b.standing)} over {b.standing.cells} cells"
              if b.standing else f"{b.variant} (no cell in common)" for b in ans.beside]
    if beside:
        lines.append("Not MPI, so beside the ranking: " + "; ".join(beside) + ".")
    return lines


# what the first screen lists figures of
FIGURE_KINDS = (Kind.P2P, Kind.COLL, Kind.STARTUP, Kind.TIMER)


def alone(a: Analysis) -> str | None:
    """The one variant that measured the run's timed cells, where only one did (a run of one
    library, an imported suite's output); None where two or more did."""
    timed = {v for key, cell in a.data.cells.items() if BENCHMARKS[key.bench].kind in
             FIGURE_KINDS for v, group in cell.items() if measured(group)}
    return next(iter(timed)) if len(timed) == 1 else None


def figure_lines(a: Analysis) -> list[str]:
    """A run of one variant answers with its figures: per benchmark and rank count, each size's
    median of launch medians with its interval, then the protocol switches its pingpong shows;
    nothing where two or more variants measured (the answer compares them instead)."""
    variant = alone(a)
    if variant is None:
        return []
    lines = [f"Figures of {variant} (median of launch medians, {CONFIDENCE:.0%} CI over "
             "launches where it has one):"]
    for (bench, np_), keys in a.tables.items():
        spec = BENCHMARKS[bench]
        if spec.kind not in FIGURE_KINDS:
            continue
        parts = []
        for key in keys:
            s = a.summaries[key].get(variant)
            if s is None:
                continue
            ci = f" ({units.seconds(s.ci_low)}-{units.seconds(s.ci_high)})" \
                if s.launches >= 2 and s.ci_high > s.ci_low else ""
            parts.append(f"{spec.size_text(key.size) + ' ' if spec.sized else ''}"
                         f"{units.seconds(s.median)}{ci}")
        if parts:
            lines.append(f"  {bench} ({np_} ranks{a.oversub(np_)}): " + ", ".join(parts))
    switches = a.switches.get(variant, [])
    lines.append("Protocol switches on its pingpong: " + "; ".join(
        switch_text(variant, s).removeprefix(f"{variant} switches protocol ")
        for s in switches) + "."
        if switches else "Protocol switches: none found" + (
            "" if any(k.bench == "pingpong" for k in a.data.cells) else
            " (a pingpong over sizes finds them)") + ".")
    return lines


def scoreboard_lines(a: Analysis) -> list[str]:
    """Who wins each benchmark over which sizes and how sure that is, and the strongest decided
    differences (between MPI libraries where the run has two); where `answer_lines` has
    nothing to rank, each variant's standing against the leader."""
    lines = []
    for (bench, np_), _keys in a.tables.items():
        if BENCHMARKS[bench].kind not in FIGURE_KINDS:
            continue
        parts = [stretch_text(bench, s) for s in stretches(a, bench, np_)]
        if parts:
            lines.append(f"  {bench} ({np_} ranks{a.oversub(np_)}): " + "; ".join(parts))
    if lines:
        lines.insert(0, "Who is fastest per benchmark (by the ratio the verdicts test, every "
                        "variant; a name alone: decided against every other variant):")
    mpi = set(mpi_variants(a.data))
    if len(mpi) < 2 and (counts := decided_counts(a)):  # else the answer's line says it
        lines.append(counts)
    ranked = standings(a) if len(mpi) < 2 else []
    if len(ranked) > 1:
        lines.append(f"Overall, time relative to {ranked[0].variant} over the {ranked[0].cells} "
                     "point-to-point and collective cells every variant below measured "
                     f"(geometric mean, {CONFIDENCE:.0%} CI over launches):")
        lines += [f"  {s.variant}: {standing_text(s)}" for s in ranked]
    if top := strongest(a, among=mpi if len(mpi) > 1 else None):
        lines.append("Largest decided differences" +
                     (" between MPI libraries:" if len(mpi) > 1 else ":"))
        lines += [f"  {verdict_text(a.label(k), v)}" for k, v in top]
    return lines


def decided_counts(a: Analysis) -> str:
    """How many comparisons the run decided, in one line, where it has no two MPI libraries
    (with two, the answer's `decided_text` is the one line)."""
    outcomes = [v.outcome for vs in a.judged.values() for v in vs]
    if not outcomes:
        return ""
    faster, same = outcomes.count(Speed.FASTER), outcomes.count(Speed.INDISTINGUISHABLE)
    return (f"Decided: {faster + same} of {len(outcomes)} comparisons ({faster} faster, {same} "
            f"within {THRESHOLD:.0%}); {len(outcomes) - faster - same} undecided.")


def cell_text(a: Analysis, key: Cell, variant: str) -> str:
    """Median and (point-to-point) bandwidth, or why there is none: the terminal's cell."""
    group = a.data.cells[key].get(variant)
    if group is None:
        return "n/a"
    if group.status != CellStatus.OK or not group.values:
        return STATUS_TEXT.get(group.status, "-")
    text = units.seconds(figure(group))
    bw = bandwidth(key.bench, key.size, figure(group), a.window)
    if bw is not None:
        text += f"  {units.bandwidth(bw)}"
    if a.floor is not None and (m := multiple(a.data, a.floor, key, variant)) is not None:
        text += f"  {multiple_text(m)}"
    elif a.link is not None and (m := link_multiple(a.data, a.link, key, variant)) is not None:
        text += f"  {multiple_text(m, link=True)}"
    return text


def floor_text(a: Analysis, key: Cell) -> str:
    """The floor's figure in a cell: the machine floor's, or an emulated link's as set ("":
    none there)."""
    value = a.floor.figure(key) if a.floor is not None else \
        a.link.figure(key) if a.link is not None else None
    return units.seconds(value) if value is not None else ""


def floor_heading(a: Analysis) -> str:
    """The floor column's heading."""
    return "machine floor" if a.floor is not None or a.link is None else "link floor"
