"""Ingestion jobs in ``catalog.sqlite`` (ports/storage.py IngestJobStorage). ``BEGIN
IMMEDIATE`` serialises every claim, so no two workers, in this process or another, hold one
job."""

from __future__ import annotations

import json
import time
from collections.abc import Collection, Sequence
from typing import Any

from naturali.model import Document, IngestJob, IngestProgress
from naturali.ports.storage import EmbeddedChunk
from naturali.storage import rows as mapping
from naturali.storage.sqlite.connection import Database
from naturali.storage.sqlite.writes import write_version

COUNTS = "SELECT state, count(*) AS n FROM ingest_jobs GROUP BY state"


class SqliteIngestJobs:
    db: Database

    def enqueue_ingest(self, job: IngestJob, placeholder: Document | None) -> None:
        d = job.document
        with self.db.write() as conn:
            if placeholder is not None:
                write_version(conn, placeholder, [], "", create=True)
            conn.execute("DELETE FROM ingest_jobs WHERE document_id = ?", (d.id,))
            conn.execute(mapping.job_insert("?"), mapping.job_row(job))

    def claim_ingest(
        self, owner: str, lease_seconds: float, exclude_projects: Collection[str] = ()
    ) -> IngestJob | None:
        now = time.time()
        others = "".join(" AND project_id <> ?" for _ in exclude_projects)
        with self.db.write() as conn:
            row = conn.execute(
                "SELECT * FROM ingest_jobs WHERE (state = 'queued' "
                f"OR (state = 'running' AND lease_until < ?)){others} ORDER BY created_at LIMIT 1",
                (now, *exclude_projects),
            ).fetchone()
            if row is None:
                return None
            conn.execute(
                "UPDATE ingest_jobs SET state = 'running', owner = ?, lease_until = ?, "
                "chunks_done = 0, pages_done = 0 WHERE id = ?",
                (owner, now + lease_seconds, row["id"]),
            )
        return mapping.ingest_job(row)

    def queued_chunks(self, project_id: str) -> int:
        row = (
            self.db.conn()
            .execute(
                "SELECT coalesce(sum(chunks_total - chunks_done), 0) FROM ingest_jobs "
                "WHERE project_id = ? AND state IN ('queued', 'running')",
                (project_id,),
            )
            .fetchone()
        )
        return int(row[0])

    def renew_ingest(
        self,
        job_id: str,
        owner: str,
        chunks_done: int,
        lease_seconds: float,
        pages_done: int = 0,
        chunks_total: int | None = None,
    ) -> bool:
        with self.db.write() as conn:
            return (
                conn.execute(
                    "UPDATE ingest_jobs SET chunks_done = ?, lease_until = ?, pages_done = ?, "
                    "chunks_total = coalesce(?, chunks_total) "
                    "WHERE id = ? AND owner = ? AND state = 'running'",
                    (
                        chunks_done,
                        time.time() + lease_seconds,
                        pages_done,
                        chunks_total,
                        job_id,
                        owner,
                    ),
                ).rowcount
                == 1
            )

    def finish_ingest(
        self,
        job_id: str,
        owner: str,
        document: Document,
        chunks: Sequence[EmbeddedChunk],
        model_id: str,
    ) -> bool:
        with self.db.write() as conn:
            held = conn.execute(
                "DELETE FROM ingest_jobs WHERE id = ? AND owner = ? AND state = 'running'",
                (job_id, owner),
            ).rowcount
            if held != 1:
                return False
            write_version(conn, document, chunks, model_id, create=False)
        return True

    def fail_ingest(self, job_id: str, owner: str, error: dict[str, Any]) -> None:
        with self.db.write() as conn:
            conn.execute(
                "UPDATE ingest_jobs SET state = 'failed', error = ?, owner = NULL "
                "WHERE id = ? AND owner = ?",
                (json.dumps(error), job_id, owner),
            )

    def ingest_job_counts(self) -> dict[str, int]:
        return mapping.job_counts(self.db.conn().execute(COUNTS))

    def ingest_progress(
        self, project_id: str, document_ids: Sequence[str]
    ) -> dict[str, IngestProgress]:
        if not document_ids:
            return {}
        marks = ",".join("?" * len(document_ids))
        rows = self.db.conn().execute(
            "SELECT document_id, state, chunks_total, chunks_done, error, pages_total, pages_done "
            "FROM ingest_jobs "
            f"WHERE project_id = ? AND document_id IN ({marks})",
            (project_id, *document_ids),
        )
        return {row["document_id"]: mapping.ingest_progress(row) for row in rows}
