"""Sources in PostgreSQL (ports/storage.py SourceStorage), shared by every server: a claim
takes the row ``FOR UPDATE SKIP LOCKED``, so each due sync runs on one server."""

from __future__ import annotations

import json
import time
from typing import Any

from naturali.model import Source
from naturali.storage import rows as mapping
from naturali.storage.postgres.connection import Database
from naturali.storage.sources import statements

SQL = statements("%s", "FOR UPDATE SKIP LOCKED")


class PostgresSources:
    db: Database

    def create_source(self, source: Source) -> None:
        with self.db.transaction() as conn:
            conn.execute(mapping.source_insert("%s").encode(), mapping.source_row(source))

    def get_source(self, project_id: str, source_id: str) -> Source | None:
        row = self.db.one(SQL.get, project_id, source_id)
        return mapping.source(row) if row else None

    def list_sources(self, project_id: str) -> list[Source]:
        return [mapping.source(r) for r in self.db.all(SQL.list, project_id)]

    def update_source(self, source: Source) -> None:
        args = (mapping.source_spec(source), source.updated_at, source.next_run_at)
        self._write(SQL.update, (*args, source.project_id, source.id))

    def delete_source(self, project_id: str, source_id: str) -> None:
        self._write(SQL.delete, (project_id, source_id))

    def request_source_sync(self, project_id: str, source_id: str, at: float) -> None:
        self._write(SQL.request, (at, project_id, source_id))

    def claim_source(self, owner: str, lease_seconds: float, now: float) -> Source | None:
        with self.db.transaction() as conn:
            row = conn.execute(SQL.due.encode(), (now, now, now)).fetchone()
            if row is None:
                return None
            conn.execute(SQL.claim.encode(), (owner, now + lease_seconds, row["id"]))
        return mapping.source(row)

    def renew_source(self, source_id: str, owner: str, lease_seconds: float) -> bool:
        return self._write(SQL.renew, (time.time() + lease_seconds, source_id, owner)) == 1

    def finish_source(
        self,
        source_id: str,
        owner: str,
        last_run: dict[str, Any],
        cursor: str | None,
        next_run_at: float | None,
        started: float,
    ) -> bool:
        args = (json.dumps(last_run), cursor, next_run_at, started, source_id, owner)
        return self._write(SQL.finish, args) == 1

    def _write(self, sql: str, args: tuple[Any, ...]) -> int:
        with self.db.transaction() as conn:
            return conn.execute(sql.encode(), args).rowcount
