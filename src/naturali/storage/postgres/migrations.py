"""Schema migrations for PostgreSQL, applied in order under an advisory lock (several servers
may start at once); ``naturali_schema`` records which have run. Add an entry to change the
schema; never edit a released one.

Every table but ``users`` and ``tokens`` carries ``project_id`` and has it in every key, so the
schema can be distributed by ``project_id`` (Citus) as it is — see docs/scale.md.
"""

from __future__ import annotations

import psycopg

from naturali.storage import migrations

MIGRATIONS: list[str] = [
    # 1: the first release
    """
    CREATE EXTENSION IF NOT EXISTS vector;
    CREATE TABLE users (
        id TEXT PRIMARY KEY, name TEXT NOT NULL, created_at TEXT NOT NULL,
        ord BIGSERIAL NOT NULL
    );
    CREATE TABLE tokens (
        token_hash TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id),
        created_at TEXT NOT NULL
    );
    CREATE TABLE projects (
        project_id TEXT PRIMARY KEY, name TEXT NOT NULL, created_at TEXT NOT NULL
    );
    CREATE TABLE members (
        project_id TEXT NOT NULL, user_id TEXT NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
        created_at TEXT NOT NULL,
        PRIMARY KEY (project_id, user_id)
    );
    CREATE INDEX members_user ON members (user_id);
    CREATE TABLE documents (
        project_id TEXT NOT NULL, id TEXT NOT NULL, path TEXT NOT NULL, title TEXT NOT NULL,
        metadata TEXT NOT NULL, tags TEXT NOT NULL, version INTEGER NOT NULL,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
        PRIMARY KEY (project_id, id), UNIQUE (project_id, path)
    );
    CREATE TABLE document_versions (
        project_id TEXT NOT NULL, document_id TEXT NOT NULL, version INTEGER NOT NULL,
        file_id TEXT NOT NULL, filename TEXT NOT NULL, size BIGINT NOT NULL,
        content_type TEXT NOT NULL, content_hash TEXT NOT NULL, chunk_count INTEGER NOT NULL,
        page_count INTEGER, warnings TEXT NOT NULL, created_at TEXT NOT NULL,
        PRIMARY KEY (project_id, document_id, version)
    );
    CREATE TABLE memory_stores (
        project_id TEXT NOT NULL, id TEXT NOT NULL, name TEXT NOT NULL, tags TEXT NOT NULL,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
        PRIMARY KEY (project_id, id), UNIQUE (project_id, name)
    );
    CREATE UNIQUE INDEX memory_stores_id ON memory_stores (id);
    CREATE TABLE memories (
        project_id TEXT NOT NULL, memory_store_id TEXT NOT NULL, id TEXT NOT NULL,
        title TEXT NOT NULL, content TEXT NOT NULL, tags TEXT NOT NULL,
        revision INTEGER NOT NULL, content_hash TEXT NOT NULL, file_path TEXT NOT NULL,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
        PRIMARY KEY (project_id, memory_store_id, id)
    );
    CREATE INDEX memories_store ON memories (memory_store_id, id);
    CREATE SEQUENCE chunk_seq;
    CREATE TABLE chunks (
        project_id TEXT NOT NULL, seq BIGINT NOT NULL DEFAULT nextval('chunk_seq'),
        id TEXT NOT NULL, source_type TEXT NOT NULL CHECK (source_type IN ('document', 'memory')),
        owner_id TEXT NOT NULL, version INTEGER NOT NULL, ordinal INTEGER NOT NULL,
        page INTEGER, start_offset INTEGER NOT NULL, end_offset INTEGER NOT NULL,
        text TEXT NOT NULL, vector vector NOT NULL, model TEXT NOT NULL,
        PRIMARY KEY (project_id, seq), UNIQUE (project_id, id)
    );
    CREATE INDEX chunks_owner ON chunks (project_id, source_type, owner_id, ordinal);
    CREATE INDEX chunks_model ON chunks (model);
    -- Removed chunk seqs, so each server's in-memory index follows deletions incrementally.
    CREATE TABLE chunk_removals (
        project_id TEXT NOT NULL, seq BIGSERIAL NOT NULL, chunk_seq BIGINT NOT NULL,
        PRIMARY KEY (project_id, seq)
    );
    CREATE FUNCTION naturali_chunk_removed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO chunk_removals (project_id, chunk_seq) VALUES (OLD.project_id, OLD.seq);
        RETURN OLD;
    END $$;
    CREATE TRIGGER chunks_removed AFTER DELETE ON chunks
        FOR EACH ROW EXECUTE FUNCTION naturali_chunk_removed();
    -- The durable part of each memory store's state (the rest is rebuilt per server).
    CREATE TABLE store_guards (
        project_id TEXT NOT NULL, store_id TEXT NOT NULL, record_id TEXT NOT NULL,
        lifecycle TEXT NOT NULL CHECK (lifecycle IN ('withdrawn', 'superseded')),
        revision INTEGER NOT NULL, superseded_by TEXT, reason TEXT NOT NULL, at TEXT NOT NULL,
        PRIMARY KEY (project_id, store_id, record_id, lifecycle)
    );
    CREATE TABLE store_meta (
        project_id TEXT NOT NULL, store_id TEXT NOT NULL, guards_version BIGINT NOT NULL,
        PRIMARY KEY (project_id, store_id)
    );
    CREATE TABLE store_mutations (
        project_id TEXT NOT NULL, store_id TEXT NOT NULL, request_id TEXT NOT NULL,
        operation TEXT NOT NULL, args_hash TEXT NOT NULL, plan TEXT NOT NULL,
        state TEXT NOT NULL, receipt TEXT, git_state TEXT,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
        PRIMARY KEY (project_id, store_id, request_id)
    );
    CREATE INDEX store_mutations_state ON store_mutations (project_id, store_id, state);
    CREATE INDEX store_mutations_git ON store_mutations (project_id, store_id, git_state);
    CREATE TABLE store_history (
        project_id TEXT NOT NULL, store_id TEXT NOT NULL, record_id TEXT NOT NULL,
        revision INTEGER NOT NULL, request_id TEXT NOT NULL, operation TEXT NOT NULL,
        lifecycle TEXT NOT NULL, path TEXT NOT NULL, sha256 TEXT NOT NULL, at TEXT NOT NULL,
        PRIMARY KEY (project_id, store_id, record_id, revision)
    );
    CREATE TABLE store_sessions (
        project_id TEXT NOT NULL, store_id TEXT NOT NULL, session_id TEXT NOT NULL,
        pid INTEGER NOT NULL, host TEXT NOT NULL, started_at TEXT NOT NULL,
        last_active_at TEXT NOT NULL, writes BIGINT NOT NULL,
        PRIMARY KEY (project_id, store_id, session_id)
    );
    """,
    # 2: durable ingestion jobs (ports/storage.py IngestJobStorage)
    migrations.ingest_jobs("DOUBLE PRECISION", "project_id, document_id"),
    migrations.NAMED_TOKENS,  # 3
    # 4: the audit trail of writes (api/audit_trail.py), append-only
    migrations.audit("BIGSERIAL PRIMARY KEY"),
    *migrations.TOKENS_PAGES_AND_SOURCES,  # the same on both engines
    # a passage's context, which both legs of a search read in front of it (text/context.py):
    # its document's title, then the headings it sits under (chunks stored before know their
    # title only)
    """
    ALTER TABLE chunks ADD COLUMN context TEXT NOT NULL DEFAULT '';
    UPDATE chunks SET context = documents.title FROM documents
        WHERE chunks.source_type = 'document' AND documents.id = chunks.owner_id;
    """,
    migrations.PROJECT_MODELS,  # the same on both engines
    migrations.GRANTS,  # the same on both engines
]

_LOCK = 7_164_201_003  # the advisory lock key migrations run under


def migrate(url: str) -> int:
    """Bring the schema up to date; returns the resulting version. Concurrent starts wait
    for one another, so each migration runs once."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (_LOCK,))
        try:
            conn.execute("CREATE TABLE IF NOT EXISTS naturali_schema (version INTEGER NOT NULL)")
            row = conn.execute("SELECT max(version) FROM naturali_schema").fetchone()
            current = int(row[0]) if row and row[0] is not None else 0
            for number, script in enumerate(MIGRATIONS[current:], start=current + 1):
                with conn.transaction():
                    conn.execute(script.encode())
                    conn.execute("INSERT INTO naturali_schema VALUES (%s)", (number,))
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK,))
    return len(MIGRATIONS)
