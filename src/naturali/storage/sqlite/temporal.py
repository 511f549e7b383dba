"""The temporal projections of ``state.sqlite`` (rebuildable): record dates and entity
associations, reconciled per record by content hash."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping
from typing import Any

from naturali.model import utcnow
from naturali.ports.state import TemporalRow

TABLES = ("temporal_rows_v1", "temporal_dates_v1", "temporal_entities_v1")


def _create(conn: sqlite3.Connection) -> None:
    for name in TABLES:
        conn.execute(f"DROP TABLE IF EXISTS {name}")
    conn.execute(
        "CREATE TABLE temporal_rows_v1 (record_id TEXT PRIMARY KEY, content_hash TEXT NOT NULL)"
    )
    conn.execute(
        "CREATE TABLE temporal_dates_v1 (record_id TEXT NOT NULL, field TEXT NOT NULL, "
        "start_us INTEGER NOT NULL, end_us INTEGER NOT NULL, date_only INTEGER NOT NULL)"
    )
    conn.execute("CREATE INDEX temporal_dates_v1_range ON temporal_dates_v1 (field, start_us)")
    conn.execute("CREATE INDEX temporal_dates_v1_record ON temporal_dates_v1 (record_id)")
    conn.execute(
        "CREATE TABLE temporal_entities_v1 (record_id TEXT NOT NULL, "
        "entity_id TEXT NOT NULL, via TEXT NOT NULL)"
    )
    conn.execute("CREATE INDEX temporal_entities_v1_entity ON temporal_entities_v1 (entity_id)")
    conn.execute("CREATE INDEX temporal_entities_v1_record ON temporal_entities_v1 (record_id)")


class TemporalProjection:
    def __init__(self) -> None:
        self._rows: tuple[int, dict[str, str]] | None = None  # counter, record id → hash

    def reconcile(
        self,
        conn: sqlite3.Connection,
        wanted: Mapping[str, str],
        load: Callable[[str], TemporalRow],
        fingerprint: str,
    ) -> tuple[int, str]:
        state = conn.execute(
            "SELECT fingerprint, counter, indexed_at FROM keyword_state_v1 "
            "WHERE scope = 'temporal' AND tbl = 'temporal'"
        ).fetchone()
        present = conn.execute(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN (?, ?, ?)",
            TABLES,
        ).fetchone()[0]
        if state is None or state[0] != fingerprint or present != len(TABLES):
            _create(conn)
            state = None
        current = self._current(conn, state)
        stale = [rid for rid, h in current.items() if wanted.get(rid) != h]
        fresh = [load(rid) for rid, h in wanted.items() if current.get(rid) != h]
        for rid in stale:
            for name in TABLES:
                conn.execute(f"DELETE FROM {name} WHERE record_id = ?", (rid,))
            del current[rid]
        for row in fresh:
            self._insert(conn, row)
            current[row.record_id] = row.content_hash
        if state is not None and not stale and not fresh:
            return int(state[1]), str(state[2])
        counter = (int(state[1]) if state else 0) + 1
        indexed_at = utcnow()
        conn.execute(
            "INSERT INTO keyword_state_v1 VALUES ('temporal', 'temporal', ?, ?, ?) "
            "ON CONFLICT (scope, tbl) DO UPDATE SET fingerprint = excluded.fingerprint, "
            "counter = excluded.counter, indexed_at = excluded.indexed_at",
            (fingerprint, counter, indexed_at),
        )
        self._rows = (counter, current)
        return counter, indexed_at

    def _current(self, conn: sqlite3.Connection, state: Any) -> dict[str, str]:
        if state is not None and self._rows is not None and self._rows[0] == int(state[1]):
            return dict(self._rows[1])
        return dict(conn.execute("SELECT record_id, content_hash FROM temporal_rows_v1"))

    @staticmethod
    def _insert(conn: sqlite3.Connection, row: TemporalRow) -> None:
        conn.execute(
            "INSERT INTO temporal_rows_v1 VALUES (?, ?)", (row.record_id, row.content_hash)
        )
        conn.executemany(
            "INSERT INTO temporal_dates_v1 VALUES (?, ?, ?, ?, ?)",
            [(row.record_id, f, s, e, int(d)) for f, s, e, d in row.dates],
        )
        conn.executemany(
            "INSERT INTO temporal_entities_v1 VALUES (?, ?, ?)",
            [(row.record_id, entity, via) for entity, via in row.entities],
        )

    @staticmethod
    def range(
        conn: sqlite3.Connection,
        field: str,
        start: int | None,
        end: int | None,
        entity: str | None,
    ) -> list[tuple[str, int, int]]:
        sql = "SELECT d.record_id, d.start_us, d.end_us FROM temporal_dates_v1 d WHERE d.field = ?"
        args: list[Any] = [field]
        if end is not None:
            sql += " AND d.start_us < ?"
            args.append(end)
        if start is not None:
            sql += " AND d.end_us > ?"
            args.append(start)
        if entity is not None:
            sql += (
                " AND d.record_id IN (SELECT record_id FROM temporal_entities_v1 "
                "WHERE entity_id = ?)"
            )
            args.append(entity)
        sql += " ORDER BY d.start_us, d.record_id"
        return [(str(r[0]), int(r[1]), int(r[2])) for r in conn.execute(sql, args)]

    @staticmethod
    def entity_records(conn: sqlite3.Connection, entity: str) -> dict[str, str]:
        rows = conn.execute(
            "SELECT record_id, via FROM temporal_entities_v1 WHERE entity_id = ?", (entity,)
        )
        return {str(r[0]): str(r[1]) for r in rows}
