"""Every run is written through one lifecycle (Store.new_run, Store.reopened): running while it
is written, complete only once its writer finished. Without MPI: imported OSU output."""

from __future__ import annotations

from pathlib import Path

import pytest

from mpiarena.base.errors import ArenaError
from mpiarena.base.records import ImplementationRecord
from mpiarena.base.status import RunStatus
from mpiarena.imports import read
from mpiarena.imports.ingest import ImportAsk, ingest
from mpiarena.imports.records import Choices
from mpiarena.store import CellRow, Obs, Store

OSU = Path(__file__).parent / "suite-output" / "osu-5.3" / "osu_latency.out"


def _asked(impl_id: str) -> ImportAsk:
    family, version = impl_id.split("-")
    impl = ImplementationRecord(run_id=0, impl_id=impl_id, family=family, version=version,
                                version_string=impl_id, origin="imported", prefix=None,
                                wrapper="", launcher="", wrapper_flags="", cflags="")
    return ImportAsk("osu", [read("osu", OSU, Choices())], impl)


def _variants(store: Store, run_id: int) -> set[str]:
    return {c.variant for c in store.cells(run_id)}


def test_an_import_into_a_run_ends_it_complete_again(tmp_path: Path):
    store = Store(tmp_path / "s.db")
    run_id = ingest(store, _asked("mpich-4.0.2"), "import", {}).run_id
    ingest(store, _asked("openmpi-4.1.4"), "import --into", {}, into=run_id)
    run = store.run(run_id)
    assert store.status(run) == RunStatus.COMPLETE and run.note is None
    assert _variants(store, run_id) == {"mpich-4.0.2", "openmpi-4.1.4"}


def half_an_import(where: str | Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A library imported into a run of `where` fails after its first cell: the run holds
    that cell, and says it is incomplete and why (tests/test_store_postgres.py: on a server)."""
    store = Store(where)
    run_id = ingest(store, _asked("mpich-4.0.2"), "import", {}).run_id
    whole = len(store.cells(run_id))
    add_cell, added = Store.add_cell, []

    def add_one_cell_then_fail(self: Store, row: CellRow, observations: list[Obs]) -> int:
        if added:
            raise OSError("disk full")
        added.append(row)
        return add_cell(self, row, observations)

    monkeypatch.setattr(Store, "add_cell", add_one_cell_then_fail)
    with pytest.raises(OSError, match="disk full"):
        ingest(store, _asked("openmpi-4.1.4"), "import --into", {}, into=run_id)
    run = Store(where).run(run_id)
    assert len(store.cells(run_id)) == whole + 1
    assert run.status == RunStatus.INCOMPLETE
    assert run.note == "crashed: OSError: disk full"


def test_an_import_into_a_run_that_fails_half_way_leaves_no_complete_run_with_half_a_library(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    half_an_import(tmp_path / "s.db", monkeypatch)


def test_an_import_into_a_run_still_running_is_refused(tmp_path: Path):
    store = Store(tmp_path / "s.db")
    run_id = ingest(store, _asked("mpich-4.0.2"), "import", {}).run_id
    with store.reopened(run_id), pytest.raises(ArenaError, match="still running"):
        ingest(store, _asked("openmpi-4.1.4"), "import --into", {}, into=run_id)
