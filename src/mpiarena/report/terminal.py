"""The terminal summary: a table per benchmark, then verdict lines in hyperfine's manner."""

from __future__ import annotations

import numpy as np
from rich.console import Console
from rich.table import Table

from ..benchmarks import BENCHMARKS
from ..results import Group, Key, RunData
from ..sizes import format_size
from ..stats import Verdict, ci_halfwidth, verdicts
from . import units

METHOD = ("Each observation is a timed loop of k iterations divided by k (k chosen so that a loop "
          "lasts at least {target}), after a warm-up, preceded by mpiarena's own dissemination "
          "barrier; point-to-point: ranks 0 and 1 (pingpong: half the round trip); collectives and "
          "start-up: the slowest rank. Cells show the median; verdicts need a Mann-Whitney test "
          "(Holm-corrected across the report) and a difference of at least 5%.")


def _oversub(np_: int, cores: int) -> str:
    return f" \\[oversubscribed: {np_} ranks on {cores} cores]" if np_ > cores else ""


def _cell_text(bench: str, size: int, group: Group | None, window: int) -> str:
    if group is None:
        return "n/a"
    if group.status != "ok" or not group.values:
        return {"na": "n/a", "invalid": "INVALID", "failed": "failed",
                "skipped": "skipped"}.get(group.status, "-")
    median = float(np.median(group.array))
    text = units.seconds(median)
    bw = BENCHMARKS[bench].bandwidth(size, median / BENCHMARKS[bench].scale, window)
    if bw is not None and size > 0:
        text += f"  {units.bandwidth(bw)}"
    return text


def _comparable(cell: dict[str, Group]) -> dict[str, np.ndarray]:
    return {v: g.array for v, g in cell.items() if g.status == "ok" and g.values}


def _verdict_line(label: str, v: Verdict) -> str:
    ci = f"95% CI {v.ci_low:.2f}-{v.ci_high:.2f}"
    if v.outcome == "faster":
        return (f"{label}: [bold]{v.fast}[/] ran [bold green]{v.ratio:.2f}x[/] faster than "
                f"{v.slow} ({ci})")
    if v.outcome == "indistinguishable":
        return (f"{label}: {v.fast} and {v.slow} are [yellow]indistinguishable[/] "
                f"(ratio {v.ratio:.2f}, {ci})")
    return (f"{label}: {v.fast} looks {v.ratio:.2f}x faster than {v.slow} ({ci}) but "
            f"[yellow]{v.n_fast} and {v.n_slow} observations cannot back it[/] "
            f"(p={v.p_adjusted:.2g} after Holm)")


