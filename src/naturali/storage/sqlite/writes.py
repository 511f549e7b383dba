"""The statements a catalog write is made of, inside the caller's transaction."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from naturali.ids import new_id
from naturali.model import Document, SourceType
from naturali.ports.storage import DocumentPathTaken, EmbeddedChunk, VersionConflict
from naturali.storage.rows import document_fields


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
    conn: sqlite3.Connection,
    d: Document,
    chunks: Sequence[EmbeddedChunk],
    model_id: str,
    *,
    create: bool,
) -> None:
    """A new document, or its next version fenced by the one before, with its chunks."""
    try:
        if create:
            insert_document(conn, d)
        else:
            update_document(conn, d)
    except sqlite3.IntegrityError as exc:
        raise DocumentPathTaken(d.path) from exc
    conn.execute(
        "INSERT INTO document_versions (document_id, version, file_id, filename, size, "
        "content_type, content_hash, chunk_count, page_count, warnings, created_at, reading) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            d.id,
            d.version,
            d.file_id,
            d.filename,
            d.size,
            d.content_type,
            d.content_hash,
            d.chunk_count,
            d.page_count,
            json.dumps(d.warnings),
            d.updated_at,
            json.dumps(d.reading) if d.reading is not None else None,
        ),
    )
    insert_chunks(conn, d.project_id, SourceType.DOCUMENT, d.id, d.version, chunks, model_id)
    conn.execute("DELETE FROM ingest_jobs WHERE document_id = ?", (d.id,))  # the newest wins


def insert_chunks(
    conn: sqlite3.Connection,
    project_id: str,
    source_type: SourceType,
    owner_id: str,
    version: int,
    chunks: Sequence[EmbeddedChunk],
    model_id: str,
) -> None:
    conn.executemany(
        "INSERT INTO chunks (id, project_id, source_type, owner_id, version, ordinal, page, "
        "start_offset, end_offset, text, vector, model, context) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
        [
            (
                new_id("chunk"),
                project_id,
                source_type,
                owner_id,
                version,
                c.draft.ordinal,
                c.draft.page,
                c.draft.start,
                c.draft.end,
                c.draft.text,
                c.vector,
                model_id,
                c.draft.context,
            )
            for c in chunks
        ],
    )
