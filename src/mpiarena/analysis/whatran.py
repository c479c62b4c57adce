"""What each variant actually ran with, set against what was asked: the control variables that
differ from its library's defaults (its default variant in the same run), the settings of a
variant's environment that did not reach the library, and bindings the launcher did not apply."""

from __future__ import annotations

from dataclasses import dataclass

from ..base.records import ImplementationRecord, JobRecord, VariantRecord
from ..base.status import JobStatus
from ..impls.registry import family_named
from ..model.whatran import WhatRan
from ..store.results import RunData


@dataclass(frozen=True)
class CvarDiff:
    """One control variable whose reported value differs between two configurations."""

    name: str
    before: str | None  # None: the first has no such variable
    after: str | None


@dataclass(frozen=True)
class VariantConfig:
    """A variant's configuration as its first job that read one reported it, and what differs
    from the default variant of the same library (None: none in the run, or itself)."""

    variant: str
    impl_id: str
    what: WhatRan | None  # None: no job of it read one (older store, or none started)
    defaults_from: str | None
    differs: list[CvarDiff]
    why_none: str = ""  # what = None: why nothing was recorded


@dataclass(frozen=True)
class BindingMiss:
    """A job asked to bind each rank to a core whose rank saw more than one CPU allowed."""

    variant: str
    np: int
    rank: int
    cpus: str


@dataclass(frozen=True)
class Configs:
    variants: list[VariantConfig]
    warnings: list[str]  # settings that did not reach the library
    binding: list[BindingMiss]

    def of(self, variant: str) -> VariantConfig | None:
        return next((v for v in self.variants if v.variant == variant), None)


def cvar_diffs(a: WhatRan, b: WhatRan) -> list[CvarDiff]:
    """The control variables whose values differ between a and b, by name."""
    va = {c.name: c.value for c in a.cvars or ()}
    vb = {c.name: c.value for c in b.cvars or ()}
    return [CvarDiff(n, va.get(n), vb.get(n)) for n in sorted(va.keys() | vb.keys())
            if va.get(n) != vb.get(n)]


def _chosen(diffs: list[CvarDiff], impls: list[ImplementationRecord],
            variants: list[VariantRecord]) -> list[CvarDiff]:
    """diffs but for the variables that a launch of one of impls sets itself (job ids, contact
    URIs, values per network interface: Family.launch_bound), unless one of variants'
    environments sets them."""
    families = [family_named(i.family) for i in impls]
    asked = {f.cvar_for_env(key) for f in families for v in variants for key in v.env}
    return [d for d in diffs
            if d.name in asked or not any(f.launch_bound(d.name) for f in families)]


def _why_none(jobs: list[JobRecord], variant: str) -> str:
    mine = [j for j in jobs if j.variant == variant]
    if not mine:
        return "no launch of it ran"
    if all(j.status not in (JobStatus.OK, JobStatus.DONE, JobStatus.RUNNING) for j in mine):
        return "none of its launches started (see the failed jobs)"
    return "not read: a store from before schema 7"


def _first(jobs: list[JobRecord], reported: dict[int, WhatRan], variant: str
           ) -> WhatRan | None:
    return next((reported[j.id] for j in jobs if j.variant == variant and j.id in reported), None)


TRUE, FALSE = {"1", "true", "yes", "on", "enabled"}, {"0", "false", "no", "off", "disabled"}


def _same(asked: str, reported: str) -> bool:
    """The same setting: case aside, and booleans however spelt (Open MPI reads 1 as true)."""
    a, r = asked.strip().lower(), reported.strip().lower()
    return a == r or (a in TRUE and r in TRUE) or (a in FALSE and r in FALSE)