def render(data: RunData, console: Console, all_verdicts: bool = False) -> None:
    machine = data.machine
    cores = int(machine.get("cores", 1))
    window = int(data.settings.get("window", 64))
    run = data.run
    console.print(f"[bold]Run {data.run_id}[/] ({data.status}) suite [bold]{run['suite']}[/], "
                  f"{run['started']}, seed {run['seed']}")
    console.print(f"Machine: {machine.get('hostname')}: {machine.get('cpu_model')}, {cores} cores, "
                  f"{int(machine.get('memory_bytes', 0)) / 2**30:.1f} GiB, kernel "
                  f"{machine.get('kernel')}, governor {machine.get('governor')}")
    for impl in data.implementations:
        first = impl["version_string"].splitlines()[0] if impl["version_string"] else ""
        console.print(f"  {impl['impl_id']}: {first} [dim]({impl['origin']}, {impl['wrapper']})[/]")
    target = units.seconds(data.settings.get("target_time", 0))
    console.print(f"[dim]{METHOD.format(target=target)}[/]")

    keys_by_table: dict[tuple[str, int], list[Key]] = {}
    for key in sorted(data.cells, key=lambda k: (list(BENCHMARKS).index(k[0]), k[2], k[1])):
        keys_by_table.setdefault((key[0], key[2]), []).append(key)
    comparisons = [(k, _comparable(data.cells[k])) for t in keys_by_table.values() for k in t]
    comparisons = [(k, c) for k, c in comparisons if len(c) > 1]
    judged = dict(zip([k for k, _ in comparisons], verdicts([c for _, c in comparisons]),
                      strict=True))

    for (bench, np_), keys in keys_by_table.items():
        spec = BENCHMARKS[bench]
        table = Table(title=f"{bench}: {spec.doc} ({np_} ranks){_oversub(np_, cores)}",
                      title_justify="left", title_style="bold")
        table.add_column("size" if spec.sized else "", justify="right")
        for variant in data.variants:
            table.add_column(variant, justify="right")
        for key in keys:
            cell = data.cells[key]
            ok = _comparable(cell)
            best = min(ok, key=lambda v: float(np.median(ok[v]))) if len(ok) > 1 else None
            row = [format_size(key[1]) if spec.sized else ""]
            for variant in data.variants:
                text = _cell_text(bench, key[1], cell.get(variant), window)
                row.append(f"[bold green]{text} *[/]" if variant == best else text)
            table.add_row(*row)
        console.print(table)
        shown = keys if all_verdicts else sorted({keys[0], keys[-1]}, key=keys.index)
        for key in shown:
            label = f"{bench} {format_size(key[1])}" if spec.sized else bench
            label += _oversub(np_, cores)
            for v in judged.get(key, []):
                console.print("  " + _verdict_line(label, v))

    _against_raw_tcp(data, console)
    if precision := data.settings.get("precision"):
        _precision_summary(data, float(precision), console)

    problems = [(v, k, g) for k, cell in data.cells.items() for v, g in cell.items()
                if g.status in ("failed", "invalid")]
    reported: set[tuple[str, str]] = set()
    for variant, key, group in problems:
        if (variant, group.reason) in reported:
            continue
        reported.add((variant, group.reason))
        console.print(f"[red]{variant}[/] {group.status} at {key[0]} {format_size(key[1])}, "
                      f"{key[2]} ranks: {group.reason}")


def _precision_summary(data: RunData, precision: float, console: Console) -> None:
    """How many observations each cell needed for the precision asked, and which never got it."""
    console.print(f"[bold]Adaptive sampling[/] to +-{precision:.1%} of the median (95% CI), at "
                  f"most {data.settings.get('max_time')} s per cell:")
    for variant in data.variants:
        groups = [(k, c[variant]) for k, c in data.cells.items()
                  if variant in c and c[variant].status == "ok" and c[variant].values]
        if not groups:
            continue
        missed = [(k, g) for k, g in groups if ci_halfwidth(g.array) > precision]
        counts = sorted(len(g.values) for _, g in groups)
        console.print(f"  {variant}: {len(groups) - len(missed)} of {len(groups)} cells reached "
                      f"it (observations {counts[0]}-{counts[-1]})")
        for key, group in missed:
            console.print(f"    [yellow]never[/]: {key[0]} {format_size(key[1])} at {key[2]} "
                          f"ranks (n={len(group.values)}, +-{ci_halfwidth(group.array):.1%})")


def _against_raw_tcp(data: RunData, console: Console) -> None:
    """Each library's pingpong bandwidth as a share of raw TCP's, at the largest common size."""
    sizes = sorted(k[1] for k, c in data.cells.items()
                   if k[0] == "pingpong" and "tcp" in c and c["tcp"].status == "ok")
    if not sizes:
        return
    cell = data.cells["pingpong", sizes[-1], 2]
    ceiling = float(np.median(cell["tcp"].array))
    for variant, group in cell.items():
        if variant != "tcp" and group.status == "ok" and group.values:
            share = ceiling / float(np.median(group.array))
            console.print(f"{variant} reaches {share:.0%} of raw TCP's pingpong bandwidth at "
                          f"{format_size(sizes[-1])}")
