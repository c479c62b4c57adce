"""What the bench scripts share: the --impl option and how a time is printed."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from mpiarena.base import units


def _ids(text: str) -> list[str]:
    return [i for i in (s.strip() for s in text.split(",")) if i]


def impl_option(parser: argparse.ArgumentParser, default: Sequence[str] = (),
                what: str = "") -> None:
    """--impl: implementation ids, repeatable or comma-separated; `default` (or `what`, where
    the default is found rather than named) said in the help. Read it with impl_ids."""
    said = what or ", ".join(default) or "every usable one found"
    parser.add_argument("--impl", action="extend", type=_ids, default=None,
                        help=f"implementation ids, repeatable or comma-separated (default: "
                             f"{said})")


def impl_ids(given: list[str] | None, default: Sequence[str] = ()) -> list[str]:
    """The ids --impl named, else the default."""
    return list(given or default)


def one_impl_option(parser: argparse.ArgumentParser, default: str, what: str = "") -> None:
    """--impl for a bench of one library."""
    parser.add_argument("--impl", default=default,
                        help=f"implementation id (default: {default}{what})")


def fmt_t(seconds: float) -> str:
    """A time as every bench prints it: mpiarena's own units (base/units.py)."""
    return units.seconds(seconds)
