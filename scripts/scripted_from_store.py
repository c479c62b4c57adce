"""Write a scripted library (docs/scripted.md) that replays one library's observations from a
real run: each cell's figure per launch, reduced over ranks as the analysis reduces it.

Usage: python scripts/scripted_from_store.py DB RUN VARIANT BENCH,... SIZE,... > NAME.toml
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

from mpiarena.base.status import CellStatus
from mpiarena.model.benchmarks import BENCHMARKS
from mpiarena.store import Store


def main(db: str, run: str, variant: str, benches: str, sizes: str) -> None:
    store = Store(Path(db))
    run_id = store.resolve(run)
    observations = store.observations(run_id)
    wanted = {(b, int(s)) for b in benches.split(",") for s in sizes.split(",")}
    seconds: dict[tuple[str, int], list[float]] = defaultdict(list)
    for cell in sorted(store.cells(run_id), key=lambda c: c.seq):
        if cell.variant == variant and (cell.bench, cell.size) in wanted and \
                cell.status == CellStatus.OK:
            for per_rank in observations.get(cell.id, []):
                seconds[(cell.bench, cell.size)].append(
                    BENCHMARKS[cell.bench].observation(per_rank, {}))
    versions = {i.impl_id: i.version_string for i in store.implementations(run_id)}
    print(f"# {variant} in run {run_id} of {db}: scripts/scripted_from_store.py")
    print(f"version = {json.dumps(versions.get(variant, variant).splitlines()[0])}")
    for (bench, size), values in sorted(seconds.items()):
        print(f"\n[[recorded]]\nbench = {json.dumps(bench)}\nsize = {size}")
        print("seconds = [" + ", ".join(f"{v:.4e}" for v in values) + "]")


if __name__ == "__main__":
    main(*sys.argv[1:6])
