"""Rerun a seed study: one run per experiment, each on the network closest to the study's.

The study's rank counts are scaled down to what this machine can hold: one rank per core by
default, since a polling library with more ranks than cores waits for the scheduler (measured
here: MPICH's bcast-ack at 3 ranks on 2 cores took 8 ms, at 2 ranks 4 us). Every such change
becomes a note in the report. Each run records its study and experiment in its settings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..analysis.profiles import totals
from ..base.errors import ArenaError
from ..base.machine import cores
from ..base.records import RunKind
from ..base.status import RunStatus
from ..base.users import RankUser
from ..cluster.topology import Where, opened
from ..impls import Implementation, family_of
from ..model.profiled import Profiled, ProfileRun
from ..platform.build import KERNELS, NothingBuilt
from ..platform.plan import variants_for
from ..studies import Experiment, Study
from ..suites import OVERSUBSCRIBED, Suite, capped, from_dict, variant_spec
from .execute import Settings
from .profile import profile
from .session import Recorded, RunContext, SuiteAsk, run_suite


@dataclass(frozen=True)
class ReproductionStep:
    """One experiment as it will run here: a suite, or a profiled program at np ranks."""

    experiment: Experiment
    suite: Suite | None  # None: a profiled program
    where: Where
    np: int
    args: tuple[str, ...] = ()  # the profiled program's arguments
    notes: tuple[str, ...] = ()
    skip: str = ""  # why it does not run here


@dataclass
class Reproduction:
    study: Study
    quick: bool
    runs: dict[str, int] = field(default_factory=dict)  # experiment -> run id
    profiles: dict[str, ProfileRun] = field(default_factory=dict)  # experiment -> its profile
    skipped: dict[str, str] = field(default_factory=dict)  # experiment -> why
    notes: list[str] = field(default_factory=list)
    interrupted: bool = False


def _where_for(exp: Experiment, base: Where, default: str, nodes: int) -> Where:
    """The study's emulated network (or the one asked for) with as many nodes as ranks, at the
    experiment's MTU; a kept cluster, hosts file or allocation as it is."""
    spec = base.cluster or exp.cluster or default
    if base.hosts or base.slurm or not spec.startswith("emulated:"):
        return base
    spec = spec if "nodes=" in spec else f"{spec},nodes={max(nodes, 2)}"
    return Where(f"{spec},mtu={exp.mtu}" if exp.mtu else spec)


def _spread(suite: dict[str, Any], launches: int) -> dict[str, Any]:
    """A study's observations per cell spread over `launches` launches (the launch is the unit
    of the statistics), unless the study names its launches itself."""
    if "launches" in suite:
        return suite
    per_launch = max(2, math.ceil(int(suite.get("observations", 5)) / launches))
    return {**suite, "launches": launches, "observations": per_launch}


