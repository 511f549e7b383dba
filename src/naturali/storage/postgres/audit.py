"""The audit trail in PostgreSQL (ports/storage.py AuditStorage), shared by every server:
appended, never updated or deleted."""

from __future__ import annotations

from typing import Any

from naturali.model import AuditEntry
from naturali.storage import rows as mapping
from naturali.storage.postgres.connection import Database

INSERT = (
    f"INSERT INTO audit ({mapping.AUDIT_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)".encode()
)


class PostgresAudit:
    db: Database

    def append_audit(self, entry: AuditEntry) -> None:
        with self.db.transaction() as conn:
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
        sql = "SELECT * FROM audit WHERE project_id = %s AND seq > %s"
        args: list[Any] = [project_id, after_seq]
        for clause, value in (
            ("at >= %s", since),
            ("at < %s", until),
            ("operation = %s", operation),
        ):
            if value is not None:
                sql += f" AND {clause}"
                args.append(value)
        rows = self.db.all(sql + " ORDER BY seq LIMIT %s", *args, limit)
        return [mapping.audit_entry(r) for r in rows]
