"""Sources in ``catalog.sqlite`` (ports/storage.py SourceStorage); ``BEGIN IMMEDIATE``
serialises every claim, so no two workers hold one sync."""

from __future__ import annotations

import json
import time
from typing import Any

from naturali.model import Source
from naturali.storage import rows as mapping
from naturali.storage.sources import statements
from naturali.storage.sqlite.connection import Database

SQL = statements("?")


class SqliteSources:
    db: Database

    def create_source(self, source: Source) -> None:
        with self.db.write() as conn:
            conn.execute(mapping.source_insert("?"), mapping.source_row(source))

    def get_source(self, project_id: str, source_id: str) -> Source | None:
        row = self.db.conn().execute(SQL.get, (project_id, source_id)).fetchone()
        return mapping.source(row) if row else None

    def list_sources(self, project_id: str) -> list[Source]:
        return [mapping.source(r) for r in self.db.conn().execute(SQL.list, (project_id,))]

    def update_source(self, source: Source) -> None:
        spec = mapping.source_spec(source)
        with self.db.write() as conn:
            conn.execute(
                SQL.update,
                (spec, source.updated_at, source.next_run_at, source.project_id, source.id),
            )

    def delete_source(self, project_id: str, source_id: str) -> None:
        with self.db.write() as conn:
            conn.execute(SQL.delete, (project_id, source_id))

    def request_source_sync(self, project_id: str, source_id: str, at: float) -> None:
        with self.db.write() as conn:
            conn.execute(SQL.request, (at, project_id, source_id))

    def claim_source(self, owner: str, lease_seconds: float, now: float) -> Source | None:
        with self.db.write() as conn:
            row = conn.execute(SQL.due, (now, now, now)).fetchone()
            if row is None:
                return None
            conn.execute(SQL.claim, (owner, now + lease_seconds, row["id"]))
        return mapping.source(row)

    def renew_source(self, source_id: str, owner: str, lease_seconds: float) -> bool:
        with self.db.write() as conn:
            until = time.time() + lease_seconds
            return conn.execute(SQL.renew, (until, source_id, owner)).rowcount == 1

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
        with self.db.write() as conn:
            return conn.execute(SQL.finish, args).rowcount == 1
