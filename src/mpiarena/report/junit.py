"""JUnit XML of a comparison or a history, as Jenkins' junit step and GitLab's
`artifacts:reports:junit` read it: <testsuites> holding one <testsuite> holding one <testcase>
per cell; a <failure> for a decided regression, <skipped> where the launches cannot tell, the
figures in <system-out>, and the drift between the runs it was held against as <properties>."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from ..analysis.compare import Change, Drift
from ..analysis.history import History
from ..analysis.program_compare import ProgramChange
from ..analysis.verdicts import Movement
from ..base.records import Cell
from ..model.benchmarks import BENCHMARKS
from .history import change_text, step_text, title
from .program import change_line


@dataclass
class Case:
    """One testcase: a cell, its verdict and the lines behind it."""

    name: str
    classname: str
    failure: str = ""  # a decided regression: the message
    skipped: str = ""  # the launches cannot tell: why
    out: list[str] = field(default_factory=list)
    properties: dict[str, str] = field(default_factory=dict)


def drift_properties(drift: Drift) -> dict[str, str]:
    """The drift a change was held against: its sd and allowance (log ratios), and whether there
    were enough cells to measure it."""
    return {"run_drift_sd": f"{drift.spread:.4g}", "run_drift_allowance": f"{drift.allowance:.4g}",
            "run_drift_covered": str(drift.covered).lower(), "run_drift_cells": str(drift.cells)}


def _name(key: Cell, variant: str) -> str:
    bench = BENCHMARKS[key.bench]
    where = f"{key.bench} {bench.size_text(key.size)}" if bench.sized else key.bench
    return f"{where}, {key.np} ranks, {variant}"


def _case(name: str, classname: str, outcome: Movement, text: str,
          properties: dict[str, str] | None = None) -> Case:
    """Failed by a decided regression, skipped when undecided."""
    return Case(name, classname, failure=text if outcome == Movement.REGRESSION else "",
                skipped=text if outcome == Movement.UNDECIDED else "", out=[text],
                properties=properties or {})


def compare_cases(changes: Sequence[Change]) -> list[Case]:
    """A testcase per compared cell of two benchmark runs."""
    out = []
    for c in changes:
        name = _name(c.key, c.variant if c.variant == c.other else f"{c.variant} -> {c.other}")
        out.append(_case(name, f"mpiarena.{c.key.bench}", c.outcome, change_text(c),
                         drift_properties(c.drift)))
    return out


def program_cases(changes: Sequence[ProgramChange]) -> list[Case]:
    """A testcase per figure and library of two program runs."""
    return [_case(f"{c.figure}, " + (c.variant if c.variant == c.other else
                                     f"{c.variant} -> {c.other}"),
                  "mpiarena.app", c.outcome, change_line(c)) for c in changes]


def history_cases(h: History, labels: Sequence[str]) -> list[Case]:
    """A testcase per cell: failed by any decided regression in its history (each named);
    else skipped when the launches cannot tell its first run from its last (or it ran once)."""
    out = []
    for s in h.series:
        judged = s.judged()
        failed = [step_text(labels, step) for step in s.regressions()]
        overall = s.overall or (s.steps[0] if s.steps else None)
        skipped = "" if failed else (
            "measured in one run only" if overall is None else
            f"first against last, {step_text(labels, overall)}"
            if overall.outcome == Movement.UNDECIDED else "")
        out.append(Case(title(s), f"mpiarena.{s.cell.bench}", "; ".join(failed),
                        skipped, [step_text(labels, step) for step in judged],
                        drift_properties(h.drift)))
    return out


def to_xml(suite: str, cases: Sequence[Case]) -> str:
    """The cases as one JUnit document."""
    failures = sum(1 for c in cases if c.failure)
    skipped = sum(1 for c in cases if c.skipped and not c.failure)
    counts = {"tests": str(len(cases)), "failures": str(failures), "errors": "0",
              "skipped": str(skipped), "time": "0"}
    root = ET.Element("testsuites", {"name": "mpiarena", **counts})
    testsuite = ET.SubElement(root, "testsuite", {
        "name": suite, **counts, "timestamp": datetime.now(UTC).isoformat(timespec="seconds")})
    for c in cases:
        case = ET.SubElement(testsuite, "testcase", {"name": c.name, "classname": c.classname,
                                                     "time": "0"})
        if c.properties:
            listed = ET.SubElement(case, "properties")
            for name, value in c.properties.items():
                ET.SubElement(listed, "property", {"name": name, "value": value})
        if c.failure:
            ET.SubElement(case, "failure", {"message": c.failure, "type": "regression"}).text = \
                c.failure
        elif c.skipped:
            ET.SubElement(case, "skipped", {"message": c.skipped})
        if c.out:
            ET.SubElement(case, "system-out").text = "\n".join(c.out)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") \
        + "\n"
