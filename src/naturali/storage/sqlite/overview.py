"""A project's page in ``catalog.sqlite`` (ports/storage.py OverviewStorage): its folders
counted in one grouped scan of its paths, its jobs, its stores' sizes."""

from __future__ import annotations

from naturali.model import Folder, IngestJobStatus
from naturali.storage import rows as mapping
from naturali.storage.sqlite.connection import Database

# The folder of a path under the prefix: the prefix and the rest up to its first "/", or the
# prefix itself for a document directly in it. substr() rather than LIKE: paths may hold % and _.
FOLDERS = """
    SELECT folder, count(*) AS documents, coalesce(sum(chunks), 0) AS chunks FROM (
        SELECT :prefix || CASE WHEN instr(rest, '/') > 0
                               THEN substr(rest, 1, instr(rest, '/')) ELSE '' END AS folder,
               chunks
        FROM (SELECT substr(d.path, length(:prefix) + 1) AS rest, v.chunk_count AS chunks
              FROM documents d LEFT JOIN document_versions v
                ON v.document_id = d.id AND v.version = d.version
              WHERE d.project_id = :project AND substr(d.path, 1, length(:prefix)) = :prefix))
    GROUP BY folder HAVING folder > :after ORDER BY folder LIMIT :limit
"""

JOBS = """
    SELECT j.id, j.document_id, coalesce(d.path, '') AS path, j.state, j.chunks_total,
           j.chunks_done, j.error, j.created_at, j.pages_total, j.pages_done
    FROM ingest_jobs j LEFT JOIN documents d ON d.id = j.document_id
    WHERE j.project_id = ? AND (j.created_at, j.id) > (?, ?)
    ORDER BY j.created_at, j.id LIMIT ?
"""


class SqliteOverview:
    db: Database

    def document_folders(
        self, project_id: str, prefix: str, after: str | None, limit: int
    ) -> list[Folder]:
        args = {"prefix": prefix, "project": project_id, "after": after or "", "limit": limit}
        rows = self.db.conn().execute(FOLDERS, args)
        return [Folder(r["folder"], int(r["documents"]), int(r["chunks"])) for r in rows]

    def list_ingest_jobs(
        self, project_id: str, after: tuple[str, str] | None, limit: int
    ) -> list[IngestJobStatus]:
        rows = self.db.conn().execute(JOBS, (project_id, *(after or ("", "")), limit))
        return [mapping.ingest_job_status(r) for r in rows]

    def project_ingest_counts(self, project_id: str) -> dict[str, int]:
        rows = self.db.conn().execute(
            "SELECT state, count(*) AS n FROM ingest_jobs WHERE project_id = ? GROUP BY state",
            (project_id,),
        )
        return mapping.job_counts(rows)

    def memory_counts(self, project_id: str) -> dict[str, int]:
        rows = self.db.conn().execute(
            "SELECT memory_store_id, count(*) AS n FROM memories WHERE project_id = ? "
            "GROUP BY memory_store_id",
            (project_id,),
        )
        return {r["memory_store_id"]: int(r["n"]) for r in rows}
