"""Declarative experiments: which benchmarks, sizes, rank counts, observations and variants."""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypedDict, TypeVar, Unpack

from ..base.errors import ArenaError
from ..base.records import Timing
from ..base.sizes import format_size, parse_sizes
from ..model.benchmarks import BENCHMARKS
from ..model.guidelines import GROUP, expand

BUILTIN = Path(__file__).parent
OVERSUBSCRIBED = "polling libraries with more ranks than cores measure the scheduler"
SYNC_METHODS = tuple(Timing)  # how collectives are timed: see plan.timing
T = TypeVar("T")


@dataclass(frozen=True)
class VariantSpec:
    """Named settings applied to the implementations that `impl` matches (id or family)."""

    impl: str
    name: str
    env: tuple[tuple[str, str], ...] = ()
    args: tuple[str, ...] = ()
    binding: str | None = None
    exclusive: bool = False  # its jobs run alone (a progress thread spins even when idle)
    benchmarks: tuple[str, ...] = ()  # only these benchmarks (empty: all of the suite's)


@dataclass(frozen=True)
class Suite:
    name: str
    description: str
    benchmarks: tuple[str, ...]
    sizes: tuple[int, ...]
    nps: tuple[int, ...]
    observations: int = 5  # per launch
    launches: int = 8  # independent launches of each variant per rank count
    target_time: float = 1e-3  # each observation lasts at least this long
    max_cell_time: float = 2.0  # observations of one cell stop after this
    init_launches: int = 3
    window: int = 64
    hold_time: float = 1.0  # the cpu benchmark: seconds a rank stays blocked in a receive
    sync: str = "window"  # how collectives are timed: loop, barrier or window
    variants: tuple[VariantSpec, ...] = field(default_factory=tuple)
    up_to_cores: bool = False  # rank counts above the cores become the cores, unless --np
    budget: float = 0.0  # seconds the whole measurement may take: after `launches`, more
    # launches go to the comparisons still open and decidable (0: none)


def builtin_names() -> list[str]:
    return sorted(p.stem for p in BUILTIN.glob("*.toml"))


def load(name_or_path: str) -> Suite:
    """A built-in suite by name, or a suite file."""
    path = BUILTIN / f"{name_or_path}.toml"
    if not path.exists():
        path = Path(name_or_path)
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError as e:
        raise ArenaError(f"suite '{name_or_path}' not found; use one of "
                         f"{', '.join(builtin_names())} or a path to a .toml file") from e
    except (OSError, UnicodeDecodeError) as e:
        raise ArenaError(f"cannot read suite file {path}: {e}") from e
    except tomllib.TOMLDecodeError as e:
        raise ArenaError(f"suite file {path} is not valid TOML: {e}") from e
    return from_dict(path.stem, data, str(path))


def variant_spec(item: dict[str, Any], where: str) -> VariantSpec:
    if not isinstance(item, dict) or "impl" not in item or "name" not in item:
        raise ArenaError(f"{where}: every [[variant]] needs 'impl' and 'name'")
    _known(item, VARIANT_FIELDS, f"{where}: variant '{item['name']}'")
    if item.get("binding") not in (None, "core", "none"):
        raise ArenaError(f"{where}: variant binding must be 'core' or 'none'")
    env = item.get("env", {})
    if not isinstance(env, dict):
        raise ArenaError(f"{where}: variant '{item['name']}': 'env' must be a table, e.g. "
                         f"env = {{ OMPI_MCA_btl = \"self,tcp\" }}, got {env!r}")
    return VariantSpec(str(item["impl"]), str(item["name"]),
                       tuple((str(k), str(v)) for k, v in env.items()),
                       _list(item, "args", [], str, where, '["--mca", "btl", "self,tcp"]'),
                       item.get("binding"), _get(item, "exclusive", False, bool, where),
                       _list(item, "benchmarks", [], str, where, '["allreduce"]'))


EXPECTED = {int: "an integer", float: "a number", bool: "true or false", str: "a string",
            dict: "a table"}
VARIANT_FIELDS = ("impl", "name", "env", "args", "binding", "exclusive", "benchmarks")
FIELDS = ("description", "benchmarks", "sizes", "np", "observations", "launches", "target_time",
          "max_cell_time", "init_launches", "window", "hold_time", "variant", "up_to_cores",
          "sync", "budget")


def _known(data: dict[str, Any], fields: tuple[str, ...], where: str) -> None:
    if unknown := sorted(set(data) - set(fields)):
        raise ArenaError(f"{where}: unknown field {', '.join(map(repr, unknown))}; the fields are "
                         f"{', '.join(fields)}")


def _get(data: dict[str, Any], key: str, default: T, kind: type[T], where: str) -> T:
    """data[key], or default, checked to be of kind (an integer counts as a number)."""
    value: object = data.get(key, default)
    if kind is float and type(value) is int:
        value = float(value)
    if type(value) is not kind or not isinstance(value, kind):  # exact type: true is no int
        raise ArenaError(f"{where}: '{key}' must be {EXPECTED[kind]}, got {value!r}")
    return value


def _list(data: dict[str, Any], key: str, default: list[T], kind: type[T], where: str,
          example: str) -> tuple[T, ...]:
    """data[key], or default, checked to be a list whose items are all of kind."""
    value = data.get(key, default)
    if not isinstance(value, list) or any(type(v) is not kind for v in value):
        raise ArenaError(f"{where}: '{key}' must be a list of {EXPECTED[kind].split(' ', 1)[1]}s,"
                         f" e.g. {key} = {example}, got {value!r}")
    return tuple(value)


