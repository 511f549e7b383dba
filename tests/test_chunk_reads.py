"""A stored chunk is addressed by its project: a search's hits and a re-embedded vector go by
the chunk's key (project, seq) and never reach another project's chunk, a document's chunks
are read within its project, and on PostgreSQL each goes by an index that begins with the
project, so it costs the same however many chunks other projects hold, and on a table that
has not been analysed yet."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest

from conftest import Api
from naturali.ports.storage import NewVector
from naturali.storage.postgres import catalog as postgres_catalog
from naturali.storage.postgres.catalog import CHUNKS_BY_SEQ, OWNER_CHUNKS, VECTOR_BY_SEQ
from naturali.storage.sqlite import catalog as sqlite_catalog
from naturali.storage.sqlite.migrations import migrate
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


def test_vectors_another_model_made_are_found_by_the_models_index_on_sqlite(
    tmp_path: Path,
) -> None:
    """A start checks for them (Services.reembed): without the index that read every chunk,
    ~0.2 s at 108k chunks, to find none."""
    conn = sqlite3.connect(tmp_path / "catalog.sqlite")
    migrate(conn, tmp_path / "catalog.lock")
    plan = conn.execute("EXPLAIN QUERY PLAN " + sqlite_catalog.STALE_CHUNKS, ("m", "m", 256))
    reads = [row[3] for row in plan if row[3].startswith(("SCAN", "SEARCH"))]
    chunks = [read for read in reads if read.startswith(("SCAN c ", "SEARCH c "))]
    assert chunks and all("USING INDEX chunks_model" in read for read in chunks), reads
    # ... each one's project looked up by its key (a project that chose its own model is not
    # the server's to embed again)
    assert [r for r in reads if r not in chunks] == [
        "SEARCH p USING INDEX sqlite_autoindex_projects_1 (id=?)"
    ], reads


def test_vectors_another_model_made_are_found_by_the_models_index_on_postgresql(
    postgres: PostgresServer,
) -> None:
    """The statement can be read by the index (an empty table is read whole whatever the
    statement: here the planner is told not to, which it could not obey for ``<>``). With
    the table's statistics saying every chunk has the current model, it takes the index."""
    url = postgres.new_database()
    try:
        with psycopg.connect(url) as conn:
            conn.execute("SET enable_seqscan = off")
            statement = "EXPLAIN (FORMAT JSON) " + postgres_catalog.STALE_CHUNKS
            row = conn.execute(statement.encode(), ("m", "m", 256)).fetchone()
        assert row is not None
        scans = _index_scans(row[0][0]["Plan"])
        names = sorted(scan["Index Name"] for scan in scans)
        # The two ranges either side of the model, and the projects that chose their own
        # model (theirs are not the server's to embed again) by the projects' key.
        assert names == ["chunks_model", "chunks_model", "projects_pkey"], row[0]
    finally:
        postgres.drop(url)