def _setting_warnings(v: VariantRecord, impl: ImplementationRecord, mine: WhatRan | None,
                      default: WhatRan | None) -> list[str]:
    """Each setting of the variant's environment that names no control variable of the
    library, or that left the variable at the value the library's default variant reports.
    Only where that can be told: MPI_T reads an enum as a number or a name, and MPICH reads a
    string variable's default whatever the environment set, so a value that differs from the
    asked one is a finding only when it is also the default's, and never when empty."""
    if mine is None or mine.cvars is None:
        return []
    family = family_named(impl.family)
    out = []
    for key, asked in v.env.items():
        name = family.cvar_for_env(key)
        if name is None:
            continue
        seen = mine.value(name)
        if seen is None:
            out.append(f"{v.variant}: {key} is not a control variable of {impl.impl_id} (it "
                       f"reports no {name}): the setting has no effect")
            continue
        was = default.value(name) if default is not None else None
        if was is not None and seen == was and seen.strip() and not _same(asked, seen):
            out.append(f"{v.variant}: {key}={asked} had no effect: {impl.impl_id} reports "
                       f"{name}={seen}, its default")
    return out + [f"{v.variant}: {line}" for line in family.ignored(mine.cvars, v.env)]


def _binding(jobs: list[JobRecord]) -> list[BindingMiss]:
    """Ranks of jobs bound to cores that saw more than one CPU (cpus: '3' or '0-1,4')."""
    out = []
    for j in jobs:
        if j.binding != "core":
            continue
        for r in j.ranks:
            cpus = str(r.get("cpus", "?"))
            if cpus != "?" and ("," in cpus or "-" in cpus):
                out.append(BindingMiss(j.variant, j.np, int(r["rank"]), cpus))
                break
    return out


def configs(implementations: list[ImplementationRecord], variants: list[VariantRecord],
            jobs: list[JobRecord], reported: dict[int, WhatRan]) -> Configs:
    """Every variant's configuration, its differences from its library's default variant, the
    settings that did not reach the library, and the bindings not applied."""
    impls = {i.impl_id: i for i in implementations}
    defaults = {v.impl_id: v.variant for v in variants if v.name == "default"}
    out, warnings = [], []
    for v in variants:
        mine = _first(jobs, reported, v.variant)
        base_name = defaults.get(v.impl_id)
        base = _first(jobs, reported, base_name) if base_name else None
        against = base_name if base is not None and base_name != v.variant else None
        differs = (_chosen(cvar_diffs(base, mine), [impls[v.impl_id]] if v.impl_id in impls
                           else [], [v]) if against and base and mine else [])
        out.append(VariantConfig(v.variant, v.impl_id, mine, against, differs,
                                 "" if mine else _why_none(jobs, v.variant)))
        if v.impl_id in impls:
            warnings += _setting_warnings(v, impls[v.impl_id], mine, base)
    return Configs(out, warnings, _binding(jobs))


def run_configs(data: RunData) -> Configs:
    """The run's configurations, as `configs` reads them from its data."""
    return configs(data.implementations, data.variant_rows, data.jobs, data.reported)


@dataclass(frozen=True)
class ConfigChange:
    """What ran differently between a variant of one run and its counterpart in another."""

    name: str  # the variant, or "A -> B" where --pair matched two
    transport: tuple[str, str] | None  # (before, after) where it changed
    differs: list[CvarDiff]  # but for what each launch sets itself


def run_changes(a: RunData, b: RunData, pairs: dict[str, str]) -> list[ConfigChange]:
    """For each pair (variant of a, variant of b) whose configurations both runs read, what
    differs: the transport and the control variables, leaving out those each launch sets
    itself (Family.launch_bound), unless either variant's environment sets them."""
    ca_all, cb_all = run_configs(a), run_configs(b)
    out = []
    for va, vb in pairs.items():
        ca, cb = ca_all.of(va), cb_all.of(vb)
        if ca is None or cb is None or ca.what is None or cb.what is None:
            continue
        impls = [i for run, c in ((a, ca), (b, cb)) for i in run.implementations
                 if i.impl_id == c.impl_id]
        asked = [r for run, name in ((a, va), (b, vb)) for r in run.variant_rows
                 if r.variant == name]
        differs = _chosen(cvar_diffs(ca.what, cb.what), impls, asked)
        moved = ca.what.transport != cb.what.transport
        if moved or differs:
            out.append(ConfigChange(va if va == vb else f"{va} -> {vb}",
                                    (ca.what.transport, cb.what.transport) if moved else None,
                                    differs))
    return out
