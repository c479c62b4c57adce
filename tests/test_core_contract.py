"""The contract between Python and the C core: the environment it reads and the benchmarks it
knows are defined once on each side and must agree."""

from __future__ import annotations

import re
import subprocess
from dataclasses import fields
from pathlib import Path

from mpiarena.base import core_env
from mpiarena.base.records import Cell, CellRequest
from mpiarena.model.benchmarks import BENCHMARKS
from mpiarena.runner.job import RankInfo, cell_command

KERNELS = Path(core_env.__file__).parent.parent / "kernels"
SOURCES = {p.name: p.read_text() for p in KERNELS.glob("*.c")}


def test_the_core_reads_exactly_the_settings_python_defines():
    read = {m for text in SOURCES.values() for m in re.findall(r'getenv\("(ARENA_\w+)"\)', text)}
    exported = {m for text in SOURCES.values() for m in re.findall(r'"(ARENA_\w+)=', text)}
    assert read | exported == set(core_env.SETTINGS)
    assert len(core_env.SETTINGS) == len(set(core_env.SETTINGS))


def test_the_drivers_benchmarks_are_the_ones_python_knows():
    table = re.search(r"bench_names\[B_COUNT\] = \{(.*?)\};", SOURCES["benchmarks.c"], re.S)
    assert table is not None
    in_c = re.findall(r'"([^"]+)"', table.group(1))
    assert "ARENA_EXT_BENCHES(EXT_NAME)" in table.group(1)
    in_c += ext_names()
    launched = [n for n, b in BENCHMARKS.items() if b.kind != "startup"]  # init, finalize
    assert sorted(in_c) == sorted(launched)


def test_the_rank_line_carries_every_field_rank_info_reads():
    line = re.search(r'"(rank\\t[^"]*)"', SOURCES["driver.c"])
    assert line is not None
    assert line.group(1).count("\\t") == len(fields(RankInfo))  # the tag, then one per field


def ext_names() -> list[str]:
    """The names of kernels/ext.h's benchmarks, as the C preprocessor spells them."""
    probe = ('#include "ext.h"\n#define N(ID, NAME, GROUP, FLAGS) NAME |\n'
             'EXT_NAMES ARENA_EXT_BENCHES(N)\n')
    out = subprocess.run(["gcc", "-E", "-P", "-xc", "-"], input=probe, capture_output=True,
                         text=True, cwd=KERNELS, check=True).stdout
    names = out.split("EXT_NAMES", 1)[1]  # (ext.h's own strings come before)
    return ["".join(re.findall(r'"([^"]*)"', n)) for n in names.split("|") if '"' in n]


def test_the_cell_command_sends_every_request_field_as_a_key_the_core_parses():
    asked = CellRequest(Cell("bibw", 4096, 2), timing="window", observations=7, target_time=2e-3,
                        max_time=5.0, window=16, hold_time=0.5, offcache=True, validate=True)
    line = cell_command(asked, 12, calibrated=300)
    assert line == ("cell id=12 bench=bibw size=4096 obs=7 target=0.002 max=5.0 window=16 "
                    "offcache=1 validate=1 hold=0.5 sync=window k=300\n")
    parse = re.search(r"int arena_parse_cmd\(.*?\n\}", SOURCES["commands.c"], re.S)
    assert parse is not None
    parsed = set(re.findall(r'strcmp\(tok, "(\w+)"\)', parse.group(0))) - {"quit", "config",
                                                                           "cell"}
    sent = {word.split("=")[0] for word in line.split()[1:]}
    assert sent == parsed
    # every field of the request is sent, its cell as bench and size (np is the job's)
    assert len(sent - {"id", "k"}) == len(fields(CellRequest)) + 1


def test_ext_benchmarks_keep_their_order_and_group_on_both_sides():
    ext = [b.name for b in BENCHMARKS.values() if b.group]
    assert ext_names() == ext
    assert len(ext) == 77
