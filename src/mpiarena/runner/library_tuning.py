"""`mpiarena tune`: every collective algorithm of each library as a variant of one run, the
selection that follows, each library's own tuning file, and the A/B check of such a file.

The families know the algorithms, how to force one and how to write their file
(impls/*.py); the decisions are tuning.py's; this module plans, runs and writes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..analysis.fingerprint import Fingerprint, fingerprints
from ..analysis.library_tuning import (
    Choice,
    Gain,
    Tuned,
    TunedRange,
    choices,
    gains,
    own_losses,
    ranges,
)
from ..base.errors import ArenaError
from ..base.records import RunKind
from ..base.status import RunStatus
from ..base.users import RankUser
from ..cluster.topology import Where, opened
from ..impls import Implementation, family_of
from ..impls.base import Algorithm, Rule, TuningFile
from ..model.benchmarks import BENCHMARKS
from ..platform.plan import CellOptions
from ..store.results import RunData, load
from ..suites import Suite, VariantSpec, check
from .execute import Settings
from .session import Recorded, RunContext, SuiteAsk, run_suite

MANIFEST = "tuning.json"
TUNABLE = ("allreduce", "bcast", "reduce", "allgather", "alltoall")


@dataclass(frozen=True)
class Measure:
    """What to measure and where: the run's shape, shared by tune and --verify."""

    colls: tuple[str, ...]
    nps: tuple[int, ...]
    sizes: tuple[int, ...]
    launches: int
    observations: int
    where: Where
    timeout: float


@dataclass(frozen=True)
class Manifest:
    """What a tune wrote beside its files: the run's shape, and each implementation's file."""

    colls: tuple[str, ...]
    nps: tuple[int, ...]
    sizes: tuple[int, ...]
    files: dict[str, TuningFile]


@dataclass
class Tuning:
    run_id: int
    data: RunData
    picked: list[Choice]
    ranges: list[TunedRange]
    files: dict[str, TuningFile]
    untuned: list[str] = field(default_factory=list)  # impl/coll pairs with no algorithm
    lost: list[str] = field(default_factory=list)  # algorithms that crashed, hung, were wrong
    prints: list[Fingerprint] = field(default_factory=list)  # what each default behaves like


def check_colls(colls: tuple[str, ...]) -> None:
    bad = [c for c in colls if c not in TUNABLE]
    if bad:
        raise ArenaError(f"--bench {','.join(bad)}: mpiarena tunes {', '.join(TUNABLE)}; e.g. "
                         "--bench allreduce,bcast")


def _suite(name: str, m: Measure, variants: tuple[VariantSpec, ...]) -> Suite:
    return check(Suite(name, f"collective algorithms: {', '.join(m.colls)}", m.colls, m.sizes,
                       m.nps, m.observations, m.launches, variants=variants), "tune")


def _run(suite: Suite, impls: list[Implementation], m: Measure, context: RunContext,
         recorded: Mapping[str, object]) -> RunData:
    with opened(m.where) as topology:
        outcome = run_suite(SuiteAsk(suite, impls, Settings(timeout=m.timeout,
                                                            topology=topology.label),
                                     CellOptions(validate=True),
                                     recorded=Recorded(RunKind.TUNE, recorded)),
                            context, topology)
    if outcome.status == RunStatus.INCOMPLETE:
        raise KeyboardInterrupt
    return load(context.store, outcome.run_id)


def algorithms(impls: list[Implementation], colls: tuple[str, ...],
               only: set[str] | None) -> tuple[dict[str, tuple[Tuned, Algorithm]], list[str]]:
    """Variant id -> what it forces, for every algorithm of every implementation (only those
    named, when `only` is given); and the implementation/collective pairs with none."""
    out: dict[str, tuple[Tuned, Algorithm]] = {}
    none = []
    for impl in impls:
        for coll in colls:
            algs = [a for a in family_of(impl).algorithms(impl, coll)
                    if only is None or a.name in only]
            if not algs:
                none.append(f"{impl.id} {coll}")
            for a in algs:
                out[f"{impl.id}:{coll}={a.name}"] = (Tuned(impl.id, coll, a.name), a)
    return out, none


