"""Exports of one run: every observation of every rank, as CSV or JSON."""

from __future__ import annotations

import csv
import io
import json

from ..store import Store

COLUMNS = ["run", "variant", "impl", "bench", "size", "np", "status", "iterations", "obs", "rank",
           "seconds"]


def _rows(store: Store, run_id: int):
    impl_of = {v["variant"]: v["impl_id"] for v in store.variants(run_id)}
    obs = store.observations(run_id)
    for cell in store.cells(run_id):
        for index, per_rank in enumerate(obs.get(cell["id"], [])):
            for rank, t in enumerate(per_rank):
                yield [run_id, cell["variant"], impl_of.get(cell["variant"], ""), cell["bench"],
                       cell["size"], cell["np"], cell["status"], cell["iterations"], index, rank,
                       t]


def to_csv(store: Store, run_id: int) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(COLUMNS)
    writer.writerows(_rows(store, run_id))
    return out.getvalue()


def to_json(store: Store, run_id: int) -> str:
    run = dict(store.run(run_id))
    run["machine"] = json.loads(run["machine"])
    run["settings"] = json.loads(run["settings"])
    run["status"] = store.status(store.run(run_id))
    obs = store.observations(run_id)
    doc = {
        "run": run,
        "implementations": [dict(r) for r in store.implementations(run_id)],
        "variants": [dict(r) | {"env": json.loads(r["env"]), "args": json.loads(r["args"])}
                     for r in store.variants(run_id)],
        "jobs": [dict(j) | {"ranks": json.loads(j["ranks"]), "command": json.loads(j["command"])}
                 for j in store.jobs(run_id)],
        "cells": [dict(c) | {"observations": obs.get(c["id"], [])}
                  for c in store.cells(run_id)],
    }
    return json.dumps(doc, indent=1)
