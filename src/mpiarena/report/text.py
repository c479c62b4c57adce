"""Plain text wrapped as a person reads it: continuation lines indented under their first, a
figure never split from its unit."""

from __future__ import annotations

import re
import textwrap

# a number and its unit: "512 B", "1.2 us", "3.5 Mbit/s", "2 ranks"; joined by a no-break space
# while wrapping, so that a line never ends between them
_UNIT = re.compile(r"(\d) (?=(?:[KMG]i)?B\b|[mun]?s\b|[kMG]?bit/s|ranks?\b|min\b|cores?\b)")
NO_BREAK = "\u00a0"


def wrapped(text: str, width: int) -> list[str]:
    """text as lines of at most width characters where it has spaces to break at, each
    continuation indented two more than the first line."""
    if len(text) <= width:
        return [text]
    indent = " " * (len(text) - len(text.lstrip(" ")) + 2)
    lines = textwrap.wrap(_UNIT.sub(rf"\1{NO_BREAK}", text), width, subsequent_indent=indent,
                          break_long_words=False, break_on_hyphens=False)
    return [line.replace(NO_BREAK, " ") for line in lines]
