"""The C core's files call one way (driver -> cell -> timing method -> benchmark -> library
module): no file uses, through any chain of files, a file that uses it.

Read as the build sees it: each source of a real core compiled alone to an object file with the
build's own flags, then what each object defines and leaves undefined (nm). A reference is a
call or a read of data (the linker resolves both alike): file A uses file B when A leaves
undefined a symbol B defines. An inline function of a header counts in the files it is inlined
into.
"""

from __future__ import annotations

import shutil
import subprocess
from collections import defaultdict
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import pytest

from mpiarena.impls.base import Family
from mpiarena.impls.registry import family_named, reference
from mpiarena.platform.build import CFLAGS, DRIVER, core_sources

# file -> file it uses -> the symbols it uses there
Uses = dict[str, dict[str, set[str]]]


@dataclass(frozen=True)
class CoreBuild:
    name: str
    compiler: str
    family: Family


BUILDS = [CoreBuild("raw TCP", "cc", reference()),
          CoreBuild("MPI", "/usr/bin/mpicc", family_named("openmpi"))]


def symbols(obj: Path) -> tuple[set[str], set[str]]:
    """The external symbols obj defines, and those it leaves undefined."""
    out = subprocess.run(["nm", "-g", "-P", str(obj)], capture_output=True, text=True,
                         check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        name, kind = line.split()[:2]
        (undefined if kind == "U" else defined).add(name)
    return defined, undefined


def uses_of(build: CoreBuild, into: Path) -> Uses:
    """Which file of build's core uses which, compiled into object files in `into`."""
    found = {}
    for src in core_sources(build.family):
        obj = into / f"{src.stem}.o"
        subprocess.run([build.compiler, *CFLAGS, "-c", str(src), "-o", str(obj)], check=True,
                       capture_output=True, cwd=into)
        found[src.name] = symbols(obj)
    owner = {name: f for f, (defined, _) in found.items() for name in defined}
    uses: Uses = defaultdict(lambda: defaultdict(set))
    for f, (_, undefined) in found.items():
        for name in undefined:
            if name in owner and owner[name] != f:
                uses[f][owner[name]].add(name)
    return uses


def tangles(uses: Uses) -> list[list[str]]:
    """The sets of files that reach each other (strongly connected, more than one file), each
    sorted (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(f: str) -> None:
        index[f] = low[f] = len(index)
        stack.append(f)
        for g in sorted(uses.get(f, {})):
            if g not in index:
                visit(g)
                low[f] = min(low[f], low[g])
            elif g in stack:
                low[f] = min(low[f], index[g])
        if low[f] == index[f]:
            part = []
            while (g := stack.pop()) != f:
                part.append(g)
            if part:
                found.append(sorted([f, *part]))

    for f in sorted(uses):
        if f not in index:
            visit(f)
    return found


def loop_through(first: str, among: list[str], uses: Uses) -> list[str]:
    """A shortest chain of uses from first back to first within `among`."""
    paths = {g: [first, g] for g in sorted(uses[first]) if g in among}
    while first not in paths:
        paths = {h: [*p, h] for g, p in sorted(paths.items())
                 for h in sorted(uses.get(g, {})) if h in among and h not in paths}
    return paths[first]


def describe(loop: list[str], uses: Uses) -> str:
    """cell.c -> timing_loop.c (arena_loop_calls) -> ... -> cell.c (arena_note)."""
    return loop[0] + "".join(f" -> {b} ({', '.join(sorted(uses[a][b]))})"
                             for a, b in pairwise(loop))


def loops(uses: Uses) -> list[str]:
    """A shortest loop of uses through each file of each tangle (each loop once), described."""
    found: dict[frozenset[str], list[str]] = {}
    for part in tangles(uses):
        for f in part:
            loop = loop_through(f, part, uses)
            found.setdefault(frozenset(loop), loop)
    return [describe(loop, uses) for loop in found.values()]


@pytest.fixture(scope="module", params=BUILDS, ids=[b.name for b in BUILDS])
def uses(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Uses:
    build: CoreBuild = request.param
    if shutil.which(build.compiler) is None:
        pytest.skip(f"no {build.compiler}")
    return uses_of(build, tmp_path_factory.mktemp(build.family.name))


def test_the_cores_files_use_each_other_one_way(uses: Uses):
    assert "arena_run_cell" in uses["driver.c"]["cell.c"]  # the reading sees the calls
    found = loops(uses)
    assert not found, "the core's files use each other in a loop:\n  " + "\n  ".join(found)


def test_the_drivers_files_are_listed_users_first(uses: Uses):
    """build.py's DRIVER lists each file before every driver file it uses (as core.h does)."""
    back = [f"{f} uses {g} ({', '.join(sorted(uses[f][g]))}), listed before it"
            for i, f in enumerate(DRIVER) for g in DRIVER[:i] if g in uses.get(f, {})]
    assert not back, "\n".join(back)


def test_a_loop_is_found_and_named():
    uses: Uses = {"a.c": {"b.c": {"f"}}, "b.c": {"c.c": {"g"}, "d.c": {"k"}},
                  "c.c": {"a.c": {"h"}}, "d.c": {}}
    assert loops(uses) == ["a.c -> b.c (f) -> c.c (g) -> a.c (h)"]
