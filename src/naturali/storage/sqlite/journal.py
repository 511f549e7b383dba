"""The write side of ``state.sqlite`` (never rebuilt): the mutation journal with its receipts,
and each record's revision history."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict
from typing import Any

from naturali.model import utcnow
from naturali.ports.state import GuardRow, JournalEntry, PlannedWrite
from naturali.storage.rows import history_row, mutation_row, planned_write

SCHEMA = """
CREATE TABLE IF NOT EXISTS mutations_v1 (
    request_id TEXT PRIMARY KEY, operation TEXT NOT NULL, args_hash TEXT NOT NULL,
    plan TEXT NOT NULL, state TEXT NOT NULL, receipt TEXT, git_state TEXT,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS mutations_v1_state ON mutations_v1 (state);
CREATE INDEX IF NOT EXISTS mutations_v1_git ON mutations_v1 (git_state);
CREATE TABLE IF NOT EXISTS history_v1 (
    record_id TEXT NOT NULL, revision INTEGER NOT NULL, request_id TEXT NOT NULL,
    operation TEXT NOT NULL, lifecycle TEXT NOT NULL, path TEXT NOT NULL, sha256 TEXT NOT NULL,
    at TEXT NOT NULL, PRIMARY KEY (record_id, revision)
);
"""


def _entry(row: sqlite3.Row | tuple[Any, ...]) -> JournalEntry:
    plan = json.loads(row[3])
    return JournalEntry(
        request_id=row[0],
        operation=row[1],
        args_hash=row[2],
        writes=tuple(PlannedWrite(**w) for w in plan["writes"]),
        guards=tuple(GuardRow(**g) for g in plan["guards"]),
        state=row[4],
        receipt=json.loads(row[5]) if row[5] else None,
        created_at=row[7],
    )


_COLUMNS = "request_id, operation, args_hash, plan, state, receipt, git_state, created_at"


def get(conn: sqlite3.Connection, request_id: str) -> JournalEntry | None:
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM mutations_v1 WHERE request_id = ?", (request_id,)
    ).fetchone()
    return _entry(row) if row else None


def begin(conn: sqlite3.Connection, entry: JournalEntry) -> None:
    plan = {
        "writes": [asdict(w) for w in entry.writes],
        "guards": [asdict(g) for g in entry.guards],
    }
    conn.execute(
        "INSERT INTO mutations_v1 VALUES (?, ?, ?, ?, 'journaled', NULL, NULL, ?, ?)",
        mutation_row(entry, json.dumps(plan)),
    )


def record(conn: sqlite3.Connection, request_id: str, receipt: dict[str, Any]) -> list[GuardRow]:
    entry = get(conn, request_id)
    assert entry is not None
    conn.execute(
        "UPDATE mutations_v1 SET state = 'recorded', receipt = ?, git_state = ?, "
        "updated_at = ? WHERE request_id = ?",
        (json.dumps(receipt), receipt["git"]["state"], utcnow(), request_id),
    )
    conn.executemany(
        "INSERT OR REPLACE INTO history_v1 VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [history_row(w, request_id, entry.operation, receipt["at"]) for w in entry.writes],
    )
    return list(entry.guards)


def incomplete(conn: sqlite3.Connection) -> list[JournalEntry]:
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM mutations_v1 WHERE state = 'journaled' ORDER BY created_at"
    ).fetchall()
    return [_entry(r) for r in rows]


def set_git(conn: sqlite3.Connection, request_ids: list[str], git: dict[str, Any]) -> None:
    for request_id in request_ids:
        row = conn.execute(
            "SELECT receipt FROM mutations_v1 WHERE request_id = ?", (request_id,)
        ).fetchone()
        if row is None or row[0] is None:
            continue
        receipt = json.loads(row[0])
        receipt["git"] = git
        conn.execute(
            "UPDATE mutations_v1 SET receipt = ?, git_state = ?, updated_at = ? "
            "WHERE request_id = ?",
            (json.dumps(receipt), git["state"], utcnow(), request_id),
        )


def git_pending(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute(
        "SELECT request_id FROM mutations_v1 WHERE git_state = 'pending' ORDER BY created_at"
    ).fetchall()
    return [str(r[0]) for r in rows]


def history(conn: sqlite3.Connection, record_id: str) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT h.revision, h.request_id, h.operation, h.lifecycle, h.path, h.sha256, h.at, "
        "m.receipt FROM history_v1 h LEFT JOIN mutations_v1 m ON m.request_id = h.request_id "
        "WHERE h.record_id = ? ORDER BY h.revision",
        (record_id,),
    ).fetchall()
    return [
        {
            "revision": r[0],
            "requestId": r[1],
            "operation": r[2],
            "lifecycle": r[3],
            "path": r[4],
            "sha256": r[5],
            "at": r[6],
            "receipt": json.loads(r[7]) if r[7] else None,
        }
        for r in rows
    ]


def revisions_at(conn: sqlite3.Connection, instant: str) -> list[PlannedWrite]:
    rows = conn.execute(
        "SELECT h.record_id, h.revision, m.plan FROM history_v1 h "
        "JOIN mutations_v1 m ON m.request_id = h.request_id "
        "WHERE h.revision = (SELECT MAX(revision) FROM history_v1 l "
        "WHERE l.record_id = h.record_id AND l.at <= ?) ORDER BY h.record_id",
        (instant,),
    ).fetchall()
    return [planned_write(json.loads(plan), record, revision) for record, revision, plan in rows]
