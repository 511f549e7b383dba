"""The audit trail (ports/storage.py AuditStorage), on either backend: appended, never
updated or deleted."""

from __future__ import annotations

from typing import Any

from naturali.model import AuditEntry
from naturali.storage import access_rows as mapping
from naturali.storage.sql import Aggregate

INSERT = f"INSERT INTO audit ({mapping.AUDIT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"


class Audit(Aggregate):
    def append_audit(self, entry: AuditEntry) -> None:
        with self.db.writing() as conn:
            conn.execute(INSERT, mapping.audit_row(entry))

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
        rows = self.db.rows(sql + " ORDER BY seq LIMIT ?", *args, limit)
        return [mapping.audit_entry(r) for r in rows]
