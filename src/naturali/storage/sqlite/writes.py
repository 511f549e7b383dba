"""The statements a catalog write is made of, inside the caller's transaction."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import cast

from naturali.model import Document, SourceType
from naturali.ports.storage import DocumentPathTaken, EmbeddedChunk, VersionConflict
from naturali.storage.rows import (
    CHUNK_COLUMNS,
    VERSION_COLUMNS,
    ChunkOwner,
    chunk_rows,
    document_fields,
    version_row,
)
from naturali.storage.sql import Writer


def insert_document(conn: sqlite3.Connection, d: Document) -> None:
    conn.execute(
        "INSERT INTO documents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (d.id, d.project_id, *document_fields(d), d.version, d.created_at, d.updated_at),
    )


def update_document(conn: sqlite3.Connection, d: Document) -> None:
    """Fenced by the version the new one was built on: a concurrent writer that got there
    first makes this a conflict, not a lost update. The old version's chunks go."""
    updated = conn.execute(
        "UPDATE documents SET path = ?, title = ?, metadata = ?, tags = ?, "
        "version = ?, updated_at = ? WHERE id = ? AND version = ?",
        (*document_fields(d), d.version, d.updated_at, d.id, d.version - 1),
    ).rowcount
    if updated != 1:
        raise VersionConflict(d.id)
    conn.execute("DELETE FROM chunks WHERE source_type = 'document' AND owner_id = ?", (d.id,))


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
    conn = cast(sqlite3.Connection, writer)
    try:
        if create:
            insert_document(conn, d)
        else:
            update_document(conn, d)
    except sqlite3.IntegrityError as exc:
        raise DocumentPathTaken(d.path) from exc
    conn.execute(
        f"INSERT INTO document_versions ({VERSION_COLUMNS}) VALUES ({_marks(12)})",
        version_row(d),
    )
    owner = ChunkOwner(d.project_id, SourceType.DOCUMENT, d.id, d.version)
    insert_chunks(conn, owner, chunks, model_id)
    conn.execute("DELETE FROM ingest_jobs WHERE document_id = ?", (d.id,))  # the newest wins


def insert_chunks(
    conn: sqlite3.Connection, owner: ChunkOwner, chunks: Sequence[EmbeddedChunk], model_id: str
) -> None:
    rows = chunk_rows(owner, chunks, model_id, bytes)
    conn.executemany(f"INSERT INTO chunks ({CHUNK_COLUMNS}) VALUES ({_marks(13)})", rows)


def _marks(n: int) -> str:
    return ", ".join("?" * n)
