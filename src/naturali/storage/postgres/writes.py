"""The statements a catalog write is made of, inside the caller's transaction."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg
from psycopg import errors

from naturali.model import Document, SourceType
from naturali.ports.storage import (
    DocumentPathTaken,
    EmbeddedChunk,
    VersionConflict,
    memory_owner,
)
from naturali.storage.postgres.connection import raw
from naturali.storage.rows import (
    CHUNK_COLUMNS,
    VERSION_COLUMNS,
    ChunkOwner,
    chunk_rows,
    document_fields,
    version_row,
)
from naturali.storage.sql import Writer

Connection = psycopg.Connection[dict[str, Any]]


def lock_chunks(conn: Connection, project_id: str) -> None:
    """Serialise a project's chunk writers until commit: seqs then commit in order."""
    conn.execute(b"SELECT pg_advisory_xact_lock(hashtextextended(%s, 1))", (project_id,))


def lock_members(conn: Connection, project_id: str) -> None:
    """Membership changes of one project one at a time, so two owners removing each other at
    once cannot both succeed: the second sees the first's change and rolls back."""
    conn.execute(b"SELECT pg_advisory_xact_lock(hashtextextended(%s, 2))", (project_id,))


def write_version(
    writer: Writer,
    d: Document,
    chunks: Sequence[EmbeddedChunk],
    model_id: str,
    *,
    create: bool,
) -> None:
    """A new document, or its next version fenced by the one before, with its chunks, in a
    ``writing`` transaction."""
    conn = raw(writer)
    lock_chunks(conn, d.project_id)
    try:
        if create:
            insert_document(conn, d)
        else:
            update_document(conn, d)
    except errors.UniqueViolation as exc:  # the caller's transaction rolls back
        raise DocumentPathTaken(d.path) from exc
    insert_version(conn, d)
    owner = ChunkOwner(d.project_id, SourceType.DOCUMENT, d.id, d.version)
    insert_chunks(conn, owner, chunks, model_id)
    conn.execute(  # the newest upload wins over any job still waiting
        b"DELETE FROM ingest_jobs WHERE project_id = %s AND document_id = %s", (d.project_id, d.id)
    )


def insert_document(conn: Connection, d: Document) -> None:
    conn.execute(
        b"INSERT INTO documents VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (d.project_id, d.id, *document_fields(d), d.version, d.created_at, d.updated_at),
    )


def update_document(conn: Connection, d: Document) -> None:
    """Fenced by the version the new one was built on; the old version's chunks go."""
    updated = conn.execute(
        b"UPDATE documents SET path = %s, title = %s, metadata = %s, tags = %s, version = %s, "
        b"updated_at = %s WHERE project_id = %s AND id = %s AND version = %s",
        (*document_fields(d), d.version, d.updated_at, d.project_id, d.id, d.version - 1),
    ).rowcount
    if updated != 1:
        raise VersionConflict(d.id)
    conn.execute(
        b"DELETE FROM chunks WHERE project_id = %s AND source_type = 'document' AND owner_id = %s",
        (d.project_id, d.id),
    )


def insert_version(conn: Connection, d: Document) -> None:
    conn.execute(
        f"INSERT INTO document_versions (project_id, {VERSION_COLUMNS}) "
        f"VALUES ({_marks(13)})".encode(),
        (d.project_id, *version_row(d)),
    )


def insert_chunks(
    conn: Connection, owner: ChunkOwner, chunks: Sequence[EmbeddedChunk], model_id: str
) -> None:
    rows = chunk_rows(owner, chunks, model_id, _vector)
    with conn.cursor() as cursor:
        cursor.executemany(
            f"INSERT INTO chunks ({CHUNK_COLUMNS}) VALUES ({_marks(13)})".encode(), rows
        )


def _vector(data: bytes) -> Any:
    return np.frombuffer(data, dtype=np.float32)


def _marks(n: int) -> str:
    return ", ".join(["%s"] * n)


def delete_memory(conn: Connection, project_id: str, store_id: str, memory_id: str) -> None:
    conn.execute(
        b"DELETE FROM chunks WHERE project_id = %s AND source_type = 'memory' AND owner_id = %s",
        (project_id, memory_owner(store_id, memory_id)),
    )
    conn.execute(
        b"DELETE FROM memories WHERE project_id = %s AND memory_store_id = %s AND id = %s",
        (project_id, store_id, memory_id),
    )
