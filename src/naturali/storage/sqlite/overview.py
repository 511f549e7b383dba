"""A project's folders in ``catalog.sqlite`` (ports/storage.py OverviewStorage), counted in
one grouped scan of its paths; the rest of its page is storage/overview.py."""

from __future__ import annotations

from naturali.model import Folder
from naturali.storage.overview import Overview
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


class SqliteOverview(Overview):
    db: Database

    def document_folders(
        self, project_id: str, prefix: str, after: str | None, limit: int
    ) -> list[Folder]:
        args = {"prefix": prefix, "project": project_id, "after": after or "", "limit": limit}
        rows = self.db.conn().execute(FOLDERS, args)
        return [Folder(r["folder"], int(r["documents"]), int(r["chunks"])) for r in rows]
