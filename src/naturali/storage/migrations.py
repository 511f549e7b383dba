"""Migration steps written once for both engines, where their SQL is the same: each backend's
list of steps (storage/sqlite/migrations.py, storage/postgres/migrations.py) holds them at
their place, so neither's count of applied steps moves."""

from __future__ import annotations

# Named tokens with a scope, projects, an expiry and revocation (service/platform/tokens.py);
# the tokens before are admin tokens named "default"
NAMED_TOKENS = """
    ALTER TABLE tokens ADD COLUMN id TEXT;
    ALTER TABLE tokens ADD COLUMN name TEXT NOT NULL DEFAULT 'default';
    ALTER TABLE tokens ADD COLUMN scope TEXT NOT NULL DEFAULT 'admin';
    ALTER TABLE tokens ADD COLUMN projects TEXT;
    ALTER TABLE tokens ADD COLUMN expires_at TEXT;
    ALTER TABLE tokens ADD COLUMN last_used_at TEXT;
    ALTER TABLE tokens ADD COLUMN revoked_at TEXT;
    UPDATE tokens SET id = 'tok_' || substr(token_hash, 1, 16);
    CREATE UNIQUE INDEX tokens_id ON tokens (id);
    CREATE INDEX tokens_user ON tokens (user_id);
    """
TOKENS_PAGES_AND_SOURCES = (
    # the token that made each token: revoking one revokes what was made through it
    """
    ALTER TABLE tokens ADD COLUMN parent_id TEXT;
    CREATE INDEX tokens_parent ON tokens (parent_id);
    """,
    # what was read how on a PDF's or an image's pages (ingest/reading.py), and a job's pages
    # still to read by OCR before its chunks are whole
    """
    ALTER TABLE document_versions ADD COLUMN reading TEXT;
    ALTER TABLE ingest_jobs ADD COLUMN pages_total INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE ingest_jobs ADD COLUMN pages_done INTEGER NOT NULL DEFAULT 0;
    """,
    # sources a project mirrors (a Git repository), synced by any server on a lease
    """
    CREATE TABLE sources (
        id TEXT PRIMARY KEY,
        project_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        spec TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        next_run_at DOUBLE PRECISION,
        requested_at DOUBLE PRECISION,
        owner TEXT,
        lease_until DOUBLE PRECISION,
        last_run TEXT,
        cursor TEXT
    );
    CREATE INDEX sources_project ON sources (project_id);
    """,
)


# The model each project is embedded with, and the one it moves to (NULL: the server's).
PROJECT_MODELS = """
    ALTER TABLE projects ADD COLUMN embedding_model TEXT;
    ALTER TABLE projects ADD COLUMN embedding_model_next TEXT;
    """


# What of a project a token, a membership and an audited call reach (model.py Grant): JSON
# lists of path prefixes and memory store ids, NULL for all of them.
GRANTS = """
    ALTER TABLE tokens ADD COLUMN path_prefixes TEXT;
    ALTER TABLE tokens ADD COLUMN memory_store_ids TEXT;
    ALTER TABLE members ADD COLUMN path_prefixes TEXT;
    ALTER TABLE members ADD COLUMN memory_store_ids TEXT;
    ALTER TABLE audit ADD COLUMN path_prefixes TEXT;
    ALTER TABLE audit ADD COLUMN memory_store_ids TEXT;
    """


def ingest_jobs(real: str, document_key: str) -> str:
    """Durable ingestion jobs (ports/storage.py IngestJobStorage); ``real``: the engine's
    floating-point type, ``document_key``: the columns a document's jobs are found by."""
    return f"""
    CREATE TABLE ingest_jobs (
        id TEXT PRIMARY KEY,
        project_id TEXT NOT NULL,
        document_id TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'failed')),
        payload TEXT NOT NULL,
        chunks_total INTEGER NOT NULL,
        chunks_done INTEGER NOT NULL DEFAULT 0,
        error TEXT,
        owner TEXT,
        lease_until {real},
        created_at TEXT NOT NULL
    );
    CREATE INDEX ingest_jobs_document ON ingest_jobs ({document_key});
    CREATE INDEX ingest_jobs_waiting ON ingest_jobs (state, created_at);
    """


def audit(serial: str) -> str:
    """The audit trail of writes (api/audit_trail.py), append-only; ``serial``: the engine's
    auto-incrementing primary key."""
    return f"""
    CREATE TABLE audit (
        seq {serial},
        project_id TEXT,
        at TEXT NOT NULL,
        user_id TEXT NOT NULL,
        token_name TEXT,
        request_id TEXT NOT NULL,
        operation TEXT NOT NULL,
        ids TEXT NOT NULL,
        status INTEGER NOT NULL
    );
    CREATE INDEX audit_project ON audit (project_id, seq);
    """
