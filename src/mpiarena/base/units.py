"""Human units for times, bandwidths and amounts of storage."""

from __future__ import annotations


def _scaled(value: float, steps: tuple[tuple[str, float], ...]) -> str:
    """3 significant digits in the largest unit the value reaches; the last step is the floor.

    The value is rounded before the unit is chosen, so 999.7 ns is 1 us, never 1e+03 ns."""
    if value < 0:
        return "-" + _scaled(-value, steps)
    value = float(f"{value:.3g}")
    unit, scale = next(((u, s) for u, s in steps if value >= s), steps[-1])
    shown = value / scale
    return f"{shown:.3g} {unit}" if shown < 1000 else f"{shown:.0f} {unit}"


def seconds(t: float) -> str:
    """3 significant digits in ns, us, ms or s."""
    return _scaled(t, (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)))


def bandwidth(bytes_per_s: float) -> str:
    """3 significant digits in bit/s, kbit/s, Mbit/s or Gbit/s."""
    return _scaled(bytes_per_s * 8, (("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3),
                                     ("bit/s", 1.0)))


def duration(t: float) -> str:
    """A wall time as a person says it: 45 s, 2 min 50 s, 1 h 3 min."""
    s = round(t)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s" if s % 60 else f"{s // 60} min"
    return f"{s // 3600} h {s % 3600 // 60} min"


def data(nbytes: float) -> str:
    """An amount of storage: 3 significant digits in B, KiB, MiB or GiB."""
    return _scaled(nbytes, (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("B", 1)))
