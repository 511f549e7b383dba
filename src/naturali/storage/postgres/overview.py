"""A project's page in PostgreSQL (ports/storage.py OverviewStorage): its folders counted in
one grouped scan of its paths, its jobs, its stores' sizes. Paths and ids compare bytewise
(``COLLATE "C"``), as the documents' listing pages them."""

from __future__ import annotations

from naturali.model import Folder, IngestJobStatus
from naturali.storage import rows as mapping
from naturali.storage.postgres.connection import Database

# The folder of a path under the prefix: the prefix and the rest up to its first "/", or the
# prefix itself for a document directly in it. left() rather than LIKE: paths may hold % and _.
FOLDERS = """
    SELECT folder, count(*) AS documents, coalesce(sum(chunks), 0) AS chunks FROM (
        SELECT %(prefix)s || CASE WHEN strpos(rest, '/') > 0
                                  THEN left(rest, strpos(rest, '/')) ELSE '' END AS folder,
               chunks
        FROM (SELECT substr(d.path, length(%(prefix)s) + 1) AS rest, v.chunk_count AS chunks
              FROM documents d LEFT JOIN document_versions v
                ON v.project_id = d.project_id AND v.document_id = d.id AND v.version = d.version
              WHERE d.project_id = %(project)s
                AND left(d.path, length(%(prefix)s)) = %(prefix)s) AS under) AS folders
    GROUP BY folder HAVING folder COLLATE "C" > %(after)s
    ORDER BY folder COLLATE "C" LIMIT %(limit)s
"""

JOBS = """
    SELECT j.id, j.document_id, coalesce(d.path, '') AS path, j.state, j.chunks_total,
           j.chunks_done, j.error, j.created_at, j.pages_total, j.pages_done
    FROM ingest_jobs j LEFT JOIN documents d ON d.project_id = j.project_id AND d.id = j.document_id
    WHERE j.project_id = %s AND (j.created_at COLLATE "C", j.id COLLATE "C") > (%s, %s)
    ORDER BY j.created_at COLLATE "C", j.id COLLATE "C" LIMIT %s
"""


class PostgresOverview:
    db: Database

    def document_folders(
        self, project_id: str, prefix: str, after: str | None, limit: int
    ) -> list[Folder]:
        args = {"prefix": prefix, "project": project_id, "after": after or "", "limit": limit}
        with self.db.connection() as conn:
            rows = conn.execute(FOLDERS.encode(), args).fetchall()
        return [Folder(r["folder"], int(r["documents"]), int(r["chunks"])) for r in rows]

    def list_ingest_jobs(
        self, project_id: str, after: tuple[str, str] | None, limit: int
    ) -> list[IngestJobStatus]:
        rows = self.db.all(JOBS, project_id, *(after or ("", "")), limit)
        return [mapping.ingest_job_status(r) for r in rows]

    def project_ingest_counts(self, project_id: str) -> dict[str, int]:
        rows = self.db.all(
            "SELECT state, count(*) AS n FROM ingest_jobs WHERE project_id = %s GROUP BY state",
            project_id,
        )
        return mapping.job_counts(rows)

    def memory_counts(self, project_id: str) -> dict[str, int]:
        rows = self.db.all(
            "SELECT memory_store_id, count(*) AS n FROM memories WHERE project_id = %s "
            "GROUP BY memory_store_id",
            project_id,
        )
        return {r["memory_store_id"]: int(r["n"]) for r in rows}
