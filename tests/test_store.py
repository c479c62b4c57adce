import sqlite3

import pytest

from mpiarena.errors import ArenaError
from mpiarena.store import SCHEMA_VERSION, Obs, Store


def _run(store: Store) -> int:
    return store.begin_run("quick", "mpiarena run", 5, "0", {"cores": 2}, {"window": 64})


def test_cells_and_observations_round_trip(tmp_path):
    store = Store(tmp_path / "s.db")
    run = _run(store)
    cell = store.add_cell(run, None, "x-1", "pingpong", 8, 2, "ok", None, 100,
                          [Obs(0, [1e-6, 1.1e-6]), Obs(1, [2e-6, 2.1e-6])], 0)
    assert store.observations(run) == {cell: [[1e-6, 1.1e-6], [2e-6, 2.1e-6]]}
    assert store.resolve("latest") == run
    assert store.db.execute("SELECT value FROM meta").fetchone()[0] == str(SCHEMA_VERSION)


def test_a_run_whose_process_died_reads_as_incomplete(tmp_path):
    store = Store(tmp_path / "s.db")
    run = _run(store)
    assert store.status(store.run(run)) == "running"
    store.db.execute("UPDATE runs SET pid=999999999 WHERE id=?", (run,))
    assert store.status(store.run(run)) == "incomplete"


def test_unknown_run_and_foreign_file(tmp_path):
    store = Store(tmp_path / "s.db")
    with pytest.raises(ArenaError, match="holds no runs"):
        store.resolve("latest")
    with pytest.raises(ArenaError, match="no run '7'"):
        store.resolve("7")
    junk = tmp_path / "junk.db"
    junk.write_text("not sqlite at all " * 100)
    with pytest.raises(ArenaError, match="not a usable mpiarena store"):
        Store(junk)


def test_other_schema_version_is_refused(tmp_path):
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.executescript("CREATE TABLE meta (key TEXT, value TEXT);"
                     "INSERT INTO meta VALUES ('schema_version', '99');")
    db.commit()
    with pytest.raises(ArenaError, match="schema 99"):
        Store(path)


def _as_schema_2(path) -> None:
    """Make a closed store look as schema 2 wrote it: cells without launch and timing."""
    db = sqlite3.connect(path)
    db.executescript("ALTER TABLE cells DROP COLUMN launch; ALTER TABLE cells DROP COLUMN timing;"
                     "UPDATE meta SET value='2';")
    db.commit()
    db.close()


def test_a_schema_2_store_upgrades_in_place_with_each_cell_one_looped_launch(tmp_path):
    path = tmp_path / "v2.db"
    store = Store(path)
    run = _run(store)
    store.add_cell(run, None, "x-1", "pingpong", 8, 2, "ok", None, 100, [Obs(0, [1e-6, 1e-6])], 0)
    store.close()
    _as_schema_2(path)
    store = Store(path)
    assert store.db.execute("SELECT value FROM meta").fetchone()[0] == str(SCHEMA_VERSION)
    (cell,) = store.cells(run)
    assert (cell["launch"], cell["timing"]) == (0, "loop")


def test_a_store_from_before_launches_still_shows_and_compares(tmp_path):
    path = tmp_path / "v2.db"
    store = Store(path)
    run = _run(store)
    for variant, level in (("a-1", 1e-6), ("b-1", 3e-6)):
        store.add_variant(run, variant, variant, "default", {}, [], "auto")
        store.add_cell(run, None, variant, "pingpong", 8, 2, "ok", None, 100,
                       [Obs(i, [level * (1 + i / 100)] * 2) for i in range(20)], 0)
    store.close()
    _as_schema_2(path)
    from mpiarena.analysis import compare_runs
    from mpiarena.report.summary import analyse, verdict_text
    from mpiarena.results import load

    data = load(Store(path), run)
    (v,) = analyse(data).judged["pingpong", 8, 2]
    assert v.outcome == "undecided" and v.launches_fast == v.launches_slow == 1
    assert "the test on launches needs 4 per variant" in verdict_text("pingpong 8 B", v)
    assert {c.outcome for c in compare_runs(data, data)} == {"undecided"}
