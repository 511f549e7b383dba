"""The SQLite catalog adapter: the only place that speaks SQL (with ``migrations``)."""

from __future__ import annotations

import fcntl
import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from naturali.model import Chunk, Document, Memory, SourceType
from naturali.ports.storage import ChunkChanges, EmbeddedChunk, NewVector, memory_owner
from naturali.storage import rows as mapping
from naturali.storage.audit import Audit
from naturali.storage.documents import Documents
from naturali.storage.jobs import IngestJobs
from naturali.storage.memory_stores import MemoryStores
from naturali.storage.overview import Overview
from naturali.storage.people import People
from naturali.storage.rows import ChunkOwner
from naturali.storage.sources import Sources
from naturali.storage.sql import Writer
from naturali.storage.sqlite.connection import Database
from naturali.storage.sqlite.migrations import migrate
from naturali.storage.sqlite.writes import insert_chunks, write_version
from naturali.storage.tokens import Tokens

_MAX_VARS = 900  # stay under SQLite's bound-parameter limit
# Whether a project's chunks changed since the cursors: the newest seq of each table, read
# from the end of its (project_id, seq) index (the PostgreSQL adapter's check, in SQLite).
ANY_CHUNK_CHANGE = (
    "SELECT COALESCE((SELECT MAX(seq) FROM chunks WHERE project_id = ?), 0) > ? "
    "OR COALESCE((SELECT MAX(seq) FROM chunk_removals WHERE project_id = ?), 0) > ?"
)

# Vectors another model made (Services.reembed), by two ranges of the model's index (a
# planner reads none for !=), in no particular order: each batch re-embedded leaves them.
# Only projects on the server's model: one that chose its own is made again by its own.
STALE_CHUNKS = (
    "SELECT * FROM chunks c WHERE (model < ? OR model > ?) AND NOT EXISTS "
    "(SELECT 1 FROM projects p WHERE p.id = c.project_id AND p.embedding_model IS NOT NULL) "
    "LIMIT ?"
)


def _placeholders(n: int) -> str:
    return ",".join("?" * n)


def _batches(items: Sequence[Any]) -> list[Sequence[Any]]:
    return [items[i : i + _MAX_VARS] for i in range(0, len(items), _MAX_VARS)]


