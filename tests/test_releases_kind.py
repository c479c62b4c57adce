"""A run of `mpiarena releases` is a kind of its own: its record names the series' releases it
measured, written and read back as the same class; an older store's releases run gets the kind."""

from __future__ import annotations

import json
import sqlite3

from conftest import stored_run

from mpiarena.base.records import RunKind
from mpiarena.model.runs import ReleasesSettings, kind_of, settings_of
from mpiarena.store import Store

STEP = ReleasesSettings(benchmarks=("allreduce",), sizes=(8,), nps=(2,),
                        releases=("mpich-4.0.2", "mpich-5.0.2"), bisection_step=1)
SEPARATED = ReleasesSettings(benchmarks=("allreduce",), sizes=(8,), nps=(2,),
                             releases=("4.0.2", "5.0.2"), build_levers=("ch4 tcp",))


def test_a_releases_run_names_its_series_and_reads_back_as_written(tmp_path):
    store = Store(tmp_path / "s.db")
    for written in (STEP, SEPARATED):
        assert ReleasesSettings.read(json.loads(json.dumps(written.stored()))) == written
        run = store.run(stored_run(store, "quick", written, kind=RunKind.RELEASES))
        assert run.kind == RunKind.RELEASES and settings_of(run) == written


def test_an_older_releases_run_gets_its_kind(tmp_path):
    assert kind_of("quick", {"releases": ["a", "b"], "bisection_step": 2}) == RunKind.RELEASES
    path = tmp_path / "v11.db"
    Store(path).close()
    with sqlite3.connect(path) as db:
        db.execute("ALTER TABLE runs DROP COLUMN kind")
        db.execute("INSERT INTO runs (started, status, suite, command, seed, version, machine, "
                   "settings, pid, host) VALUES ('', 'complete', 'quick', '', 0, '', '{}', ?, 0, "
                   "'')", (json.dumps({"releases": ["a", "b"], "bisection_step": 1}),))
        db.execute("UPDATE meta SET value='11' WHERE key='schema_version'")
    (run, _), = Store(path).runs()
    assert run.kind == RunKind.RELEASES
    assert settings_of(run) == ReleasesSettings(releases=("a", "b"), bisection_step=1)