def steps(study: Study, quick: bool, where: Where, cap: int) -> list[ReproductionStep]:
    """What runs for each experiment: its suite (short form with quick), at most `cap` ranks,
    and where."""
    out = []
    for exp in study.experiments.values():
        data = _spread({**exp.suite, **(exp.quick if quick else {})}, 2 if quick else 4)
        wanted = [int(n) for n in data.get("np", [2])]
        nps = capped(wanted, cap)
        suite = None if exp.program else from_dict(
            f"{study.id}/{exp.name}", {**data, "np": nps}, f"{study.id}.toml, experiment "
            f"{exp.name}")
        args = tuple(str(a) for a in data.get("args", []))
        notes = []
        if max(nps) < exp.study_np:
            why = []
            if exp.study_np > cap:
                why.append(f"--max-ranks is {cap}: this machine has {cores()} cores, and "
                           + OVERSUBSCRIBED)
            if quick and max(nps) < min(max(exp.suite.get("np", [2])), cap):
                why.append("the short mode (--quick) runs fewer")
            notes.append(f"{exp.name}: the study ran up to {exp.study_np} ranks, one per "
                         f"machine; here {', '.join(map(str, nps))} ({'; '.join(why)})")
        here = where.cluster == "local"
        if exp.program:
            notes.append(f"{exp.name}: profiled on this machine (the profiler launches locally)")
            out.append(ReproductionStep(exp, None, Where(), max(nps), args, tuple(notes)))
        elif here or exp.local:
            skip = ("it is about the network, and --cluster local has none"
                    if exp.needs_network and here else "")
            if exp.local and not here:
                notes.append(f"{exp.name}: runs on this machine: {exp.local}")
            out.append(ReproductionStep(exp, suite, Where(), max(nps), notes=tuple(notes),
                                        skip=skip))
        else:
            at = _where_for(exp, where, study.cluster, max(nps))
            if exp.cluster and where != Where():
                notes.append(f"{exp.name}: the study's network for it is {exp.cluster}; it "
                             f"ran on {where} as asked")
            if exp.mtu and not (at.cluster or "").startswith("emulated:"):
                notes.append(f"{exp.name}: {at} has its own MTU, not {exp.mtu}")
            out.append(ReproductionStep(exp, suite, at, max(nps), notes=tuple(notes)))
    return out


@dataclass(frozen=True)
class ReproductionAsk:
    """A study to reproduce: quick or whole, where, at most how many ranks, each cell's
    timeout."""

    study: Study
    quick: bool
    where: Where
    cap: int  # the most ranks an experiment runs at
    timeout: float = 60.0


def run(asked: ReproductionAsk, impls: list[Implementation],
        context: RunContext) -> Reproduction:
    """Run every experiment of the study; Ctrl-C stops after keeping what was measured."""
    study, quick, say, timeout = asked.study, asked.quick, context.note, asked.timeout
    rank_user = context.rank_user
    done = Reproduction(study, quick)
    for step in steps(study, quick, asked.where, asked.cap):
        exp = step.experiment
        done.notes += step.notes
        if step.skip:
            done.skipped[exp.name] = step.skip
            continue
        chosen = [i for i in impls if family_of(i).lineage in exp.families]
        if not chosen:
            done.skipped[exp.name] = (f"no implementation of {', '.join(exp.families)} was "
                                      "found; see 'mpiarena doctor'")
            continue
        say(f"{study.id} {exp.name}: {exp.what} [{step.where}]")
        if step.suite is None:
            try:
                done.profiles[exp.name] = _profile(step, chosen, rank_user, timeout)
            except ArenaError as e:
                done.skipped[exp.name] = str(e)
            continue
        recorded = Recorded(RunKind.REPRODUCED, {"study": study.id, "experiment": exp.name,
                                                 "quick": quick})
        try:
            with opened(step.where) as topology:
                outcome = run_suite(SuiteAsk(step.suite, chosen,
                                             Settings(timeout=timeout, topology=topology.label),
                                             explicit=False, recorded=recorded),
                                    context, topology)
        except NothingBuilt as e:  # none of its implementations builds: the others may
            done.skipped[exp.name] = str(e)
            continue
        done.runs[exp.name] = outcome.run_id
        if outcome.status == RunStatus.INCOMPLETE:
            done.interrupted = True
            break
    return done


def _profile(step: ReproductionStep, impls: list[Implementation], user: RankUser | None,
             timeout: float) -> ProfileRun:
    """The experiment's program profiled with each MPI implementation and variant."""
    exp = step.experiment
    mpi = [i for i in impls if family_of(i).pmpi]
    specs = tuple(variant_spec(v, f"experiment {exp.name}") for v in exp.suite["variant"])
    variants = variants_for(specs, mpi)
    found = profile(variants, step.np, list(step.args), user, KERNELS / exp.program,
                    timeout * 4)  # a whole program run, not one cell
    return ProfileRun([Profiled(v.impl.id, v.impl.family) for v in variants],
                      list(found), {v: {name: row.seconds for name, row in totals(prof).items()}
                                    for v, prof in found.items()})

