"""The PostgreSQL catalog adapter: what ``storage/sqlite/catalog.py`` does, on a database
several servers share. Chunk positions (``seq``) and removals are written under a per-project
advisory lock, so within a project they are ordered as the transactions commit and each
server's index can follow them with two cursors, as it does on SQLite."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np

from naturali.model import Chunk, Document, Memory, SourceType
from naturali.ports.storage import ChunkChanges, EmbeddedChunk, NewVector, memory_owner
from naturali.storage import rows as mapping
from naturali.storage.audit import Audit
from naturali.storage.documents import Documents
from naturali.storage.jobs import IngestJobs
from naturali.storage.memory_stores import MemoryStores
from naturali.storage.overview import Overview
from naturali.storage.people import People
from naturali.storage.postgres.connection import Database, raw
from naturali.storage.postgres.vectors import PostgresVectorSearch
from naturali.storage.postgres.writes import (
    delete_memory,
    insert_chunks,
    lock_chunks,
    lock_members,
    write_version,
)
from naturali.storage.rows import ChunkOwner
from naturali.storage.sources import Sources
from naturali.storage.sql import Writer
from naturali.storage.tokens import Tokens

# Whether a project's chunks changed since the cursors: the newest seq of each table, read
# from the end of its (project_id, seq) primary key. (EXISTS over ``seq > cursor`` took
# PostgreSQL ~19 ms at 108k chunks: it chose a sequential scan.)
ANY_CHUNK_CHANGE = (
    "SELECT COALESCE((SELECT MAX(seq) FROM chunks WHERE project_id = %s), 0) > %s "
    "OR COALESCE((SELECT MAX(seq) FROM chunk_removals WHERE project_id = %s), 0) > %s AS changed"
)
# Both by the primary key (project_id, seq). seq alone is no index's first column: without the
# project, PostgreSQL 18 can only skip-scan every project's part of the key (16 has no skip
# scan), and on a table not yet analysed (after a bulk load, until autovacuum's ANALYZE) the
# planner read every chunk: ~20 ms at 108k chunks.
CHUNKS_BY_SEQ = (
    f"SELECT {mapping.CHUNK_TEXT_COLUMNS} FROM chunks WHERE project_id = %s AND seq = ANY(%s)"
)
VECTOR_BY_SEQ = "UPDATE chunks SET vector = %s, model = %s WHERE project_id = %s AND seq = %s"
# By the owners' index, which begins with the project too.
OWNER_CHUNKS = (
    "SELECT * FROM chunks WHERE project_id = %s AND source_type = %s AND owner_id = ANY(%s) "
    "ORDER BY owner_id, ordinal"
)
# Vectors another model made, by two ranges of the model's index (a planner reads none for
# <>), in no particular order: each batch re-embedded leaves them.
# Only projects on the server's model: one that chose its own is made again by its own.
STALE_CHUNKS = (
    "SELECT * FROM chunks c WHERE (model < %s OR model > %s) AND NOT EXISTS (SELECT 1 FROM "
    "projects p WHERE p.project_id = c.project_id AND p.embedding_model IS NOT NULL) LIMIT %s"
)


class PostgresStorage(
    IngestJobs, People, MemoryStores, Documents, Overview, Tokens, Audit, Sources
):
    db: Database

    def __init__(self, url: str) -> None:
        self.db = Database(url)

    write_version = staticmethod(write_version)  # storage/jobs.py and documents.py call it

    def close(self) -> None:
        self.db.close()

    def vector_search(self) -> PostgresVectorSearch:
        return PostgresVectorSearch(self.db)

    @contextmanager
    def project_lock(self, project_id: str) -> Iterator[None]:
        # A session advisory lock on a connection of its own, held for the whole step.
        key = b"SELECT pg_advisory_lock(hashtextextended(%s, 0))"
        with self.db.pool.connection() as conn:
            conn.execute(key, (f"project:{project_id}",))
            try:
                yield
            finally:
                conn.execute(
                    b"SELECT pg_advisory_unlock(hashtextextended(%s, 0))",
                    (f"project:{project_id}",),
                )

    # projects and members (storage/people.py) -----------------------------------------------
    def lock_members(self, conn: Writer, project_id: str) -> None:
        lock_members(raw(conn), project_id)

    # documents ------------------------------------------------------------------------------
    def get_document(self, project_id: str, document_id: str) -> Document | None:
        row = self.db.one(
            self.doc_select + " WHERE d.project_id = %s AND d.id = %s", project_id, document_id
        )
        return mapping.document(row) if row else None

    def get_documents(self, project_id: str, ids: Sequence[str]) -> dict[str, Document]:
        rows = self.db.all(
            self.doc_select + " WHERE d.project_id = %s AND d.id = ANY(%s)", project_id, list(ids)
        )
        return {r["id"]: mapping.document(r) for r in rows}

    def delete_document(self, project_id: str, document_id: str) -> None:
        with self.db.transaction() as conn:
            lock_chunks(conn, project_id)
            conn.execute(
                b"DELETE FROM chunks WHERE project_id = %s AND source_type = 'document' "
                b"AND owner_id = %s",
                (project_id, document_id),
            )
            conn.execute(
                b"DELETE FROM document_versions WHERE project_id = %s AND document_id = %s",
                (project_id, document_id),
            )
            conn.execute(
                b"DELETE FROM ingest_jobs WHERE project_id = %s AND document_id = %s",
                (project_id, document_id),
            )
            conn.execute(
                b"DELETE FROM documents WHERE project_id = %s AND id = %s",
                (project_id, document_id),
            )

    # memories (their stores: storage/memory_stores.py) -------------------------------------
    def delete_memory_store(self, project_id: str, store_id: str) -> None:
        with self.db.transaction() as conn:
            lock_chunks(conn, project_id)
            conn.execute(
                b"DELETE FROM chunks WHERE project_id = %s AND source_type = 'memory' "
                b"AND left(owner_id, %s) = %s",
                (project_id, len(store_id) + 1, store_id + "/"),
            )
            conn.execute(
                b"DELETE FROM memories WHERE project_id = %s AND memory_store_id = %s",
                (project_id, store_id),
            )
            conn.execute(
                b"DELETE FROM memory_stores WHERE project_id = %s AND id = %s",
                (project_id, store_id),
            )

    def get_store_memories(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], Memory]:
        if not keys:
            return {}
        rows = self.db.all(
            "SELECT m.* FROM memories m JOIN unnest(%s::text[], %s::text[]) AS k(s, i) "
            "ON m.memory_store_id = k.s AND m.id = k.i",
            [k[0] for k in keys],
            [k[1] for k in keys],
        )
        return {(r["memory_store_id"], r["id"]): mapping.memory(r) for r in rows}

    def replace_memory(
        self, memory: Memory, path: str, chunks: Sequence[EmbeddedChunk], model_id: str
    ) -> None:
        m = memory
        with self.db.transaction() as conn:
            lock_chunks(conn, m.project_id)
            delete_memory(conn, m.project_id, m.memory_store_id, m.id)
            insert = f"INSERT INTO memories ({mapping.MEMORY_COLUMNS}) VALUES ({_marks(11)})"
            conn.execute(insert.encode(), mapping.memory_row(m, path))
            owner = memory_owner(m.memory_store_id, m.id)
            insert_chunks(
                conn,
                ChunkOwner(m.project_id, SourceType.MEMORY, owner, m.revision),
                chunks,
                model_id,
            )

    def remove_memory(self, store_id: str, memory_id: str) -> None:
        row = self.db.one("SELECT project_id FROM memory_stores WHERE id = %s", store_id)
        if row is None:
            return
        with self.db.transaction() as conn:
            lock_chunks(conn, row["project_id"])
            delete_memory(conn, row["project_id"], store_id, memory_id)

    # chunks -----------------------------------------------------------------------------------
    def _any_change(self, project_id: str, chunk_cursor: int, removal_cursor: int) -> bool:
        row = self.db.one(ANY_CHUNK_CHANGE, project_id, chunk_cursor, project_id, removal_cursor)
        return row is None or bool(row["changed"])

    def chunk_changes(
        self, project_id: str, chunk_cursor: int, removal_cursor: int
    ) -> ChunkChanges:
        # Most searches find nothing new: one statement (one round trip) answers that.
        if not self._any_change(project_id, chunk_cursor, removal_cursor):
            return ChunkChanges([], [], chunk_cursor, removal_cursor)
        # One snapshot, so additions and removals describe the same moment.
        with self.db.connection() as conn, conn.transaction():
            conn.execute(b"SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            added = [
                mapping.chunk(r)
                for r in conn.execute(
                    b"SELECT * FROM chunks WHERE project_id = %s AND seq > %s ORDER BY seq",
                    (project_id, chunk_cursor),
                    binary=True,
                )
            ]
            removed = conn.execute(
                b"SELECT seq, chunk_seq FROM chunk_removals WHERE project_id = %s "
                b"AND seq > %s ORDER BY seq",
                (project_id, removal_cursor),
            ).fetchall()
        return ChunkChanges(
            added=added,
            removed=[int(r["chunk_seq"]) for r in removed],
            chunk_cursor=added[-1].seq if added else chunk_cursor,
            removal_cursor=int(removed[-1]["seq"]) if removed else removal_cursor,
        )

    def get_chunks(self, project_id: str, seqs: Sequence[int]) -> dict[int, Chunk]:
        rows = self.db.all(CHUNKS_BY_SEQ, project_id, list(seqs))
        return {int(r["seq"]): mapping.chunk(r, with_vector=False) for r in rows}

    def stale_chunks(self, model_id: str, limit: int) -> list[Chunk]:
        rows = self.db.all(
            STALE_CHUNKS,
            model_id,
            model_id,
            limit,
            binary=True,
        )
        return [mapping.chunk(r) for r in rows]

    def set_vectors(self, vectors: Sequence[NewVector], model_id: str) -> None:
        with self.db.transaction() as conn, conn.cursor() as cursor:
            cursor.executemany(
                VECTOR_BY_SEQ.encode(),
                [
                    (np.frombuffer(v.vector, dtype=np.float32), model_id, v.project_id, v.seq)
                    for v in vectors
                ],
            )

    def owner_chunks(
        self, project_id: str, source_type: SourceType, owner_ids: Sequence[str]
    ) -> list[Chunk]:
        rows = self.db.all(OWNER_CHUNKS, project_id, str(source_type), list(owner_ids), binary=True)
        return [mapping.chunk(r) for r in rows]


def _marks(n: int) -> str:
    return ", ".join(["%s"] * n)
