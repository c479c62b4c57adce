"""The seed studies as data: their experiments, published figures and conclusions.

Each `<id>.toml` here cites its source and holds three kinds of entries:
- `[[experiment]]`: a suite (benchmarks, sizes, ranks, observations; its `[[experiment.variant]]`
  entries are the suite's variants) and the network it ran on, plus a shorter `quick` form;
- `[[figure]]`: a number the study published, where it appears, and which measured quantity
  stands beside it;
- `[[claim]]`: a conclusion the study drew, and how to check it (or why it cannot be checked);
  a conclusion of several parts has check "all" and one `[[claim.part]]` per part.
`differences` lists how the rerun's method differs from the study's. Libraries are named by
keys (`lam`, `mpich`...) that map to measured variants: `lam` is every LAM implementation found
as it is, `lam:tcp` its variant named `tcp`.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from ..base.errors import ArenaError
from ..base.sizes import parse_size

HERE = Path(__file__).parent


@dataclass(frozen=True)
class Library:
    key: str
    name: str  # as the study ran it, e.g. "LAM/MPI 6.3.2"
    measured: tuple[str, ...]  # selectors: family or family:variant
    note: str = ""


@dataclass(frozen=True)
class Experiment:
    name: str
    what: str
    suite: dict[str, Any]  # a suite table (see mpiarena.suites.from_dict)
    quick: dict[str, Any]  # what the short mode changes in it
    families: tuple[str, ...]  # implementations measured (all of these families found)
    study_np: int  # the most ranks the study ran (one per machine)
    mtu: int | None = None  # the link's MTU, if the experiment is about it
    needs_network: bool = False  # meaningless on one machine (skipped with --cluster local)
    program: str = ""  # a program of kernels/ to profile instead of a suite (args in suite)
    local: str = ""  # why it runs on this machine whatever the cluster (empty: it does not)
    cluster: str = ""  # its own network, instead of the study's (e.g. emulated:gige)


class ClaimCheck(StrEnum):
    """How a study's conclusion is checked against what was measured (analysis/claims.py);
    all: by its parts; cannot: it cannot be measured here."""

    BEST = "best"
    ORDER = "order"
    BETTER = "better"
    GROWS = "grows"
    SIMILAR = "similar"
    FLAT = "flat"
    FLAT_FIT = "flat_fit"
    SWITCH = "switch"
    PEAK_WITHIN = "peak_within"
    REDUCED = "reduced"
    AT_MOST = "at_most"
    AT_LEAST = "at_least"
    ALL = "all"
    CANNOT = "cannot"


class QuantityKind(StrEnum):
    """Which statistic of a cell a study's figure is: the median or mean, the latency, the peak
    bandwidth, a call's time, the CPU used during it, a profiled call's seconds, the fitted
    start-up (alpha: the first regime of analysis/models) or the asymptote (1 / the fitted cost
    per byte of the last regime, in B/s)."""

    MEDIAN = "median"
    MEAN = "mean"
    LATENCY = "latency"
    PEAK = "peak"
    CALL = "call"
    CPU_DURING = "cpu_during"
    PROFILE = "profile"
    ALPHA = "alpha"
    ASYMPTOTE = "asymptote"


@dataclass(frozen=True)
class Quantity:
    """Which measured figure: a statistic of one cell (bench x size x ranks) of an experiment."""

    experiment: str
    kind: QuantityKind
    bench: str
    size: int | None = None  # None: the only or the largest size measured
    np: int | None = None  # None: 2 for point-to-point, else the most ranks measured
    call: str = ""  # kind call: send, recv, sendrecv, scatter, reduce; kind profile: MPI_Wait...
    rank: int | None = None  # this rank's time (Nevin's rank 0), not the benchmark's reduction

    @property
    def higher_is_better(self) -> bool:
        return self.kind in (QuantityKind.PEAK, QuantityKind.ASYMPTOTE) or \
            self.bench in ("progress", "overlap")


@dataclass(frozen=True)
class Published:
    """A published number, and how the study printed it (77.44, not 77.4)."""

    value: float
    spread: float | None = None
    text: str = ""  # the value (and spread) as printed, in the figure's unit


@dataclass(frozen=True)
class PublishedFigure:
    what: str
    source: str  # where the study gives it: "Table 2", "text, Barrier"
    quantity: Quantity | None  # None: it cannot be measured here (see why)
    unit: str  # how both numbers are shown: s, ms, us, Mbit/s, MB, %
    published: dict[str, Published]  # library -> its figure, in unit
    relative_to: str | None = None  # show each as a ratio to this library's figure
    minus: str | None = None  # show the difference to this library's figure
    note: str = ""
    why: str = ""  # why nothing here stands beside it


@dataclass(frozen=True)
class Claim:
    text: str
    source: str
    check: ClaimCheck
    quantity: Quantity | None
    params: dict[str, Any] = field(default_factory=dict)
    parts: tuple[Claim, ...] = ()  # check "all": each part of the conclusion


@dataclass(frozen=True)
class Study:
    id: str
    title: str
    citation: str
    seed: str  # the seed file it comes from
    network: str  # what the study ran on
    cluster: str  # the emulated network closest to it
    libraries: dict[str, Library]
    experiments: dict[str, Experiment]
    figures: tuple[PublishedFigure, ...]
    claims: tuple[Claim, ...]
    differences: tuple[str, ...] = ()  # how the rerun's method differs from the study's


def names() -> list[str]:
    return sorted(p.stem for p in HERE.glob("*.toml"))


def load(study_id: str) -> Study:
    path = HERE / f"{study_id}.toml"
    if not path.exists():
        raise ArenaError(f"unknown study '{study_id}'; choose one of {', '.join(names())}")
    return parse(study_id, tomllib.loads(path.read_text()), path.name)


def _quantity(item: dict[str, Any], where: str, experiments: dict[str, Experiment]) -> Quantity:
    exp = item.get("experiment", "")
    if exp not in experiments:
        raise ArenaError(f"{where}: experiment '{exp}' is not defined")
    kind = item.get("quantity", "median")
    if kind not in {k.value for k in QuantityKind}:
        raise ArenaError(f"{where}: quantity '{kind}' is not one of {', '.join(QuantityKind)}")
    size = item.get("size")
    return Quantity(exp, QuantityKind(kind), str(item.get("bench", "pingpong")),
                    parse_size(str(size)) if size is not None else None, item.get("np"),
                    str(item.get("call", "")), item.get("rank"))


def _number(v: object) -> tuple[float, str]:
    """A published number and its printed form: a TOML number as Python prints it shortest
    (77.44), or a string where the print has trailing zeros ("10.20")."""
    if isinstance(v, bool) or not isinstance(v, int | float | str):
        raise ValueError(v)
    return float(v), v if isinstance(v, str) else str(v)


def _published(values: dict[str, Any], where: str) -> dict[str, Published]:
    out: dict[str, Published] = {}
    for impl, v in values.items():
        try:
            if isinstance(v, list) and len(v) == 2:
                (x, xt), (sd, st) = _number(v[0]), _number(v[1])
                out[impl] = Published(x, sd, f"{xt} ± {st}")
            else:
                x, xt = _number(v)
                out[impl] = Published(x, None, xt)
        except ValueError:
            raise ArenaError(f"{where}: published value of {impl} is a number or [value, spread]"
                             ) from None
    return out


_CLAIM_FIELDS = ("text", "source", "check", "experiment", "quantity", "bench", "size", "np",
                 "call", "rank", "part")


def _claim(c: dict[str, Any], where: str, experiments: dict[str, Experiment]) -> Claim:
    here = f"{where}: claim '{c['text']}'"
    if c["check"] not in {k.value for k in ClaimCheck}:
        raise ArenaError(f"{here}: check '{c['check']}' is not one of {', '.join(ClaimCheck)}")
    check = ClaimCheck(c["check"])
    parts = tuple(_claim({"source": c["source"], **p}, where, experiments)
                  for p in c.get("part", []))
    if (check == ClaimCheck.ALL) != bool(parts):
        raise ArenaError(f"{here}: check 'all' and [[claim.part]] go together")
    q = None if check in (ClaimCheck.CANNOT, ClaimCheck.ALL) else _quantity(c, here, experiments)
    params = {k: v for k, v in c.items() if k not in _CLAIM_FIELDS}
    return Claim(c["text"], c["source"], check, q, params, parts)


def parse(study_id: str, data: dict[str, Any], where: str) -> Study:
    """A study from its TOML; every problem is one line naming the file and entry."""
    try:
        libraries = {k: Library(k, v["name"], tuple(v.get("measured", [])), v.get("note", ""))
                     for k, v in data["libraries"].items()}
        experiments = {}
        for e in data["experiment"]:
            experiments[e["name"]] = Experiment(
                e["name"], e["what"], {**e["suite"], "variant": e.get("variant", [])},
                dict(e.get("quick", {})),
                tuple(e["families"]), int(e.get("study_np", max(e["suite"].get("np", [2])))),
                e.get("mtu"), bool(e.get("needs_network", False)), e.get("program", ""),
                e.get("local", ""), e.get("cluster", ""))
        figures = tuple(
            PublishedFigure(f["what"], f["source"],
                            None if "why" in f else _quantity(
                                f, f"{where}: figure '{f['what']}'", experiments),
                            f["unit"],
                            _published(f["published"], f"{where}: figure '{f['what']}'"),
                            f.get("relative_to"), f.get("minus"), f.get("note", ""),
                            f.get("why", ""))
            for f in data.get("figure", []))
        claims = tuple(_claim(c, where, experiments) for c in data.get("claim", []))
        study = Study(study_id, data["title"], data["citation"], data["seed"], data["network"],
                      data["cluster"], libraries, experiments, figures, claims,
                      tuple(data.get("differences", [])))
    except KeyError as e:
        raise ArenaError(f"{where}: missing field {e}") from e
    _check_libraries(study, where)
    return study


def _check_libraries(study: Study, where: str) -> None:
    used = [impl for f in study.figures for impl in f.published]
    used += [f.relative_to for f in study.figures if f.relative_to]
    claims = [*study.claims, *(p for c in study.claims for p in c.parts)]
    for c in claims:
        for key in ("expect", "a", "b", "lib"):
            if key in c.params:
                used.append(str(c.params[key]).split("@")[0])
        used += [str(x).split("@")[0] for x in (*c.params.get("among", []),
                                                 *c.params.get("order", []))]
    unknown = sorted(set(used) - set(study.libraries))
    if unknown:
        raise ArenaError(f"{where}: libraries {', '.join(unknown)} are not in [libraries]")