def tune(impls: list[Implementation], m: Measure, only: set[str] | None, directory: Path,
         context: RunContext) -> Tuning:
    """Measure every algorithm beside each default, choose, and write each library's file."""
    directory.mkdir(parents=True, exist_ok=True)
    reachable(directory, context.rank_user)
    found, untuned = algorithms(impls, m.colls, only)
    if not found:
        raise ArenaError(f"no algorithm to measure: {'; '.join(untuned)} offer none"
                         + (" of those named by --algorithms" if only else ""))
    specs = tuple(VariantSpec(t.impl, f"{t.coll}={t.algorithm}", a.env, benchmarks=(t.coll,))
                  for t, a in found.values())
    recorded = {"tuning": {v: {"impl": t.impl, "coll": t.coll, "algorithm": t.algorithm}
                           for v, (t, _) in found.items()}}
    data = _run(_suite("tune", m, specs), [i for i in impls if any(
        t.impl == i.id for t, _ in found.values())], m, context, recorded)
    tuned = {v: t for v, (t, _) in found.items()}
    picked = choices(data, tuned)
    chosen = ranges(picked)
    files = {}
    for impl in impls:
        rules = [Rule(r.coll, r.np, r.lo, r.hi, found[r.variant][1] if r.variant else None)
                 for r in chosen if r.impl == impl.id]
        if rules:
            files[impl.id] = family_of(impl).write_tuning(impl, rules, directory)
            files[impl.id].path.chmod(0o644)
    write_manifest(directory, data.run_id, m, files, chosen)
    return Tuning(data.run_id, data, picked, chosen, files, untuned, lost(data, tuned),
                  fingerprints(data, tuned))


def lost(data: RunData, tuned: dict[str, Tuned]) -> list[str]:
    """Each algorithm that crashed, hung or gave wrong data in some launch, with its cells."""
    out = []
    for variant, t in tuned.items():
        bad = [(key, why) for key, cell in sorted(data.cells.items())
               for why in own_losses(cell, variant, t.impl).values()]
        if bad:
            status, reason = bad[0][1]
            where = ", ".join(dict.fromkeys(f"{BENCHMARKS[b].size_text(s)} at {n} ranks"
                                            for (b, s, n), _ in bad))
            out.append(f"{variant}: {status} ({where}): {reason}; left out there")
    return out


def write_manifest(directory: Path, run_id: int, m: Measure, files: dict[str, TuningFile],
              chosen: list[TunedRange]) -> None:
    (directory / MANIFEST).write_text(json.dumps({
        "run": run_id, "colls": list(m.colls), "nps": list(m.nps), "sizes": list(m.sizes),
        "files": {i: {"path": str(f.path), "env": dict(f.env), "note": f.note}
                  for i, f in files.items()},
        "ranges": [r.__dict__ for r in chosen]}, indent=1) + "\n")


def reachable(directory: Path, user: RankUser | None) -> None:
    """Ranks that run as another user must be able to read the tuning files, or the library
    ignores them without a word (Open MPI falls back to its fixed rules)."""
    if user is None:
        return
    for parent in (directory.resolve(), *directory.resolve().parents):
        if not parent.stat().st_mode & 0o001:
            raise ArenaError(f"ranks run as '{user.name}', who cannot enter {parent} to read "
                             f"the tuning files; choose a directory they can reach (e.g. "
                             "under /tmp)")


def read_manifest(directory: Path) -> Manifest:
    try:
        data = json.loads((directory / MANIFEST).read_text())
    except FileNotFoundError as e:
        raise ArenaError(f"{directory} holds no {MANIFEST}; give the --dir DIR of an earlier "
                         "'mpiarena tune'") from e
    except (OSError, json.JSONDecodeError) as e:
        raise ArenaError(f"cannot read {directory / MANIFEST}: {e}") from e
    return Manifest(tuple(data["colls"]), tuple(data["nps"]), tuple(data["sizes"]),
                    {i: TuningFile(Path(f["path"]), tuple(f["env"].items()), f["note"])
                     for i, f in data["files"].items()})


def verify(impls: list[Implementation], m: Measure, manifest: Manifest,
           context: RunContext) -> tuple[int, list[Gain]]:
    """The default against the tuned file, loaded through each library's own mechanism, as
    two variants of one run."""
    files = manifest.files
    for i in impls:
        reachable(files[i.id].path.parent, context.rank_user)
    specs = tuple(VariantSpec(i.id, "tuned", files[i.id].env) for i in impls)
    data = _run(_suite("tune-verify", m, specs), impls, m, context,
                {"tuning_verify": {i.id: str(files[i.id].path) for i in impls}})
    return data.run_id, gains(data, {i.id: f"{i.id}:tuned" for i in impls})