def from_dict(name: str, data: dict[str, Any], where: str) -> Suite:
    """Validate a suite's fields; every problem is one line naming the field."""
    _known(data, FIELDS, where)
    if "benchmarks" not in data:
        raise ArenaError(f"{where}: missing field 'benchmarks', e.g. benchmarks = [\"pingpong\"]")
    suite = Suite(
        name=name,
        description=_get(data, "description", "", str, where),
        benchmarks=_list(data, "benchmarks", [], str, where, '["pingpong", "bcast"]'),
        sizes=tuple(parse_sizes(str(data.get("sizes", "0..4M")))),
        nps=_list(data, "np", [2], int, where, "[2, 4]"),
        observations=_get(data, "observations", 5, int, where),
        launches=_get(data, "launches", 8, int, where),
        target_time=_get(data, "target_time", 1e-3, float, where),
        max_cell_time=_get(data, "max_cell_time", 2.0, float, where),
        init_launches=_get(data, "init_launches", 3, int, where),
        window=_get(data, "window", 64, int, where),
        hold_time=_get(data, "hold_time", 1.0, float, where),
        variants=tuple(variant_spec(v, where) for v in _list(data, "variant", [], dict, where,
                                                               "[{ impl = \"mpich\", name = "
                                                               "\"x\" }]")),
        up_to_cores=_get(data, "up_to_cores", False, bool, where),
        sync=_get(data, "sync", "window", str, where),
        budget=_get(data, "budget", 0.0, float, where),
    )
    return check(suite, where)


def check(suite: Suite, where: str) -> Suite:
    suite = replace(suite, benchmarks=expand(suite.benchmarks))
    unknown = [b for b in (*suite.benchmarks, *(b for v in suite.variants for b in v.benchmarks))
               if b not in BENCHMARKS]
    if unknown:
        raise ArenaError(f"{where}: unknown benchmark {', '.join(unknown)}; known: "
                         f"{', '.join(BENCHMARKS)}, or {GROUP} (every collective with a "
                         "guideline, and its mock-ups)")
    if not suite.benchmarks:
        raise ArenaError(f"{where}: no benchmarks selected")
    if not suite.nps or min(suite.nps) < 1:
        raise ArenaError(f"{where}: rank counts must be 1 or more, got {list(suite.nps)}")
    if suite.observations < 1 or suite.launches < 1 or suite.init_launches < 0 \
            or suite.window < 1:
        raise ArenaError(f"{where}: observations, launches and window must be at least 1")
    if suite.target_time <= 0 or suite.max_cell_time <= 0 or suite.hold_time <= 0:
        raise ArenaError(f"{where}: target_time, max_cell_time and hold_time must be positive")
    if suite.sync not in SYNC_METHODS:
        raise ArenaError(f"{where}: sync must be loop, barrier or window, got '{suite.sync}'")
    return suite


def capped(nps: Iterable[int], cap: int) -> list[int]:
    """The rank counts with those above cap lowered to cap."""
    return sorted({min(n, cap) for n in nps})


def fit_to_cores(suite: Suite, count: int, where: str, say: Callable[[str], None]) -> Suite:
    """The suite with no more ranks than the count cores of where if it asks for that; a note
    to `say` when that changed its rank counts."""
    nps = tuple(capped(suite.nps, count))
    if not suite.up_to_cores or nps == suite.nps:
        return suite
    wanted = ",".join(map(str, suite.nps))
    say(f"note: suite {suite.name}: ranks {', '.join(map(str, nps))}, not {wanted}: {where} "
        f"has {count} cores, and {OVERSUBSCRIBED}; --np {wanted} runs them all")
    return replace(suite, nps=nps)


class Overrides(TypedDict, total=False):
    """What the command line may change in a suite (None means keep)."""

    sizes: tuple[int, ...] | None
    nps: tuple[int, ...] | None
    observations: int | None
    launches: int | None
    budget: float | None
    sync: str | None
    benchmarks: tuple[str, ...] | None


def override(suite: Suite, **changes: Unpack[Overrides]) -> Suite:
    """The suite with command-line overrides applied (None means keep)."""
    kept: dict[str, Any] = {k: v for k, v in changes.items() if v is not None}
    return check(replace(suite, **kept), "command line")


SELECTION_PREFIX = "cells of "  # the name of a run whose cells --bench/--sizes chose


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def selection(suite: Suite, base: str, benchmarks: bool, sizes: bool) -> Suite:
    """`suite`, narrowed from suite `base` by --bench (`benchmarks`) or --sizes (`sizes`),
    named for what it measures: 'cells of pingpong and allreduce at 8 B and 64 KiB'."""
    at = [format_size(s) for s in suite.sizes]
    shown = at if len(at) <= 4 else [f"{at[0]}-{at[-1]} ({len(at)} sizes)"]
    what = _listed(list(suite.benchmarks)) if benchmarks else f"{base}'s benchmarks"
    where = _listed(shown) if sizes else f"{base}'s sizes"
    return replace(suite, name=f"{SELECTION_PREFIX}{what} at {where}")


def label(name: str) -> str:
    """How a report names a run's suite: 'suite quick', or a selection by its own name."""
    return name if name.startswith(SELECTION_PREFIX) else f"suite {name}"
