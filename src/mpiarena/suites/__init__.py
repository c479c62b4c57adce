"""Declarative experiments: which benchmarks, sizes, rank counts, observations and variants."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..benchmarks import BENCHMARKS
from ..errors import ArenaError
from ..sizes import parse_sizes

BUILTIN = Path(__file__).parent
SYNC_METHODS = ("loop", "barrier", "window")  # how collectives are timed: see plan.timing


@dataclass(frozen=True)
class VariantSpec:
    """Named settings applied to the implementations that `impl` matches (id or family)."""

    impl: str
    name: str
    env: tuple[tuple[str, str], ...] = ()
    args: tuple[str, ...] = ()
    binding: str | None = None
    exclusive: bool = False  # its jobs run alone (a progress thread spins even when idle)


@dataclass(frozen=True)
class Suite:
    name: str
    description: str
    benchmarks: tuple[str, ...]
    sizes: tuple[int, ...]
    nps: tuple[int, ...]
    observations: int = 20
    target_time: float = 1e-3  # each observation lasts at least this long
    max_cell_time: float = 2.0  # observations of one cell stop after this
    init_launches: int = 3
    window: int = 64
    hold_time: float = 1.0  # the cpu benchmark: seconds a rank stays blocked in a receive
    sync: str = "window"  # how collectives are timed: loop, barrier or window
    variants: tuple[VariantSpec, ...] = field(default_factory=tuple)


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


def variant_spec(item: dict, where: str) -> VariantSpec:
    if "impl" not in item or "name" not in item:
        raise ArenaError(f"{where}: every [[variant]] needs 'impl' and 'name'")
    if item.get("binding") not in (None, "core", "none"):
        raise ArenaError(f"{where}: variant binding must be 'core' or 'none'")
    return VariantSpec(str(item["impl"]), str(item["name"]),
                       tuple((str(k), str(v)) for k, v in item.get("env", {}).items()),
                       tuple(str(a) for a in item.get("args", [])), item.get("binding"),
                       bool(item.get("exclusive", False)))


def from_dict(name: str, data: dict, where: str) -> Suite:
    """Validate a suite's fields; every problem is one line naming the field."""
    try:
        suite = Suite(
            name=name,
            description=str(data.get("description", "")),
            benchmarks=tuple(data["benchmarks"]),
            sizes=tuple(parse_sizes(str(data.get("sizes", "0..4M")))),
            nps=tuple(int(n) for n in data.get("np", [2])),
            observations=int(data.get("observations", 20)),
            target_time=float(data.get("target_time", 1e-3)),
            max_cell_time=float(data.get("max_cell_time", 2.0)),
            init_launches=int(data.get("init_launches", 3)),
            window=int(data.get("window", 64)),
            hold_time=float(data.get("hold_time", 1.0)),
            sync=str(data.get("sync", "window")),
            variants=tuple(variant_spec(v, where) for v in data.get("variant", [])),
        )
    except KeyError as e:
        raise ArenaError(f"{where}: missing field {e}") from e
    except (TypeError, ValueError) as e:
        raise ArenaError(f"{where}: {e}") from e
    return check(suite, where)


def check(suite: Suite, where: str) -> Suite:
    unknown = [b for b in suite.benchmarks if b not in BENCHMARKS]
    if unknown:
        raise ArenaError(f"{where}: unknown benchmark {', '.join(unknown)}; known: "
                         f"{', '.join(BENCHMARKS)}")
    if not suite.benchmarks:
        raise ArenaError(f"{where}: no benchmarks selected")
    if not suite.nps or min(suite.nps) < 1:
        raise ArenaError(f"{where}: rank counts must be 1 or more, got {list(suite.nps)}")
    if suite.observations < 1 or suite.init_launches < 0 or suite.window < 1:
        raise ArenaError(f"{where}: observations and window must be at least 1")
    if suite.target_time <= 0 or suite.max_cell_time <= 0 or suite.hold_time <= 0:
        raise ArenaError(f"{where}: target_time, max_cell_time and hold_time must be positive")
    if suite.sync not in SYNC_METHODS:
        raise ArenaError(f"{where}: sync must be loop, barrier or window, got '{suite.sync}'")
    return suite


def override(suite: Suite, **changes) -> Suite:
    """The suite with command-line overrides applied (None means keep)."""
    kept = {k: v for k, v in changes.items() if v is not None}
    return check(replace(suite, **kept), "command line")
