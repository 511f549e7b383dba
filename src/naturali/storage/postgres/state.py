"""A memory store's state with PostgreSQL: what cannot be rebuilt (the mutation journal and
receipts, revision history, Git state, withdrawal and supersession guards, sessions) lives in
the shared database; what can (keyword and temporal projections) stays in a per-server
``state.sqlite`` under the cache dir, rebuilt from the vault files. Writers to one store take
a PostgreSQL advisory lock, so they serialise across hosts."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

from naturali.model import utcnow
from naturali.ports.state import (
    GuardRow,
    JournalEntry,
    MatchMode,
    PlannedWrite,
    ProjectionRow,
    ProjectionTable,
    SessionRow,
    StateFactory,
    StateStore,
    TemporalRow,
)
from naturali.storage.postgres.connection import Database
from naturali.storage.postgres.writes import Connection
from naturali.storage.rows import history_row, mutation_row, planned_write, session_row
from naturali.storage.sqlite.state import SqliteState

_COLUMNS = "request_id, operation, args_hash, plan, state, receipt, git_state, created_at"


def state_factory(db: Database, cache_dir: Path) -> StateFactory:
    """Opens a store's state given ``<stores>/<store_id>/state.sqlite`` (the SQLite layout):
    the durable part in ``db``, the projections in ``cache_dir``."""

    def open_state(path: Path) -> StateStore:
        store_id = path.parent.name
        local = cache_dir / "stores" / store_id / "state.sqlite"
        local.parent.mkdir(parents=True, exist_ok=True)
        return PostgresStoreState(db, store_id, SqliteState(local))

    return open_state


class PostgresStoreState:
    def __init__(self, db: Database, store_id: str, projections: SqliteState) -> None:
        self._db = db
        self._store = store_id
        self._local = projections
        row = db.one("SELECT project_id FROM memory_stores WHERE id = %s", store_id)
        self._project = str(row["project_id"]) if row else ""
        with db.transaction() as conn:
            conn.execute(
                b"INSERT INTO store_meta VALUES (%s, %s, 0) ON CONFLICT DO NOTHING",
                (self._project, store_id),
            )

    @property
    def _key(self) -> tuple[str, str]:
        return (self._project, self._store)

    def idle(self) -> None:
        self._local.idle()

    def close(self) -> None:
        self._local.close()

    @contextmanager
    def write_lock(self) -> Iterator[None]:
        """A session advisory lock on a connection held for the write: one writer per store
        across every server on the database."""
        with self._db.connection() as conn:
            conn.execute(b"SELECT pg_advisory_lock(hashtextextended(%s, 3))", (self._store,))
            try:
                yield
            finally:
                conn.execute(b"SELECT pg_advisory_unlock(hashtextextended(%s, 3))", (self._store,))

    # identity and sessions (the identity is the local cache's) -----------------------------
    def claim_identity(self, store_id: str) -> str:
        return self._local.claim_identity(store_id)

    def record_session(self, session: SessionRow, *, writes: int) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                b"INSERT INTO store_sessions VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
                b"ON CONFLICT (project_id, store_id, session_id) DO UPDATE SET "
                b"last_active_at = excluded.last_active_at, "
                b"writes = store_sessions.writes + excluded.writes",
                (*self._key, *session_row(session, utcnow(), writes)),
            )

    def sessions(self) -> list[SessionRow]:
        rows = self._db.all(
            "SELECT session_id, pid, host, started_at, last_active_at, writes FROM store_sessions "
            "WHERE project_id = %s AND store_id = %s ORDER BY started_at",
            *self._key,
        )
        return [SessionRow(**r) for r in rows]

    # guards ------------------------------------------------------------------------------------
    def guards_version(self) -> int:
        row = self._db.one(
            "SELECT guards_version FROM store_meta WHERE project_id = %s AND store_id = %s",
            *self._key,
        )
        return int(row["guards_version"]) if row else 0

    def guards(self) -> list[GuardRow]:
        rows = self._db.all(
            "SELECT record_id, revision, lifecycle, superseded_by, reason, at FROM store_guards "
            "WHERE project_id = %s AND store_id = %s",
            *self._key,
        )
        return [GuardRow(**r) for r in rows]

    def add_guards(self, guards: list[GuardRow]) -> None:
        with self._db.transaction() as conn:
            for guard in guards:
                self._insert_guard(conn, guard)

    def _insert_guard(self, conn: Connection, guard: GuardRow) -> None:
        conn.execute(
            b"INSERT INTO store_guards VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
            b"ON CONFLICT (project_id, store_id, record_id, lifecycle) DO UPDATE SET "
            b"revision = greatest(store_guards.revision, excluded.revision), "
            b"superseded_by = excluded.superseded_by, reason = excluded.reason, at = excluded.at",
            (
                *self._key,
                guard.record_id,
                guard.lifecycle,
                guard.revision,
                guard.superseded_by,
                guard.reason,
                guard.at,
            ),
        )
        conn.execute(
            b"UPDATE store_meta SET guards_version = guards_version + 1 "
            b"WHERE project_id = %s AND store_id = %s",
            self._key,
        )

    # projections: this server's cache ----------------------------------------------------------
    def projection_version(self, scope: str, table: ProjectionTable) -> tuple[int, str] | None:
        return self._local.projection_version(scope, table)

    def known_fronts(self, digests: Collection[str]) -> dict[str, Any]:
        return self._local.known_fronts(digests)

    def keep_fronts(self, fronts: Mapping[str, Any], live: Collection[str] | None) -> None:
        self._local.keep_fronts(fronts, live)

    def catalogue_match(self) -> str | None:
        return self._local.catalogue_match()  # what this server matched: its own cache

    def keep_catalogue_match(self, stamp: str) -> None:
        self._local.keep_catalogue_match(stamp)

    def reconcile(
        self,
        scope: str,
        table: ProjectionTable,
        wanted: Mapping[str, str],
        load: Callable[[str], ProjectionRow],
    ) -> tuple[int, str, int]:
        return self._local.reconcile(scope, table, wanted, load)

    def match(
        self, scope: str, table: ProjectionTable, tokens: list[str], mode: MatchMode
    ) -> list[tuple[str, float]]:
        return self._local.match(scope, table, tokens, mode)

    def reconcile_temporal(
        self, wanted: Mapping[str, str], load: Callable[[str], TemporalRow], fingerprint: str
    ) -> tuple[int, str]:
        return self._local.reconcile_temporal(wanted, load, fingerprint)

    def temporal_range(
        self, field: str, start: int | None, end: int | None, entity: str | None
    ) -> list[tuple[str, int, int]]:
        return self._local.temporal_range(field, start, end, entity)

    def entity_records(self, entity: str) -> dict[str, str]:
        return self._local.entity_records(entity)

    # the write side ----------------------------------------------------------------------------
    def journal_get(self, request_id: str) -> JournalEntry | None:
        row = self._db.one(
            f"SELECT {_COLUMNS} FROM store_mutations WHERE project_id = %s AND store_id = %s "
            "AND request_id = %s",
            *self._key,
            request_id,
        )
        return _entry(row) if row else None

    def journal_begin(self, entry: JournalEntry) -> None:
        plan = {
            "writes": [asdict(w) for w in entry.writes],
            "guards": [asdict(g) for g in entry.guards],
        }
        with self._db.transaction() as conn:
            conn.execute(
                b"INSERT INTO store_mutations VALUES "
                b"(%s, %s, %s, %s, %s, %s, 'journaled', NULL, NULL, %s, %s)",
                (*self._key, *mutation_row(entry, json.dumps(plan))),
            )

    def journal_record(self, request_id: str, receipt: dict[str, Any]) -> None:
        entry = self.journal_get(request_id)
        assert entry is not None
        with self._db.transaction() as conn:
            conn.execute(
                b"UPDATE store_mutations SET state = 'recorded', receipt = %s, git_state = %s, "
                b"updated_at = %s WHERE project_id = %s AND store_id = %s AND request_id = %s",
                (json.dumps(receipt), receipt["git"]["state"], utcnow(), *self._key, request_id),
            )
            for w in entry.writes:
                conn.execute(
                    b"INSERT INTO store_history VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                    b"ON CONFLICT (project_id, store_id, record_id, revision) DO UPDATE SET "
                    b"request_id = excluded.request_id, operation = excluded.operation, "
                    b"lifecycle = excluded.lifecycle, path = excluded.path, "
                    b"sha256 = excluded.sha256, at = excluded.at",
                    (*self._key, *history_row(w, request_id, entry.operation, receipt["at"])),
                )
            for guard in entry.guards:
                self._insert_guard(conn, guard)

    def journal_incomplete(self) -> list[JournalEntry]:
        rows = self._db.all(
            f"SELECT {_COLUMNS} FROM store_mutations WHERE project_id = %s AND store_id = %s "
            "AND state = 'journaled' ORDER BY created_at",
            *self._key,
        )
        return [_entry(r) for r in rows]

    def journal_set_git(self, request_ids: list[str], git: dict[str, Any]) -> None:
        with self._db.transaction() as conn:
            for request_id in request_ids:
                row = conn.execute(
                    b"SELECT receipt FROM store_mutations WHERE project_id = %s "
                    b"AND store_id = %s AND request_id = %s",
                    (*self._key, request_id),
                ).fetchone()
                if row is None or row["receipt"] is None:
                    continue
                receipt = {**json.loads(row["receipt"]), "git": git}
                conn.execute(
                    b"UPDATE store_mutations SET receipt = %s, git_state = %s, updated_at = %s "
                    b"WHERE project_id = %s AND store_id = %s AND request_id = %s",
                    (json.dumps(receipt), git["state"], utcnow(), *self._key, request_id),
                )

    def journal_git_pending(self) -> list[str]:
        rows = self._db.all(
            "SELECT request_id FROM store_mutations WHERE project_id = %s AND store_id = %s "
            "AND git_state = 'pending' ORDER BY created_at",
            *self._key,
        )
        return [str(r["request_id"]) for r in rows]

    def revisions_at(self, instant: str) -> list[PlannedWrite]:
        rows = self._db.all(
            "SELECT DISTINCT ON (h.record_id) h.record_id, h.revision, m.plan "
            "FROM store_history h JOIN store_mutations m ON m.project_id = h.project_id "
            "AND m.store_id = h.store_id AND m.request_id = h.request_id "
            "WHERE h.project_id = %s AND h.store_id = %s AND h.at <= %s "
            "ORDER BY h.record_id, h.revision DESC",
            *self._key,
            instant,
        )
        return [planned_write(json.loads(r["plan"]), r["record_id"], r["revision"]) for r in rows]

    def history(self, record_id: str) -> list[dict[str, Any]]:
        rows = self._db.all(
            "SELECT h.revision, h.request_id, h.operation, h.lifecycle, h.path, h.sha256, h.at, "
            "m.receipt FROM store_history h LEFT JOIN store_mutations m ON "
            "m.project_id = h.project_id AND m.store_id = h.store_id "
            "AND m.request_id = h.request_id "
            "WHERE h.project_id = %s AND h.store_id = %s AND h.record_id = %s ORDER BY h.revision",
            *self._key,
            record_id,
        )
        return [
            {
                "revision": r["revision"],
                "requestId": r["request_id"],
                "operation": r["operation"],
                "lifecycle": r["lifecycle"],
                "path": r["path"],
                "sha256": r["sha256"],
                "at": r["at"],
                "receipt": json.loads(r["receipt"]) if r["receipt"] else None,
            }
            for r in rows
        ]


def _entry(row: dict[str, Any]) -> JournalEntry:
    plan = json.loads(row["plan"])
    return JournalEntry(
        request_id=row["request_id"],
        operation=row["operation"],
        args_hash=row["args_hash"],
        writes=tuple(PlannedWrite(**w) for w in plan["writes"]),
        guards=tuple(GuardRow(**g) for g in plan["guards"]),
        state=row["state"],
        receipt=json.loads(row["receipt"]) if row["receipt"] else None,
        created_at=row["created_at"],
    )
