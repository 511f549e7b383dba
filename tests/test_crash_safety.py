"""An ingest killed mid-way leaves the previous version searchable and nothing half written."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import psycopg

from naturali.compose import build_services
from naturali.embed.onnx import OnnxEmbedder
from naturali.service.corpus.documents import Upload
from naturali.service.requests import SearchRequest
from naturali.settings import Settings

V1 = "\n\n".join(f"Paragraph {i} of the first version talks about refunds." for i in range(40))
V2 = "\n\n".join(f"Paragraph {i} of the second version talks about zebras." * 6 for i in range(40))

KILLER = textwrap.dedent(
    """
    import os, signal, sys
    from naturali.compose import build_services
    from naturali.service.corpus import documents
    from naturali.service.corpus.documents import Upload
    from naturali.settings import Settings
    import naturali.storage.sqlite.writes as sqlite_writes

    data_dir, project_id, document_id, content = sys.argv[1:]
    documents.INLINE_CHUNKS = 10**6  # embedded in the request (a job's write is the same one)
    original = sqlite_writes.insert_chunks

    def dying(conn, owner, chunks, model_id):
        # Old chunks are already deleted and half the new ones written, inside the transaction.
        original(conn, owner, chunks[: len(chunks) // 2], model_id)
        os.kill(os.getpid(), signal.SIGKILL)

    sqlite_writes.insert_chunks = dying
    if os.environ.get("NATURALI_DATABASE_URL"):
        import naturali.storage.postgres.writes as postgres
        postgres_insert = postgres.insert_chunks

        def dying_postgres(conn, owner, chunks, model_id):
            postgres_insert(conn, owner, chunks[: len(chunks) // 2], model_id)
            os.kill(os.getpid(), signal.SIGKILL)

        postgres.insert_chunks = dying_postgres
    naturali = build_services(Settings.load({"data_dir": data_dir}))
    owner = naturali.storage.oldest_user()
    naturali.documents.update(owner, project_id, document_id, Upload(content.encode()))
    """
)


def test_killed_ingest_leaves_previous_version(
    tmp_path: Path, embedder: OnnxEmbedder, backend: dict[str, str]
) -> None:
    naturali = build_services(Settings(data_dir=tmp_path, **backend), embedder=embedder)
    naturali.bootstrap()
    owner = naturali.storage.oldest_user()
    assert owner
    project, _ = naturali.projects.create(owner, "crash")
    doc = naturali.documents.create(owner, project.id, Upload(V1.encode(), path="/doc.md"))
    chunks_v1 = sorted(
        c.id for c in naturali.storage.owner_chunks(project.id, "document", [doc.id])
    )
    naturali.close()

    proc = subprocess.run(
        [sys.executable, "-c", KILLER, str(tmp_path), project.id, doc.id, V2],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **{f"NATURALI_{k.upper()}": v for k, v in backend.items()}},
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr

    reopened = build_services(Settings(data_dir=tmp_path, **backend), embedder=embedder)
    current = reopened.documents.get(owner, project.id, doc.id)
    assert current.version == 1
    chunks = reopened.storage.owner_chunks(project.id, "document", [doc.id])
    assert sorted(c.id for c in chunks) == chunks_v1
    assert all("first version" in c.text for c in chunks)
    hits = reopened.search.search(owner, project.id, SearchRequest(query="refunds"))
    assert hits and all(h.document_version == 1 for h in hits)
    zebras = reopened.search.search(owner, project.id, SearchRequest(query="zebras"))
    assert (zebras[0].content or "").startswith("Paragraph")  # only v1 text exists to match
    reopened.close()
    if "database_url" in backend:
        _postgres_consistent(backend["database_url"])
        return

    conn = sqlite3.connect(tmp_path / "catalog.sqlite")
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('integrity-check')")
    versions = conn.execute("SELECT version FROM document_versions").fetchall()
    assert versions == [(1,)]
    assert conn.execute("SELECT count(*) FROM chunk_removals").fetchone()[0] == 0
    orphans = conn.execute(
        "SELECT count(*) FROM chunks WHERE owner_id NOT IN (SELECT id FROM documents)"
    ).fetchone()[0]
    assert orphans == 0
    conn.close()


def _postgres_consistent(url: str) -> None:
    """The killed transaction left nothing: one version, no removal, no orphan chunk."""
    with psycopg.connect(url) as conn:
        assert conn.execute(b"SELECT version FROM document_versions").fetchall() == [(1,)]
        assert conn.execute(b"SELECT count(*) FROM chunk_removals").fetchone() == (0,)
        orphans = conn.execute(
            b"SELECT count(*) FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM documents d "
            b"WHERE d.project_id = c.project_id AND d.id = c.owner_id)"
        ).fetchone()
        assert orphans == (0,)