class SqliteStorage(IngestJobs, People, MemoryStores, Documents, Overview, Tokens, Audit, Sources):
    db: Database

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = Database(path)
        self._locks = path.parent / "locks"
        migrate(self.db.conn(), path.with_suffix(".lock"))

    @contextmanager
    def project_lock(self, project_id: str) -> Iterator[None]:
        # A file lock: every thread and process on the data dir opens its own descriptor.
        self._locks.mkdir(mode=0o700, exist_ok=True)
        fd = os.open(self._locks / f"{project_id}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    write_version = staticmethod(write_version)  # storage/jobs.py and documents.py call it

    def close(self) -> None:
        self.db.close()

    def vector_search(self) -> None:
        return None  # the server's memory answers the vector leg (retrieval/vector_leg/)

    # projects and members (storage/people.py) -----------------------------------------------
    def lock_members(self, conn: Writer, project_id: str) -> None:
        """Nothing: SQLite's one writer holds the whole database."""

    # documents ------------------------------------------------------------------------------
    def get_document(self, project_id: str, document_id: str) -> Document | None:
        row = self.db.row(
            self.doc_select + " WHERE d.id = ? AND +d.project_id = ?", document_id, project_id
        )
        return mapping.document(row) if row else None

    def get_documents(self, project_id: str, ids: Sequence[str]) -> dict[str, Document]:
        out: dict[str, Document] = {}
        for batch in _batches(list(ids)):
            # "+d.project_id": look documents up by primary key, not by the (project, path)
            # index, which would scan every document of the project.
            sql = (
                self.doc_select
                + f" WHERE d.id IN ({_placeholders(len(batch))}) AND +d.project_id = ?"
            )
            for row in self.db.rows(sql, *batch, project_id):
                out[row["id"]] = mapping.document(row)
        return out

    def delete_document(self, project_id: str, document_id: str) -> None:
        with self.db.write() as conn:
            conn.execute(
                "DELETE FROM chunks WHERE source_type = 'document' AND owner_id = ?", (document_id,)
            )
            conn.execute("DELETE FROM document_versions WHERE document_id = ?", (document_id,))
            conn.execute("DELETE FROM ingest_jobs WHERE document_id = ?", (document_id,))
            conn.execute(
                "DELETE FROM documents WHERE project_id = ? AND id = ?", (project_id, document_id)
            )

    # memories (their stores: storage/memory_stores.py) -------------------------------------
    def delete_memory_store(self, project_id: str, store_id: str) -> None:
        with self.db.write() as conn:
            conn.execute(
                "DELETE FROM chunks WHERE source_type = 'memory' AND substr(owner_id, 1, ?) = ?",
                (len(store_id) + 1, store_id + "/"),
            )
            conn.execute("DELETE FROM memories WHERE memory_store_id = ?", (store_id,))
            conn.execute(
                "DELETE FROM memory_stores WHERE project_id = ? AND id = ?", (project_id, store_id)
            )

    def get_store_memories(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], Memory]:
        out: dict[tuple[str, str], Memory] = {}
        for store_id, memory_id in keys:
            row = self.db.row(
                "SELECT * FROM memories WHERE memory_store_id = ? AND id = ?", store_id, memory_id
            )
            if row is not None:
                out[(store_id, memory_id)] = mapping.memory(row)
        return out

    def replace_memory(
        self,
        memory: Memory,
        path: str,
        chunks: Sequence[EmbeddedChunk],
        model_id: str,
    ) -> None:
        m = memory
        with self.db.write() as conn:
            self._delete_memory(conn, m.memory_store_id, m.id)
            conn.execute(
                f"INSERT INTO memories ({mapping.MEMORY_COLUMNS}) VALUES ({', '.join('?' * 11)})",
                mapping.memory_row(m, path),
            )
            owner = ChunkOwner(
                m.project_id, SourceType.MEMORY, memory_owner(m.memory_store_id, m.id), m.revision
            )
            insert_chunks(conn, owner, chunks, model_id)

    @staticmethod
    def _delete_memory(conn: sqlite3.Connection, store_id: str, memory_id: str) -> None:
        conn.execute(
            "DELETE FROM chunks WHERE source_type = 'memory' AND owner_id = ?",
            (memory_owner(store_id, memory_id),),
        )
        conn.execute(
            "DELETE FROM memories WHERE memory_store_id = ? AND id = ?", (store_id, memory_id)
        )

    def remove_memory(self, store_id: str, memory_id: str) -> None:
        with self.db.write() as conn:
            self._delete_memory(conn, store_id, memory_id)

    # chunks -----------------------------------------------------------------------------------
    def _any_change(self, project_id: str, chunk_cursor: int, removal_cursor: int) -> bool:
        row = self.db.row(ANY_CHUNK_CHANGE, project_id, chunk_cursor, project_id, removal_cursor)
        return row is None or bool(row[0])

    def chunk_changes(
        self, project_id: str, chunk_cursor: int, removal_cursor: int
    ) -> ChunkChanges:
        # Most searches find nothing new: one statement (one snapshot) answers that.
        if not self._any_change(project_id, chunk_cursor, removal_cursor):
            return ChunkChanges([], [], chunk_cursor, removal_cursor)
        conn = self.db.conn()
        # One read transaction, so additions and removals describe the same snapshot.
        conn.execute("BEGIN")
        try:
            added = [
                mapping.chunk(r)
                for r in conn.execute(
                    "SELECT * FROM chunks WHERE project_id = ? AND seq > ? ORDER BY seq",
                    (project_id, chunk_cursor),
                )
            ]
            removed_rows = conn.execute(
                "SELECT seq, chunk_seq FROM chunk_removals WHERE project_id = ? AND seq > ? "
                "ORDER BY seq",
                (project_id, removal_cursor),
            ).fetchall()
        finally:
            conn.execute("COMMIT")
        return ChunkChanges(
            added=added,
            removed=[r["chunk_seq"] for r in removed_rows],
            chunk_cursor=added[-1].seq if added else chunk_cursor,
            removal_cursor=removed_rows[-1]["seq"] if removed_rows else removal_cursor,
        )

    def get_chunks(self, project_id: str, seqs: Sequence[int]) -> dict[int, Chunk]:
        out: dict[int, Chunk] = {}
        for batch in _batches(list(seqs)):
            # "+project_id": by rowid (seq), the project checked on the rows found.
            sql = (
                f"SELECT {mapping.CHUNK_TEXT_COLUMNS} FROM chunks "
                f"WHERE seq IN ({_placeholders(len(batch))}) AND +project_id = ?"
            )
            for row in self.db.rows(sql, *batch, project_id):
                out[row["seq"]] = mapping.chunk(row, with_vector=False)
        return out

    def stale_chunks(self, model_id: str, limit: int) -> list[Chunk]:
        rows = self.db.rows(STALE_CHUNKS, model_id, model_id, limit)
        return [mapping.chunk(r) for r in rows]

    def set_vectors(self, vectors: Sequence[NewVector], model_id: str) -> None:
        with self.db.write() as conn:
            conn.executemany(
                "UPDATE chunks SET vector = ?, model = ? WHERE seq = ? AND +project_id = ?",
                [(v.vector, model_id, v.seq, v.project_id) for v in vectors],
            )

    def owner_chunks(
        self, project_id: str, source_type: SourceType, owner_ids: Sequence[str]
    ) -> list[Chunk]:
        out: list[Chunk] = []
        for batch in _batches(list(owner_ids)):
            sql = (
                "SELECT * FROM chunks WHERE source_type = ? "
                f"AND owner_id IN ({_placeholders(len(batch))}) AND +project_id = ? "
                "ORDER BY owner_id, ordinal"
            )
            rows = self.db.rows(sql, source_type, *batch, project_id)
            out.extend(mapping.chunk(r) for r in rows)
        return out
