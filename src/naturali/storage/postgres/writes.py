"""The statements a catalog write is made of, inside the caller's transaction."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg
from psycopg import errors

from naturali.ids import new_id
from naturali.model import Document, Member, SourceType
from naturali.ports.storage import (
    DocumentPathTaken,
    EmbeddedChunk,
    LastOwner,
    VersionConflict,
    memory_owner,
)
from naturali.storage.rows import document_fields

Connection = psycopg.Connection[dict[str, Any]]


def lock_chunks(conn: Connection, project_id: str) -> None:
    """Serialise a project's chunk writers until commit: seqs then commit in order."""
    conn.execute(b"SELECT pg_advisory_xact_lock(hashtextextended(%s, 1))", (project_id,))


def lock_members(conn: Connection, project_id: str) -> None:
    """Membership changes of one project one at a time, so two owners removing each other at
    once cannot both succeed: the second sees the first's change and rolls back."""
    conn.execute(b"SELECT pg_advisory_xact_lock(hashtextextended(%s, 2))", (project_id,))


def put_member(conn: Connection, m: Member) -> None:
    conn.execute(
        b"INSERT INTO members VALUES (%s, %s, %s, %s) ON CONFLICT (project_id, user_id) "
        b"DO UPDATE SET role = excluded.role",
        (m.project_id, m.user_id, m.role, m.created_at),
    )


def keep_an_owner(conn: Connection, project_id: str) -> None:
    row = conn.execute(
        b"SELECT count(*) AS n FROM members WHERE project_id = %s AND role = 'owner'",
        (project_id,),
    ).fetchone()
    if not row or row["n"] == 0:
        raise LastOwner(project_id)


def write_version(
    conn: Connection,
    d: Document,
    chunks: Sequence[EmbeddedChunk],
    model_id: str,
    *,
    create: bool,
) -> None:
    """A new document, or its next version fenced by the one before, with its chunks."""
    lock_chunks(conn, d.project_id)
    try:
        if create:
            insert_document(conn, d)
        else:
            update_document(conn, d)
    except errors.UniqueViolation as exc:  # the caller's transaction rolls back
        raise DocumentPathTaken(d.path) from exc
    insert_version(conn, d)
    insert_chunks(conn, d.project_id, SourceType.DOCUMENT, d.id, d.version, chunks, model_id)
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
        b"INSERT INTO document_versions (project_id, document_id, version, file_id, filename, "
        b"size, content_type, content_hash, chunk_count, page_count, warnings, created_at, "
        b"reading) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (
            d.project_id,
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


def insert_chunks(
    conn: Connection,
    project_id: str,
    source_type: SourceType,
    owner_id: str,
    version: int,
    chunks: Sequence[EmbeddedChunk],
    model_id: str,
) -> None:
    with conn.cursor() as cursor:
        cursor.executemany(
            b"INSERT INTO chunks (project_id, id, source_type, owner_id, version, ordinal, page, "
            b"start_offset, end_offset, text, vector, model, context) "
            b"VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            [
                (
                    project_id,
                    new_id("chunk"),
                    str(source_type),
                    owner_id,
                    version,
                    c.draft.ordinal,
                    c.draft.page,
                    c.draft.start,
                    c.draft.end,
                    c.draft.text,
                    np.frombuffer(c.vector, dtype=np.float32),
                    model_id,
                    c.draft.context,
                )
                for c in chunks
            ],
        )


def delete_memory(conn: Connection, project_id: str, store_id: str, memory_id: str) -> None:
    conn.execute(
        b"DELETE FROM chunks WHERE project_id = %s AND source_type = 'memory' AND owner_id = %s",
        (project_id, memory_owner(store_id, memory_id)),
    )
    conn.execute(
        b"DELETE FROM memories WHERE project_id = %s AND memory_store_id = %s AND id = %s",
        (project_id, store_id, memory_id),
    )
