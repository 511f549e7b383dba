"""Schema migrations for ``catalog.sqlite``, applied in order; ``PRAGMA user_version`` records
which have run. Add a new entry to change the schema; never edit a released one."""

from __future__ import annotations

import fcntl
import sqlite3
from pathlib import Path

from naturali.storage import migrations

MIGRATIONS: list[str] = [
    # 1: the first release
    """
    CREATE TABLE users (id TEXT PRIMARY KEY, name TEXT NOT NULL, created_at TEXT NOT NULL);
    CREATE TABLE tokens (
        token_hash TEXT PRIMARY KEY,
        user_id TEXT NOT NULL REFERENCES users(id),
        created_at TEXT NOT NULL
    );
    CREATE TABLE projects (id TEXT PRIMARY KEY, name TEXT NOT NULL, created_at TEXT NOT NULL);
    CREATE TABLE members (
        project_id TEXT NOT NULL REFERENCES projects(id),
        user_id TEXT NOT NULL REFERENCES users(id),
        role TEXT NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
        created_at TEXT NOT NULL,
        PRIMARY KEY (project_id, user_id)
    );
    CREATE TABLE documents (
        id TEXT PRIMARY KEY,
        project_id TEXT NOT NULL REFERENCES projects(id),
        path TEXT NOT NULL,
        title TEXT NOT NULL,
        metadata TEXT NOT NULL,
        tags TEXT NOT NULL,
        version INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (project_id, path)
    );
    CREATE TABLE document_versions (
        document_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        file_id TEXT NOT NULL,
        filename TEXT NOT NULL,
        size INTEGER NOT NULL,
        content_type TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        chunk_count INTEGER NOT NULL,
        page_count INTEGER,
        warnings TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (document_id, version)
    );
    CREATE TABLE memory_stores (
        id TEXT PRIMARY KEY,
        project_id TEXT NOT NULL REFERENCES projects(id),
        name TEXT NOT NULL,
        tags TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (project_id, name)
    );
    CREATE TABLE memories (
        id TEXT NOT NULL,
        project_id TEXT NOT NULL,
        memory_store_id TEXT NOT NULL REFERENCES memory_stores(id),
        title TEXT NOT NULL,
        content TEXT NOT NULL,
        tags TEXT NOT NULL,
        revision INTEGER NOT NULL,
        content_hash TEXT NOT NULL,
        file_path TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (memory_store_id, id)
    );
    CREATE TABLE chunks (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        project_id TEXT NOT NULL,
        source_type TEXT NOT NULL CHECK (source_type IN ('document', 'memory')),
        owner_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        ordinal INTEGER NOT NULL,
        page INTEGER,
        start_offset INTEGER NOT NULL,
        end_offset INTEGER NOT NULL,
        text TEXT NOT NULL,
        vector BLOB NOT NULL,
        model TEXT NOT NULL
    );
    CREATE INDEX chunks_project_seq ON chunks (project_id, seq);
    CREATE INDEX chunks_owner ON chunks (source_type, owner_id, ordinal);
    -- Removed chunk seqs, so the in-memory index can follow deletions incrementally.
    CREATE TABLE chunk_removals (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        project_id TEXT NOT NULL,
        chunk_seq INTEGER NOT NULL
    );
    CREATE INDEX chunk_removals_project ON chunk_removals (project_id, seq);
    CREATE VIRTUAL TABLE chunks_fts USING fts5(
        text, content='chunks', content_rowid='seq', tokenize='porter unicode61 remove_diacritics 2'
    );
    CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
        INSERT INTO chunks_fts(rowid, text) VALUES (new.seq, new.text);
    END;
    CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
        INSERT INTO chunks_fts(chunks_fts, rowid, text) VALUES ('delete', old.seq, old.text);
        INSERT INTO chunk_removals(project_id, chunk_seq) VALUES (old.project_id, old.seq);
    END;
    """,
    # 2: the chunks' embedder model indexed, so that a start's check for vectors another model
    # made (Services.reembed) reads only those, not every chunk (~0.2 s at 108k chunks).
    """
    CREATE INDEX chunks_model ON chunks (model);
    """,
    # 3: durable ingestion jobs (ports/storage.py IngestJobStorage)
    migrations.ingest_jobs("REAL", "document_id"),
    # 4: named tokens with a scope, projects, an expiry and revocation (service/platform/tokens.py);
    migrations.NAMED_TOKENS,  # 4
    # 5: the audit trail of writes (api/audit_trail.py), append-only
    migrations.audit("INTEGER PRIMARY KEY AUTOINCREMENT"),
    *migrations.TOKENS_PAGES_AND_SOURCES,  # the same on both engines
    # a passage's context, which both legs of a search read in front of it (text/context.py):
    # its document's title, then the headings it sits under (chunks stored before know their
    # title only)
    """
    ALTER TABLE chunks ADD COLUMN context TEXT NOT NULL DEFAULT '';
    UPDATE chunks SET context = COALESCE(
        (SELECT title FROM documents WHERE documents.id = chunks.owner_id), ''
    ) WHERE source_type = 'document';
    """,
    migrations.PROJECT_MODELS,  # the same on both engines
    migrations.GRANTS,  # the same on both engines
]


def migrate(conn: sqlite3.Connection, lock_path: Path) -> int:
    """Bring the schema up to date; returns the resulting version.

    A file lock makes concurrent first starts (several processes) run each migration once.
    """
    with lock_path.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        current = conn.execute("PRAGMA user_version").fetchone()[0]
        for number, script in enumerate(MIGRATIONS[current:], start=current + 1):
            conn.executescript(
                f"BEGIN IMMEDIATE;\n{script}\nPRAGMA user_version = {number};\nCOMMIT;"
            )
    return len(MIGRATIONS)
