"""The statements a catalog write is made of, inside the caller's transaction."""

from __future__ import annotations

import sqlite3

from naturali.model import Document
from naturali.ports.storage import VersionConflict
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
