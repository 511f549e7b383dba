"""A search's hits are read by the chunk's key, (project, seq): never another project's chunk,
and on PostgreSQL by the primary key's first column, so the read costs the same however many
chunks other projects hold, and on a table that has not been analysed yet."""

from __future__ import annotations

from typing import Any

import psycopg

from conftest import Api
from postgres import PostgresServer
from naturali.storage.postgres.catalog import CHUNKS_BY_SEQ


def _seqs(api: Api, project_id: str) -> list[int]:
    with api.naturali.indexes.synced(project_id) as index:
        return [int(s) for s in index.seqs[: index.n]]


def test_a_projects_chunks_are_read_within_that_project_only(api: Api) -> None:
    a, b = api.project("a"), api.project("b")
    for project, text in ((a, b"Refunds take five days."), (b, b"Parcels ship in two days.")):
        assert api.upload(project, "/note.md", text, "note.md").status_code == 201
    seqs = {p: _seqs(api, p) for p in (a, b)}
    assert seqs[a] and seqs[b]

    found = api.naturali.storage.get_chunks(a, seqs[a] + seqs[b])

    assert sorted(found) == sorted(seqs[a])
    assert {c.project_id for c in found.values()} == {a}
    assert api.naturali.storage.get_chunks(b, seqs[a]) == {}


def _index_scans(plan: dict[str, Any]) -> list[dict[str, Any]]:
    scans = [plan] if "Index Name" in plan else []
    for child in plan.get("Plans", []):
        scans += _index_scans(child)
    return scans


def test_hits_are_read_by_the_chunk_key_on_postgresql(postgres: PostgresServer) -> None:
    # A fresh database has never been analysed: without the project in the condition the
    # planner scanned every chunk (a parallel sequential scan, ~20 ms at 108k chunks).
    url = postgres.new_database()
    try:
        with psycopg.connect(url) as conn:
            row = conn.execute(
                ("EXPLAIN (FORMAT JSON) " + CHUNKS_BY_SEQ).encode(), ("proj_x", [1, 2, 3])
            ).fetchone()
        assert row is not None
        scans = _index_scans(row[0][0]["Plan"])
        assert [s["Index Name"] for s in scans] == ["chunks_pkey"], row[0]
        assert "project_id" in scans[0]["Index Cond"], scans[0]
    finally:
        postgres.drop(url)
