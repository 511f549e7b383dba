"""A project's page (ports/storage.py OverviewStorage), on either backend: its folders counted
in one grouped scan of its paths (compared bytewise, as the documents' listing pages them),
its jobs a page at a time, and what its jobs and stores hold."""

from __future__ import annotations

from collections.abc import Sequence

from naturali.model import Folder, IngestJobStatus
from naturali.storage import rows as mapping
from naturali.storage.sql import Aggregate, under

# The folder of a path under the prefix: the prefix and the rest up to its first "/", or the
# prefix itself for a document directly in it. substr() rather than LIKE: paths may hold % and _.
FOLDERS = """
    SELECT folder, count(*) AS documents, coalesce(sum(chunks), 0) AS chunks FROM (
        SELECT ? || CASE WHEN {slash} > 0 THEN substr(rest, 1, {slash}) ELSE '' END AS folder,
               chunks
        FROM (SELECT substr(d.path, length(?) + 1) AS rest, v.chunk_count AS chunks
              FROM documents d LEFT JOIN document_versions v ON {current}
              WHERE d.project_id = ? AND substr(d.path, 1, length(?)) = ?{granted}) AS under
    ) AS folders
    GROUP BY folder HAVING folder{b} > ? ORDER BY folder{b} LIMIT ?
"""

JOBS = """
    SELECT j.id, j.document_id, coalesce(d.path, '') AS path, j.state, j.chunks_total,
           j.chunks_done, j.error, j.created_at, j.pages_total, j.pages_done
    FROM ingest_jobs j LEFT JOIN documents d ON d.project_id = j.project_id AND d.id = j.document_id
    WHERE j.project_id = ? AND (j.created_at{b}, j.id{b}) > (?, ?){granted}
    ORDER BY j.created_at{b}, j.id{b} LIMIT ?
"""


class Overview(Aggregate):
    def document_folders(
        self,
        project_id: str,
        prefix: str,
        after: str | None,
        limit: int,
        granted: Sequence[str] | None = None,
    ) -> list[Folder]:
        d = self.db.dialect
        clause, within = under("d.path", granted)
        sql = FOLDERS.format(
            slash=d.position.format("rest", "'/'"),
            current=d.current_version,
            b=d.bytewise,
            granted=clause,
        )
        args = (prefix, prefix, project_id, prefix, prefix, *within, after or "", limit)
        rows = self.db.rows(sql, *args)
        return [Folder(r["folder"], int(r["documents"]), int(r["chunks"])) for r in rows]

    def list_ingest_jobs(
        self,
        project_id: str,
        after: tuple[str, str] | None,
        limit: int,
        granted: Sequence[str] | None = None,
    ) -> list[IngestJobStatus]:
        clause, within = under("d.path", granted)
        sql = JOBS.format(b=self.db.dialect.bytewise, granted=clause)
        rows = self.db.rows(sql, project_id, *(after or ("", "")), *within, limit)
        return [mapping.ingest_job_status(r) for r in rows]

    def project_ingest_counts(
        self, project_id: str, granted: Sequence[str] | None = None
    ) -> dict[str, int]:
        # Joined as JOBS lists them: a job whose document is gone counts only when not granted.
        clause, within = under("d.path", granted)
        rows = self.db.rows(
            "SELECT j.state, count(*) AS n FROM ingest_jobs j LEFT JOIN documents d "
            "ON d.project_id = j.project_id AND d.id = j.document_id WHERE j.project_id = ?"
            + clause
            + " GROUP BY j.state",
            project_id,
            *within,
        )
        return mapping.job_counts(rows)

    def memory_counts(self, project_id: str) -> dict[str, int]:
        rows = self.db.rows(
            "SELECT memory_store_id, count(*) AS n FROM memories WHERE project_id = ? "
            "GROUP BY memory_store_id",
            project_id,
        )
        return {r["memory_store_id"]: int(r["n"]) for r in rows}
