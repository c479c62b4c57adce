"""`mpiarena simulate`: the core under SimGrid's SMPI, at rank counts this machine cannot hold,
per library selection logic and forced algorithm; calibrated from and validated against runs
measured here (docs/simulate.md)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from ..analysis.simulated import fit_factors, nominal_link, pingpong_medians, validate
from ..base.errors import ArenaError
from ..base.status import RunStatus
from ..cluster import smpi
from ..cluster.smpi import Factors, Link, SimGrid, parse_link
from ..model.benchmarks import BENCHMARKS
from ..platform.build import SimulatedBuild, build_simulated
from ..store.results import RunData, load
from . import stores, suite_options, sweeping
from .consoles import console, err
from .durations import DURATION, DURATION_HELP
from .exit_status import Exit
from .stores import db_option

DEFAULT_BENCH = "pingpong,allreduce,bcast"
DEFAULT_NP = (8, 64)
DEFAULT_SIZES = "8,64K,1M"
DEFAULT_LINK = "1gbit,lat=50us"
RANK_BYTES = 2 << 20  # what a simulated rank costs beside its buffers (2.1 GiB at 1024 ranks)
PER_RANK_BUFFERS = {"alltoall", "allgather", "gather", "scatter"}  # size bytes per peer


def _say(lines: list[str]) -> None:
    for line in lines:
        console.print(line, soft_wrap=True, markup=False, highlight=False)


def _forced(specs: tuple[str, ...], collectives: tuple[str, ...]) -> list[tuple[tuple[str, str],
                                                                               ...]]:
    """--algorithm allreduce=rdb,bcast=binomial_tree (repeatable): each value one model."""
    out = []
    for spec in specs:
        pairs = []
        for item in filter(None, (p.strip() for p in spec.split(","))):
            coll, eq, name = item.partition("=")
            if not eq or not name:
                raise ArenaError(f"--algorithm '{spec}': write COLLECTIVE=ALGORITHM, e.g. "
                                 "--algorithm allreduce=rdb")
            if coll not in collectives:
                raise ArenaError(f"--algorithm '{spec}': SMPI forces the algorithms of "
                                 f"{', '.join(collectives)}, not '{coll}'")
            pairs.append((coll, name))
        out.append(tuple(pairs))
    return out


def _available() -> int:
    """Bytes of memory available now (MemAvailable), 0 if unknown."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _check_memory(benches: tuple[str, ...], sizes: tuple[int, ...], nps: tuple[int, ...]
                  ) -> None:
    """Refuse a rank count whose simulation would not fit in the memory available."""
    available = _available()
    for np_ in nps:
        biggest = max((s * (np_ if b in PER_RANK_BUFFERS else 1) for b in benches for s in sizes),
                      default=0)
        need = np_ * (RANK_BYTES + 3 * biggest)
        if available and need > available:
            raise ArenaError(f"{np_} simulated ranks with {max(sizes)} B messages need about "
                             f"{need / 2**30:.1f} GiB of memory here ({available / 2**30:.1f} "
                             "GiB available): use fewer ranks or smaller sizes")


def _calibration_source(db: str, spec: str) -> tuple[RunData, str]:
    """RUN or RUN:VARIANT of --calibrate-from: the run and the variant whose pingpong fits."""
    ref, _, variant = spec.partition(":")
    data = _run(db, ref)
    with_pp = [v for v in data.variants
               if any(k.bench == "pingpong" and v in g for k, g in data.cells.items())]
    if variant:
        if variant not in with_pp:
            raise ArenaError(f"run {data.run_id} has no pingpong of '{variant}'; its variants "
                             f"with one: {', '.join(with_pp) or 'none'}")
        return data, variant
    if len(with_pp) != 1:
        raise ArenaError(f"run {data.run_id} holds pingpong of {len(with_pp)} variants "
                         f"({', '.join(with_pp) or 'none'}): name one, e.g. --calibrate-from "
                         f"{data.run_id}:{with_pp[0] if with_pp else 'VARIANT'}")
    return data, with_pp[0]


def _calibrate(db: str, spec: str, link: str | None, sim: SimGrid, build: SimulatedBuild,
               timeout: float) -> tuple[Link, Factors, str]:
    """--calibrate-from: the link the factors correct, the factors fitted to the run's pingpong
    (printed), and which run and variant they come from."""
    # here, not at the top: ~12 ms more start-up for every command
    from ..report.simulated import calibration
    from ..runner.simulate import bare_pingpong

    data, variant = _calibration_source(db, spec)
    measured = pingpong_medians(data, variant)
    topology = data.settings.topology
    the_link = parse_link(link) if link else nominal_link(
        measured, parse_link(topology).bits if topology.startswith("emulated:") else None)
    bare = bare_pingpong(sim, build, the_link, sorted(measured), timeout)
    factors = fit_factors(measured, bare, the_link)
    source = f"{data.run_id}:{variant}"
    _say(calibration(source, factors, measured))
    return the_link, factors, source


def _timings(real: RunData) -> dict[tuple[str, int], str]:
    """How the measured run timed each benchmark at each rank count, for a like comparison."""
    return {(k.bench, k.np): g.timing for k, groups in real.cells.items()
            for g in groups.values() if g.values}


def _run(db: str, ref: str) -> RunData:
    if not stores.exists(db):
        raise ArenaError(f"no store at {db}; give --db FILE or measure first with 'mpiarena run'")
    store = stores.store(db)
    return load(store, store.resolve(ref))


@click.command("simulate")
@click.option("--bench", metavar="BENCHMARKS", help=f"benchmarks (default {DEFAULT_BENCH}; "
              "point-to-point and collectives only)")
