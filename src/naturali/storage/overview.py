"""A project's page (ports/storage.py OverviewStorage), on either backend: its jobs, a page at
a time, and what its jobs and stores hold. Its folders, counted with each engine's own string
functions, are the backend's (sqlite/overview.py, postgres/overview.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from naturali.model import IngestJobStatus
from naturali.storage import rows as mapping
from naturali.storage.sql import SqlDatabase

JOBS = """
    SELECT j.id, j.document_id, coalesce(d.path, '') AS path, j.state, j.chunks_total,
           j.chunks_done, j.error, j.created_at, j.pages_total, j.pages_done
    FROM ingest_jobs j LEFT JOIN documents d ON d.project_id = j.project_id AND d.id = j.document_id
    WHERE j.project_id = ? AND (j.created_at{b}, j.id{b}) > (?, ?)
    ORDER BY j.created_at{b}, j.id{b} LIMIT ?
"""


class Overview:
    if TYPE_CHECKING:  # each catalogue sets its own database (storage/sql.py)

        @property
        def db(self) -> SqlDatabase: ...

    def list_ingest_jobs(
        self, project_id: str, after: tuple[str, str] | None, limit: int
    ) -> list[IngestJobStatus]:
        sql = JOBS.format(b=self.db.dialect.bytewise)
        rows = self.db.rows(sql, project_id, *(after or ("", "")), limit)
        return [mapping.ingest_job_status(r) for r in rows]

    def project_ingest_counts(self, project_id: str) -> dict[str, int]:
        rows = self.db.rows(
            "SELECT state, count(*) AS n FROM ingest_jobs WHERE project_id = ? GROUP BY state",
            project_id,
        )
        return mapping.job_counts(rows)

    def memory_counts(self, project_id: str) -> dict[str, int]:
        rows = self.db.rows(
            "SELECT memory_store_id, count(*) AS n FROM memories WHERE project_id = ? "
            "GROUP BY memory_store_id",
            project_id,
        )
        return {r["memory_store_id"]: int(r["n"]) for r in rows}
