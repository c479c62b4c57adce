"""The status values the store keeps: of a run, of a job (one launch) and its shape, of a cell, of
a launch of a user's program.

They are StrEnums: each member equals the string stored, so stores written before read the same.
"""

from __future__ import annotations

from enum import StrEnum


class RunStatus(StrEnum):
    """A run: measuring, finished, or stopped before the end (what was measured is kept)."""

    RUNNING = "running"
    COMPLETE = "complete"
    INCOMPLETE = "incomplete"


class JobStatus(StrEnum):
    """One launch of a variant: launching, measuring, shut down cleanly, or broken; the first
    stores said done for a clean shut-down."""

    STARTING = "starting"
    RUNNING = "running"
    OK = "ok"
    DONE = "done"
    FAILED = "failed"


class LaunchShape(StrEnum):
    """What a job of the core measured: every cell of its variant's plan, or only the cells a
    budget still had open (its levels may differ, so comparisons stay within a shape)."""

    WHOLE = "whole"
    PARTIAL = "partial"


class CellStatus(StrEnum):
    """A cell of a variant: measured; not applicable to it; skipped (its job could not start);
    invalid (its data checks failed); failed (its job broke). In order of severity."""

    OK = "ok"
    NA = "na"
    SKIPPED = "skipped"
    INVALID = "invalid"
    FAILED = "failed"


class LaunchStatus(StrEnum):
    """A launch of a user's program (`mpiarena program`): it exited 0; it exited otherwise, or its
    launcher or profile failed; it did not end within the timeout and was killed."""

    OK = "ok"
    FAILED = "failed"
    TIMEOUT = "timeout"