@click.option("--np", "nps_given", type=suite_options.RANK_COUNTS, default=None,
              help="simulated rank counts (default 8,64; e.g. 8,64,256,1024)")
@click.option("--sizes", metavar="SIZES", help=f"message sizes (default {DEFAULT_SIZES})")
@click.option("--selector", default="mpich,ompi", show_default=True,
              help="whose collective selection logic SMPI copies: mpich, ompi, impi, mvapich2, "
              "default (SMPI's own)")
@click.option("--algorithm", "algorithms", multiple=True,
              help="force algorithms, e.g. allreduce=rdb,bcast=binomial_tree: one more model, "
              "the first selector's logic with these forced (repeatable)")
@click.option("--link", default=None, help=f"the link between hosts (default {DEFAULT_LINK}; "
              "calibrating: the run's emulated rate or its peak, its smallest latency): "
              "RATE,lat=LATENCY or a profile (gige, fast-ethernet, fddi)")
@click.option("--ranks-per-node", type=click.IntRange(min=1), default=1, show_default=True,
              help="ranks sharing one simulated host")
@click.option("--calibrate-from", help="RUN[:VARIANT]: fit SMPI's latency and bandwidth factors "
              "to that run's measured pingpong")
@click.option("--validate-against", help="RUN: print the error of each simulated cell that run "
              "measured (its rank counts, sizes and benchmarks unless given)")
@click.option("--observations", type=click.IntRange(min=1), default=3, show_default=True,
              help="simulated calls per cell (they differ only where an algorithm depends on "
              "the calls before)")
@click.option("--sync", type=click.Choice(["barrier", "window", "loop"]),
              help="how a collective call is timed (default: barrier; validating: as the "
              "measured run timed each cell)")
@click.option("--timeout", default="300s", show_default=True, type=DURATION,
              help=f"wall time one simulated cell may take ({DURATION_HELP}); 300s: simulating "
              "hundreds of ranks takes minutes where a measured cell takes seconds")
@click.option("--simulate-computation", is_flag=True,
              help="simulate computation too (default: communication only)")
@db_option
def simulate_cmd(bench: str | None, nps_given: tuple[int, ...] | None, sizes: str | None,
                 selector: str, algorithms: tuple[str, ...], link: str | None, ranks_per_node: int,
                 calibrate_from: str | None, validate_against: str | None, observations: int,
                 sync: str | None, timeout: float, simulate_computation: bool, db: str) -> None:
    """Simulate the core's cells on SimGrid SMPI: a cluster of hosts at any rank count, with a
    library's collective selection logic (not the library itself), deterministic."""
    # here, not at the top: ~30 ms more start-up for every command
    from ..report import simulated as words
    from ..runner.session import progress_bar
    from ..runner.simulate import Model, Request, refusal, simulate

    real = _run(db, validate_against) if validate_against else None
    benches = suite_options.benchmarks(bench) or (
        tuple(b for b in real.benches() if refusal(b) is None) if real and bench is None
        else tuple(DEFAULT_BENCH.split(",")))
    for b in benches:
        if (why := refusal(b)) is not None:
            raise ArenaError(f"cannot simulate '{b}': {why}; simulate pingpong, bcast, "
                             "allreduce or another collective")
    chosen_sizes = suite_options.sizes(sizes, False) or (
        real.settings.sizes if real and real.settings.sizes else
        suite_options.sizes(DEFAULT_SIZES, False) or ())
    nps = nps_given or (real.settings.nps if real and real.settings.nps
                                   else DEFAULT_NP)
    selectors = [s.strip() for s in selector.split(",") if s.strip()]
    for s in selectors:
        if s not in smpi.SELECTORS:
            raise ArenaError(f"unknown --selector '{s}': choose from "
                             f"{', '.join(smpi.SELECTORS)}")
    if not selectors:
        raise ArenaError("--selector names none: give e.g. --selector mpich,ompi")
    models = [Model(s) for s in selectors]
    models += [Model(selectors[0], f) for f in _forced(algorithms, smpi.COLLECTIVES)]
    for np_ in nps:
        smpi.platform_for(np_, smpi.Link(1e9, 1e-6), ranks_per_node)  # the rank count's check
    _check_memory(benches, chosen_sizes, nps)
    sim = smpi.find()
    sweeping.sweep()
    build = build_simulated(sim.smpicc, sim.version)

    the_link, factors, calibrated = smpi.parse_link(link or DEFAULT_LINK), smpi.Factors(), ""
    if calibrate_from:
        the_link, factors, calibrated = _calibrate(db, calibrate_from, link, sim, build, timeout)
    request = Request(benches, chosen_sizes, nps, tuple(models), the_link, factors,
                      ranks_per_node, observations, sync or "barrier", timeout,
                      simulate_computation, calibrated,
                      _timings(real) if real is not None and sync is None else {})
    store = stores.store(db)
    steps = len(nps) * len(models) * sum(
        len(chosen_sizes) if BENCHMARKS[b].sized else 1 for b in benches)
    with progress_bar(err) as progress:
        task = progress.add_task("simulating", total=steps)
        run_id, status = simulate(sim, build, request, store,
                                  shlex.join(["mpiarena", *sys.argv[1:]]),
                                  lambda what: progress.update(task, advance=1,
                                                               description=what))
    simulated = load(store, run_id)
    _say(words.render(simulated))
    stores.say_stored(db, [run_id])
    if real is not None:
        _say(words.validation(validate(simulated, real), real.run_id))
    if status == RunStatus.INCOMPLETE:
        err.print(f"interrupted: run {run_id} kept what was simulated (marked incomplete)")
        sys.exit(Exit.INTERRUPTED)
