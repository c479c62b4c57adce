"""Message-size lists: `0,1,8,1K..4M` with binary suffixes and power-of-two ranges."""

from __future__ import annotations

import re

from .errors import ArenaError

MAX_SIZE = 256 << 20
_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10, "M": 1 << 20,
          "MB": 1 << 20, "MIB": 1 << 20, "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30}
_SIZE = re.compile(r"^\s*(\d+)\s*([A-Za-z]*)\s*$")
HINT = "use e.g. 0,1,8,1K..4M (K, M, G are powers of 1024; a..b steps by powers of two)"


def parse_size(text: str) -> int:
    """One size such as `8`, `1K`, `4MiB`."""
    m = _SIZE.match(text)
    unit = m.group(2).upper() if m else ""
    if not m or unit not in _UNITS:
        raise ArenaError(f"'{text.strip()}' is not a message size; {HINT}")
    value = int(m.group(1)) * _UNITS[unit]
    if value > MAX_SIZE:
        raise ArenaError(f"size '{text.strip()}' is above the {MAX_SIZE >> 20} MiB limit; {HINT}")
    return value


def _power_range(lo: int, hi: int) -> list[int]:
    if lo > hi:
        raise ArenaError(f"size range {lo}..{hi} runs backwards; {HINT}")
    out = [0] if lo == 0 else []
    size = max(lo, 1)
    while size <= hi:
        out.append(size)
        size *= 2
    return out


def parse_sizes(text: str, perturb: bool = False) -> list[int]:
    """A comma-separated list of sizes and `a..b` ranges, sorted and without duplicates.

    With perturb, each size above 3 B gets NetPIPE's neighbours size-3 and size+3.
    """
    if not text.strip():
        raise ArenaError(f"empty size list; {HINT}")
    sizes: set[int] = set()
    for part in text.split(","):
        if ".." in part:
            lo, _, hi = part.partition("..")
            sizes.update(_power_range(parse_size(lo), parse_size(hi)))
        else:
            sizes.add(parse_size(part))
    if perturb:
        sizes |= {s + d for s in sizes if s > 3 for d in (-3, 3)}
    return sorted(sizes)


def format_size(size: int) -> str:
    """8 -> '8 B', 4096 -> '4 KiB', 3000 -> '3000 B'."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"
