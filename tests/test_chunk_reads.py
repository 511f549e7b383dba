"""A stored chunk is addressed by its project: a search's hits and a re-embedded vector go by
the chunk's key (project, seq) and never reach another project's chunk, a document's chunks
are read within its project, and on PostgreSQL each goes by an index that begins with the
project, so it costs the same however many chunks other projects hold, and on a table that
has not been analysed yet."""

from __future__ import annotations

from typing import Any

import numpy as np
import psycopg
import pytest

from conftest import Api
from naturali.ports.storage import NewVector
from naturali.storage.postgres.catalog import CHUNKS_BY_SEQ, OWNER_CHUNKS, VECTOR_BY_SEQ
from postgres import PostgresServer


def _seqs(api: Api, project_id: str) -> list[int]:
    with api.naturali.indexes.synced(project_id) as index:
        return [int(s) for s in index.seqs[: index.n]]


def _two_projects(api: Api) -> dict[str, list[int]]:
    a, b = api.project("a"), api.project("b")
    for project, text in ((a, b"Refunds take five days."), (b, b"Parcels ship in two days.")):
        assert api.upload(project, "/note.md", text, "note.md").status_code == 201
    seqs = {p: _seqs(api, p) for p in (a, b)}
    assert all(seqs.values())
    return seqs


def test_a_projects_chunks_are_read_within_that_project_only(api: Api) -> None:
    seqs = _two_projects(api)
    a, b = seqs

    found = api.naturali.storage.get_chunks(a, seqs[a] + seqs[b])

    assert sorted(found) == sorted(seqs[a])
    assert {c.project_id for c in found.values()} == {a}
    assert api.naturali.storage.get_chunks(b, seqs[a]) == {}
    owners = [c.owner_id for c in found.values()]
    assert api.naturali.storage.owner_chunks(b, "document", owners) == []
    assert len(api.naturali.storage.owner_chunks(a, "document", owners)) == len(seqs[a])


def test_a_vector_is_written_to_its_own_projects_chunk_only(api: Api) -> None:
    seqs = _two_projects(api)
    a, b = seqs
    storage = api.naturali.storage
    before = {c.seq: c.vector for c in storage.stale_chunks("no such model", 10)}
    other = np.ones(384, np.float32).tobytes()

    # b's key with a's seq: no chunk has it, so nothing changes.
    storage.set_vectors([NewVector(b, seqs[a][0], other)], "another model")

    after = {c.seq: c.vector for c in storage.stale_chunks("no such model", 10)}
    assert after == before
    assert storage.stale_chunks(api.naturali.embedder().model_id, 10) == []


def _index_scans(plan: dict[str, Any]) -> list[dict[str, Any]]:
    scans = [plan] if "Index Name" in plan else []
    for child in plan.get("Plans", []):
        scans += _index_scans(child)
    return scans


@pytest.mark.parametrize(
    ("statement", "args"),
    [
        (CHUNKS_BY_SEQ, ("proj_x", [1, 2, 3])),
        (VECTOR_BY_SEQ, ("[" + ",".join(["0"] * 384) + "]", "m", "proj_x", 1)),
        (OWNER_CHUNKS, ("proj_x", "document", ["doc_x"])),
    ],
    ids=["hits", "re-embedding", "a document's chunks"],
)
def test_chunks_are_found_by_their_key_on_postgresql(
    postgres: PostgresServer, statement: str, args: tuple[Any, ...]
) -> None:
    # A fresh database has never been analysed: without the project in the condition the
    # planner read every chunk (a parallel sequential scan, ~20 ms at 108k chunks).
    url = postgres.new_database()
    try:
        with psycopg.connect(url) as conn:
            row = conn.execute(("EXPLAIN (FORMAT JSON) " + statement).encode(), args).fetchone()
        assert row is not None
        scans = _index_scans(row[0][0]["Plan"])
        # One index descent by the project (the primary key, or the owners' index that also
        # begins with it), never a scan of every project's chunks.
        assert len(scans) == 1, row[0]
        assert "(project_id = " in scans[0]["Index Cond"], scans[0]
    finally:
        postgres.drop(url)
