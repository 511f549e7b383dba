"""A project's folders in PostgreSQL (ports/storage.py OverviewStorage), counted in one
grouped scan of its paths, compared bytewise (``COLLATE "C"``) as the documents' listing
pages them; the rest of its page is storage/overview.py."""

from __future__ import annotations

from naturali.model import Folder
from naturali.storage.overview import Overview
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


class PostgresOverview(Overview):
    db: Database

    def document_folders(
        self, project_id: str, prefix: str, after: str | None, limit: int
    ) -> list[Folder]:
        args = {"prefix": prefix, "project": project_id, "after": after or "", "limit": limit}
        with self.db.connection() as conn:
            rows = conn.execute(FOLDERS.encode(), args).fetchall()
        return [Folder(r["folder"], int(r["documents"]), int(r["chunks"])) for r in rows]
