"""A run's figures drawn side by side: worker processes draw and encode them, one figure at a
time, and hand back what they encoded, in the makers' order, while the caller goes on.

The workers are forked, so they share what the caller computed before (the analysis the
makers draw from) instead of receiving a copy; where forking is unsafe or unavailable (a
threaded caller, one core, another platform) the figures are drawn here, one after another.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from functools import partial
from typing import TypeVar, cast

from .plots import Maker, Plot

T = TypeVar("T")
_JOBS: list[Callable[[], object]] = []  # a worker's copy of the caller's jobs


def _take(jobs: Sequence[Callable[[], object]]) -> None:
    _JOBS[:] = jobs


def _run(index: int) -> object:
    return _JOBS[index]()


def _encoded(make: Maker, encode: Callable[[Plot], T]) -> T | None:
    plot = make()
    if plot is None:
        return None
    try:
        return encode(plot)
    finally:
        plot.figure.clear()


def workers() -> int:
    """How many processes draw: the cores this process may use, one where forking is unsafe."""
    if threading.active_count() > 1 or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@contextmanager
def started(makers: Sequence[Maker], encode: Callable[[Plot], T]
            ) -> Iterator[Callable[[], list[T]]]:
    """Starts drawing and gives a function that waits for the figures: encode(plot) for every
    figure the makers draw, in their order (none where a maker has nothing to show), each figure
    cleared once encoded. The caller goes on with its own work meanwhile."""
    jobs: list[Callable[[], T | None]] = [partial(_encoded, make, encode) for make in makers]
    count = min(workers(), len(jobs))
    if count < 2:
        yield lambda: [r for r in (job() for job in jobs) if r is not None]
        return
    pool = ProcessPoolExecutor(count, mp_context=multiprocessing.get_context("fork"),
                               initializer=_take, initargs=(jobs,))
    try:
        pending = cast(Iterator[T | None], pool.map(_run, range(len(jobs))))
        yield lambda: [r for r in pending if r is not None]
    finally:
        pool.shutdown(cancel_futures=True)  # waits for the figures being drawn, no others


def drawn(makers: Sequence[Maker], encode: Callable[[Plot], T]) -> list[T]:
    """encode(plot) for every figure the makers draw, in their order (see `started`)."""
    with started(makers, encode) as wait:
        return wait()
