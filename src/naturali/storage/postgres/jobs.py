"""Ingestion jobs in PostgreSQL (ports/storage.py IngestJobStorage), shared by every server:
a claim takes the oldest free job with ``FOR UPDATE SKIP LOCKED``, so two servers claiming at
once take two jobs, never one twice; completion deletes the job only while its claimer still
holds it, in the transaction that writes the version."""

from __future__ import annotations

import json
import time
from collections.abc import Collection, Sequence
from typing import Any

from naturali.model import Document, IngestJob, IngestProgress
from naturali.ports.storage import EmbeddedChunk
from naturali.storage import rows as mapping
from naturali.storage.postgres.connection import Database
from naturali.storage.postgres.writes import write_version

COUNTS = "SELECT state, count(*) AS n FROM ingest_jobs GROUP BY state"


class PostgresIngestJobs:
    db: Database

    def enqueue_ingest(self, job: IngestJob, placeholder: Document | None) -> None:
        d = job.document
        with self.db.transaction() as conn:
            if placeholder is not None:
                write_version(conn, placeholder, [], "", create=True)
            conn.execute(
                b"DELETE FROM ingest_jobs WHERE project_id = %s AND document_id = %s",
                (d.project_id, d.id),
            )
            conn.execute(mapping.job_insert("%s"), mapping.job_row(job))

    def claim_ingest(
        self, owner: str, lease_seconds: float, exclude_projects: Collection[str] = ()
    ) -> IngestJob | None:
        now = time.time()
        others = "".join(" AND project_id <> %s" for _ in exclude_projects)
        with self.db.transaction() as conn:
            row = conn.execute(
                (
                    "SELECT * FROM ingest_jobs WHERE (state = 'queued' "
                    f"OR (state = 'running' AND lease_until < %s)){others} "
                    "ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED"
                ).encode(),
                (now, *exclude_projects),
            ).fetchone()
            if row is None:
                return None
            conn.execute(
                b"UPDATE ingest_jobs SET state = 'running', owner = %s, lease_until = %s, "
                b"chunks_done = 0, pages_done = 0 WHERE id = %s",
                (owner, now + lease_seconds, row["id"]),
            )
        return mapping.ingest_job(row)

    def queued_chunks(self, project_id: str) -> int:
        with self.db.connection() as conn:
            row = conn.execute(
                b"SELECT coalesce(sum(chunks_total - chunks_done), 0) AS n FROM ingest_jobs "
                b"WHERE project_id = %s AND state IN ('queued', 'running')",
                (project_id,),
            ).fetchone()
        return int(row["n"]) if row else 0

    def renew_ingest(
        self,
        job_id: str,
        owner: str,
        chunks_done: int,
        lease_seconds: float,
        pages_done: int = 0,
        chunks_total: int | None = None,
    ) -> bool:
        with self.db.transaction() as conn:
            updated = conn.execute(
                b"UPDATE ingest_jobs SET chunks_done = %s, lease_until = %s, pages_done = %s, "
                b"chunks_total = coalesce(%s, chunks_total) "
                b"WHERE id = %s AND owner = %s AND state = 'running'",
                (
                    chunks_done,
                    time.time() + lease_seconds,
                    pages_done,
                    chunks_total,
                    job_id,
                    owner,
                ),
            ).rowcount
        return updated == 1

    def finish_ingest(
        self,
        job_id: str,
        owner: str,
        document: Document,
        chunks: Sequence[EmbeddedChunk],
        model_id: str,
    ) -> bool:
        with self.db.transaction() as conn:
            held = conn.execute(
                b"DELETE FROM ingest_jobs WHERE id = %s AND owner = %s AND state = 'running'",
                (job_id, owner),
            ).rowcount
            if held != 1:
                return False
            write_version(conn, document, chunks, model_id, create=False)
        return True

    def fail_ingest(self, job_id: str, owner: str, error: dict[str, Any]) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                b"UPDATE ingest_jobs SET state = 'failed', error = %s, owner = NULL "
                b"WHERE id = %s AND owner = %s",
                (json.dumps(error), job_id, owner),
            )

    def ingest_job_counts(self) -> dict[str, int]:
        return mapping.job_counts(self.db.all(COUNTS))

    def ingest_progress(
        self, project_id: str, document_ids: Sequence[str]
    ) -> dict[str, IngestProgress]:
        if not document_ids:
            return {}
        rows = self.db.all(
            "SELECT document_id, state, chunks_total, chunks_done, error, pages_total, pages_done "
            "FROM ingest_jobs "
            "WHERE project_id = %s AND document_id = ANY(%s)",
            project_id,
            list(document_ids),
        )
        return {row["document_id"]: mapping.ingest_progress(row) for row in rows}
