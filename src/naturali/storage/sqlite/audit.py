"""The audit trail in ``catalog.sqlite`` (ports/storage.py AuditStorage): appended, never
updated or deleted."""

from __future__ import annotations

import json
from typing import Any

from naturali.model import AuditEntry
from naturali.storage import rows as mapping
from naturali.storage.sqlite.connection import Database


class SqliteAudit:
    db: Database

    def append_audit(self, entry: AuditEntry) -> None:
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO audit (project_id, at, user_id, token_name, request_id, operation, "
                "ids, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    entry.project_id,
                    entry.at,
                    entry.user_id,
                    entry.token_name,
                    entry.request_id,
                    entry.operation,
                    json.dumps(entry.ids),
                    entry.status,
                ),
            )

    def list_audit(
        self,
        project_id: str,
        since: str | None,
        until: str | None,
        operation: str | None,
        after_seq: int,
        limit: int,
    ) -> list[AuditEntry]:
        sql = "SELECT * FROM audit WHERE project_id = ? AND seq > ?"
        args: list[Any] = [project_id, after_seq]
        for clause, value in (("at >= ?", since), ("at < ?", until), ("operation = ?", operation)):
            if value is not None:
                sql += f" AND {clause}"
                args.append(value)
        rows = self.db.conn().execute(sql + " ORDER BY seq LIMIT ?", (*args, limit))
        return [mapping.audit_entry(r) for r in rows]
