"""Sources and their syncs (ports/storage.py SourceStorage), on either backend: a sync is due
when asked for (``requested_at``) or when its schedule says (``next_run_at``), and is held by
one server on a lease (one sync of a project at a time) — a server that dies leaves it due,
taken again when the lease runs out; finishing it records the run and releases it. A claim is
serialised by SQLite's one writer, and by ``FOR UPDATE SKIP LOCKED`` on PostgreSQL."""

from __future__ import annotations

import json
import time
from typing import Any

from naturali.model import Source
from naturali.storage import rows as mapping
from naturali.storage.sql import Aggregate

GET = "SELECT * FROM sources WHERE project_id = ? AND id = ?"
LIST = "SELECT * FROM sources WHERE project_id = ? ORDER BY created_at, id"
UPDATE = (
    "UPDATE sources SET spec = ?, updated_at = ?, next_run_at = ? WHERE project_id = ? AND id = ?"
)
DELETE = "DELETE FROM sources WHERE project_id = ? AND id = ?"
REQUEST = "UPDATE sources SET requested_at = ? WHERE project_id = ? AND id = ?"
# One sync of a project at a time, on every server: a slow or endless source holds up its own
# project's next sync, never another's.
DUE = (
    "SELECT * FROM sources s WHERE (requested_at IS NOT NULL OR next_run_at <= ?) "
    "AND (owner IS NULL OR lease_until < ?) AND NOT EXISTS (SELECT 1 FROM sources h "
    "WHERE h.project_id = s.project_id AND h.owner IS NOT NULL AND h.lease_until >= ?) "
    "ORDER BY coalesce(requested_at, next_run_at) LIMIT 1 "
)
CLAIM = "UPDATE sources SET owner = ?, lease_until = ? WHERE id = ?"
RENEW = "UPDATE sources SET lease_until = ? WHERE id = ? AND owner = ?"
# A request made before the run began is answered by it; one made since stays.
FINISH = (
    "UPDATE sources SET owner = NULL, lease_until = NULL, last_run = ?, cursor = ?, "
    "next_run_at = ?, requested_at = CASE WHEN requested_at <= ? THEN NULL ELSE requested_at "
    "END WHERE id = ? AND owner = ?"
)


class Sources(Aggregate):
    def create_source(self, source: Source) -> None:
        self._write(mapping.source_insert("?"), mapping.source_row(source))

    def get_source(self, project_id: str, source_id: str) -> Source | None:
        row = self.db.row(GET, project_id, source_id)
        return mapping.source(row) if row else None

    def list_sources(self, project_id: str) -> list[Source]:
        return [mapping.source(r) for r in self.db.rows(LIST, project_id)]

    def update_source(self, source: Source) -> None:
        args = (mapping.source_spec(source), source.updated_at, source.next_run_at)
        self._write(UPDATE, (*args, source.project_id, source.id))

    def delete_source(self, project_id: str, source_id: str) -> None:
        self._write(DELETE, (project_id, source_id))

    def request_source_sync(self, project_id: str, source_id: str, at: float) -> None:
        self._write(REQUEST, (at, project_id, source_id))

    def claim_source(self, owner: str, lease_seconds: float, now: float) -> Source | None:
        # Each of a server's sync workers asks at every poll, and mostly nothing is due: a
        # read says so without taking the catalogue's write lock (SQLite's is the database's).
        if self.db.row(DUE, now, now, now) is None:
            return None
        dialect = self.db.dialect
        locked = f"{dialect.for_update} {dialect.skip_locked}"
        with self.db.writing() as conn:
            # Claims one after another: "none of its project's is held" must see the claim
            # another worker made a moment ago, which a row lock alone would not show.
            if dialect.serialise_claims:
                conn.execute(dialect.serialise_claims)
            row = conn.execute(DUE + locked, (now, now, now)).fetchone()
            if row is None:
                return None
            conn.execute(CLAIM, (owner, now + lease_seconds, row["id"]))
        return mapping.source(row)

    def renew_source(self, source_id: str, owner: str, lease_seconds: float) -> bool:
        return self._write(RENEW, (time.time() + lease_seconds, source_id, owner)) == 1

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
        return self._write(FINISH, args) == 1

    def _write(self, sql: str, args: tuple[Any, ...]) -> int:
        with self.db.writing() as conn:
            return conn.execute(sql, args).rowcount
