"""A memory store's ``state.sqlite``: per-scope FTS5 keyword projections (rebuildable) and the
withdrawal and supersession guards (never dropped: they cannot be rebuilt from files)."""

from __future__ import annotations

import fcntl
import json
import re
import sqlite3
import zlib
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
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
    ProjectionUnavailable,
    SessionRow,
    TemporalRow,
)
from naturali.storage.rows import session_row
from naturali.storage.sqlite import journal
from naturali.storage.sqlite.connection import Database
from naturali.storage.sqlite.temporal import TemporalProjection
from naturali.text.languages import segmented

_SCHEMA = """
CREATE TABLE IF NOT EXISTS keyword_state_v1 (
    scope TEXT NOT NULL,
    tbl TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    counter INTEGER NOT NULL,
    indexed_at TEXT NOT NULL,
    PRIMARY KEY (scope, tbl)
);
CREATE TABLE IF NOT EXISTS keyword_withdrawals_v1 (
    record_id TEXT PRIMARY KEY, revision INTEGER NOT NULL, reason TEXT NOT NULL, at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS lifecycle_guards_v1 (
    record_id TEXT PRIMARY KEY, revision INTEGER NOT NULL, superseded_by TEXT,
    reason TEXT NOT NULL, at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS state_meta_v1 (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT OR IGNORE INTO state_meta_v1 VALUES ('guards_version', 0);
CREATE TABLE IF NOT EXISTS store_identity_v1 (
    singleton INTEGER PRIMARY KEY CHECK (singleton = 1), store_id TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS parsed_fronts_v1 (digest TEXT PRIMARY KEY, front TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS catalogue_match_v1 (
    singleton INTEGER PRIMARY KEY CHECK (singleton = 1), stamp TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS session_activity_v1 (
    session_id TEXT PRIMARY KEY, pid INTEGER NOT NULL, host TEXT NOT NULL,
    started_at TEXT NOT NULL, last_active_at TEXT NOT NULL, writes INTEGER NOT NULL
);
"""
_STATEMENTS = [s for s in (_SCHEMA + journal.SCHEMA).split(";") if s.strip()]
# The schema's own digest: a state made by a version with other tables is brought up to this
# one (every statement is idempotent) on its next open.
_SCHEMA_VERSION = zlib.crc32("".join(_STATEMENTS).encode()) & 0x7FFFFFFF
_BATCH = 500  # digests a query asks for: under SQLite's bound on a statement's parameters
_SCOPE = re.compile(r"^[a-z0-9]{1,32}$")
# BM25 weights: title 8, aliases 6, body 1 (docs/spec/retrieval-and-dates.md).
MAX_SCOPES = 32
_WEIGHTS = "8.0, 6.0, 1.0"
# What a keyword projection was built with: a projection of another fingerprint is rebuilt.
# Runs of the scripts written without spaces are indexed as their pairs of characters
# (text/languages.py ``segmented``), so a word of two or more characters is found in them.
FINGERPRINT = "keyword-v2:unicode61-remove_diacritics-2:pairs:title,aliases,body:8,6,1"


def _as_json(front: Any) -> str | None:
    """``front`` as JSON when JSON gives it back as it is (not a mapping with a number for a
    key, a tuple, bytes or NaN: those are parsed again each time). ASCII, so that a lone
    surrogate YAML can spell is escaped, not refused by SQLite's UTF-8."""
    try:
        text = json.dumps(front)
    except (TypeError, ValueError):
        return None
    return text if json.loads(text) == front else None


@contextmanager
def _unavailable() -> Iterator[None]:
    try:
        yield
    except sqlite3.Error as exc:
        raise ProjectionUnavailable(str(exc)) from exc


def _names(scope: str, table: ProjectionTable) -> tuple[str, str]:
    if not _SCOPE.match(scope):
        raise ValueError(f"bad scope key {scope!r}")
    infix = "" if table == "searched" else "history_"
    return f"keyword_{infix}fts_v1_{scope}", f"keyword_{infix}rows_v1_{scope}"


class SqliteState:
    def __init__(self, path: Path) -> None:
        self._path = path
        self.db = Database(path)
        self._rows: dict[tuple[str, ProjectionTable], tuple[int, dict[str, tuple[str, int]]]] = {}
        self._temporal = TemporalProjection()
        # Opening a state only reads when its schema is this version's: a search that opens a
        # store writes nothing, and closing it has no WAL to checkpoint (~1 ms of fsyncs).
        if self.db.conn().execute("PRAGMA user_version").fetchone()[0] != _SCHEMA_VERSION:
            with self.db.write() as conn:
                for statement in _STATEMENTS:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")

    def idle(self) -> None:
        self.db.close_others()

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def write_lock(self) -> Iterator[None]:
        """flock on the store's own lock file (threads and processes of one host)."""
        with (self._path.parent / "write.lock").open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    # identity and sessions ----------------------------------------------------------------------
    def claim_identity(self, store_id: str) -> str:
        """The store this state belongs to: set on first open, then only read."""
        row = self.db.conn().execute("SELECT store_id FROM store_identity_v1").fetchone()
        if row is not None:
            return str(row[0])
        with self.db.write() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO store_identity_v1 VALUES (1, ?, ?)", (store_id, utcnow())
            )
            row = conn.execute("SELECT store_id FROM store_identity_v1").fetchone()
        return str(row[0])

    def record_session(self, session: SessionRow, *, writes: int) -> None:
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO session_activity_v1 VALUES (?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (session_id) DO UPDATE SET last_active_at = excluded.last_active_at,"
                " writes = writes + excluded.writes",
                session_row(session, utcnow(), writes),
            )

    def sessions(self) -> list[SessionRow]:
        rows = self.db.conn().execute(
            "SELECT session_id, pid, host, started_at, last_active_at, writes"
            " FROM session_activity_v1 ORDER BY started_at"
        )
        return [SessionRow(*r) for r in rows]

    # guards ------------------------------------------------------------------------------------
    def add_guards(self, guards: list[GuardRow]) -> None:
        with self.db.write() as conn:
            for guard in guards:
                self._insert_guard(conn, guard)

    def guards_version(self) -> int:
        row = (
            self.db.conn()
            .execute("SELECT value FROM state_meta_v1 WHERE key = 'guards_version'")
            .fetchone()
        )
        return int(row[0]) if row else 0

    def guards(self) -> list[GuardRow]:
        conn = self.db.conn()
        out = [
            GuardRow(r[0], r[1], "withdrawn", None, r[2], r[3])
            for r in conn.execute(
                "SELECT record_id, revision, reason, at FROM keyword_withdrawals_v1"
            )
        ]
        out += [
            GuardRow(r[0], r[1], "superseded", r[2], r[3], r[4])
            for r in conn.execute(
                "SELECT record_id, revision, superseded_by, reason, at FROM lifecycle_guards_v1"
            )
        ]
        return out

    @staticmethod
    def _insert_guard(conn: sqlite3.Connection, guard: GuardRow) -> None:
        if guard.lifecycle == "withdrawn":
            conn.execute(
                "INSERT INTO keyword_withdrawals_v1 VALUES (?, ?, ?, ?) ON CONFLICT (record_id)"
                " DO UPDATE SET revision = max(revision, excluded.revision),"
                " reason = excluded.reason, at = excluded.at",
                (guard.record_id, guard.revision, guard.reason, guard.at),
            )
        else:
            conn.execute(
                "INSERT INTO lifecycle_guards_v1 VALUES (?, ?, ?, ?, ?) ON CONFLICT (record_id)"
                " DO UPDATE SET revision = max(revision, excluded.revision),"
                " superseded_by = excluded.superseded_by, reason = excluded.reason,"
                " at = excluded.at",
                (guard.record_id, guard.revision, guard.superseded_by, guard.reason, guard.at),
            )
        conn.execute("UPDATE state_meta_v1 SET value = value + 1 WHERE key = 'guards_version'")

    # projections -------------------------------------------------------------------------------
    def projection_version(self, scope: str, table: ProjectionTable) -> tuple[int, str] | None:
        fts, _ = _names(scope, table)
        conn = self.db.conn()
        row = conn.execute(
            "SELECT counter, indexed_at FROM keyword_state_v1 WHERE scope = ? AND tbl = ?",
            (scope, table),
        ).fetchone()
        if row is None:
            return None
        exists = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (fts,)
        ).fetchone()
        return (int(row[0]), str(row[1])) if exists else None

    def reconcile(
        self,
        scope: str,
        table: ProjectionTable,
        wanted: Mapping[str, str],
        load: Callable[[str], ProjectionRow],
    ) -> tuple[int, str, int]:
        fts, ids = _names(scope, table)
        with _unavailable(), self.db.write() as conn:
            state = conn.execute(
                "SELECT fingerprint, counter, indexed_at FROM keyword_state_v1 "
                "WHERE scope = ? AND tbl = ?",
                (scope, table),
            ).fetchone()
            exists = (
                conn.execute(
                    "SELECT count(*) FROM sqlite_master WHERE name IN (?, ?)", (fts, ids)
                ).fetchone()[0]
                == 2
            )
            if state is None or state[0] != FINGERPRINT or not exists:
                if state is None:
                    self._evict(conn, keep=scope)
                self._create(conn, fts, ids)
                state = None
            current = self._current_rows(conn, scope, table, ids, state)
            stale = [(rid, rowid) for rid, (h, rowid) in current.items() if wanted.get(rid) != h]
            fresh = [load(rid) for rid, h in wanted.items() if current.get(rid, ("", 0))[0] != h]
            for rid, rowid in stale:
                conn.execute(f"DELETE FROM {fts} WHERE rowid = ?", (rowid,))
                conn.execute(f"DELETE FROM {ids} WHERE rowid = ?", (rowid,))
                del current[rid]
            for r in fresh:
                cursor = conn.execute(
                    f"INSERT INTO {ids} (record_id, content_hash) VALUES (?, ?)",
                    (r.record_id, r.content_hash),
                )
                conn.execute(
                    f"INSERT INTO {fts} (rowid, title, aliases, body) VALUES (?, ?, ?, ?)",
                    (cursor.lastrowid, *map(segmented, (r.title, r.aliases, r.body))),
                )
                current[r.record_id] = (r.content_hash, int(cursor.lastrowid or 0))
            if state is not None and not stale and not fresh:
                return int(state[1]), str(state[2]), 0
            counter = (int(state[1]) if state else 0) + 1
            indexed_at = utcnow()
            conn.execute(
                "INSERT INTO keyword_state_v1 VALUES (?, ?, ?, ?, ?) ON CONFLICT (scope, tbl) "
                "DO UPDATE SET fingerprint = excluded.fingerprint, counter = excluded.counter, "
                "indexed_at = excluded.indexed_at",
                (scope, table, FINGERPRINT, counter, indexed_at),
            )
            self._rows[(scope, table)] = (counter, current)
            return counter, indexed_at, len(fresh)

    def _evict(self, conn: sqlite3.Connection, keep: str) -> None:
        """Each filter set has its own projection; keep at most MAX_SCOPES of them by dropping
        the least recently changed (a dropped projection is rebuilt if asked for again)."""
        scopes = conn.execute(
            "SELECT scope, max(indexed_at) AS at FROM keyword_state_v1 "
            "WHERE scope NOT IN ('temporal', ?) GROUP BY scope ORDER BY at",
            (keep,),
        ).fetchall()
        for scope, _ in scopes[: max(0, len(scopes) - MAX_SCOPES + 1)]:
            for table in ("searched", "history"):
                fts, ids = _names(str(scope), table)
                conn.execute(f"DROP TABLE IF EXISTS {fts}")
                conn.execute(f"DROP TABLE IF EXISTS {ids}")
                self._rows.pop((str(scope), table), None)
            conn.execute("DELETE FROM keyword_state_v1 WHERE scope = ?", (scope,))

    @staticmethod
    def _create(conn: sqlite3.Connection, fts: str, ids: str) -> None:
        conn.execute(f"DROP TABLE IF EXISTS {fts}")
        conn.execute(f"DROP TABLE IF EXISTS {ids}")
        conn.execute(
            f"CREATE VIRTUAL TABLE {fts} USING fts5(title, aliases, body, "
            "tokenize = 'unicode61 remove_diacritics 2')"
        )
        conn.execute(
            f"CREATE TABLE {ids} (rowid INTEGER PRIMARY KEY, record_id TEXT UNIQUE NOT NULL, "
            "content_hash TEXT NOT NULL)"
        )

    def _current_rows(
        self, conn: sqlite3.Connection, scope: str, table: ProjectionTable, ids: str, state: Any
    ) -> dict[str, tuple[str, int]]:
        """The projection's (hash, rowid) per record: from memory when the stored counter
        says nobody (no other process) changed it since we last wrote it."""
        cached = self._rows.get((scope, table))
        if state is not None and cached is not None and cached[0] == int(state[1]):
            return dict(cached[1])
        return {
            r[0]: (r[1], r[2])
            for r in conn.execute(f"SELECT record_id, content_hash, rowid FROM {ids}")
        }

    def match(
        self, scope: str, table: ProjectionTable, tokens: list[str], mode: MatchMode
    ) -> list[tuple[str, float]]:
        fts, ids = _names(scope, table)
        with _unavailable():
            return self._match(fts, ids, _expression(tokens, mode))

    def _match(self, fts: str, ids: str, expression: str) -> list[tuple[str, float]]:
        rows = (
            self.db.conn()
            .execute(
                f"SELECT r.record_id, -bm25({fts}, {_WEIGHTS}) AS score FROM {fts} f "
                f"JOIN {ids} r ON r.rowid = f.rowid WHERE {fts} MATCH ? "
                "ORDER BY score DESC, r.record_id",
                (expression,),
            )
            .fetchall()
        )
        return [(str(r[0]), float(r[1])) for r in rows]

    # parsed front matter (vault/fronts.py) ------------------------------------------------------
    def known_fronts(self, digests: Collection[str]) -> dict[str, Any]:
        found: dict[str, Any] = {}
        wanted = list(digests)
        with _unavailable():
            conn = self.db.conn()
            for at in range(0, len(wanted), _BATCH):
                batch = wanted[at : at + _BATCH]
                marks = ",".join("?" * len(batch))
                query = f"SELECT digest, front FROM parsed_fronts_v1 WHERE digest IN ({marks})"
                found.update((d, json.loads(f)) for d, f in conn.execute(query, batch))
        return found

    def keep_fronts(self, fronts: Mapping[str, Any], live: Collection[str] | None) -> None:
        rows = [(d, text) for d, front in fronts.items() if (text := _as_json(front)) is not None]
        with _unavailable():
            stale: list[tuple[str]] = []
            if live is not None:  # read first: a store opened with nothing new writes nothing
                held = self.db.conn().execute("SELECT digest FROM parsed_fronts_v1")
                stale = [(d,) for (d,) in held if d not in live]
            if not rows and not stale:
                return
            with self.db.write() as conn:
                conn.executemany("INSERT OR REPLACE INTO parsed_fronts_v1 VALUES (?, ?)", rows)
                conn.executemany("DELETE FROM parsed_fronts_v1 WHERE digest = ?", stale)

    def catalogue_match(self) -> str | None:
        with _unavailable():
            row = self.db.conn().execute("SELECT stamp FROM catalogue_match_v1").fetchone()
        return str(row[0]) if row else None

    def keep_catalogue_match(self, stamp: str) -> None:
        if self.catalogue_match() == stamp:
            return  # read first: a store searched again as it was writes nothing
        with _unavailable(), self.db.write() as conn:
            conn.execute("INSERT OR REPLACE INTO catalogue_match_v1 VALUES (1, ?)", (stamp,))

    # temporal projections ----------------------------------------------------------------------
    def reconcile_temporal(
        self, wanted: Mapping[str, str], load: Callable[[str], TemporalRow], fingerprint: str
    ) -> tuple[int, str]:
        with _unavailable(), self.db.write() as conn:
            return self._temporal.reconcile(conn, wanted, load, fingerprint)

    def temporal_range(
        self, field: str, start: int | None, end: int | None, entity: str | None
    ) -> list[tuple[str, int, int]]:
        with _unavailable():
            return self._temporal.range(self.db.conn(), field, start, end, entity)

    def entity_records(self, entity: str) -> dict[str, str]:
        with _unavailable():
            return self._temporal.entity_records(self.db.conn(), entity)

    # the write side ----------------------------------------------------------------------------
    def journal_get(self, request_id: str) -> JournalEntry | None:
        return journal.get(self.db.conn(), request_id)

    def journal_begin(self, entry: JournalEntry) -> None:
        with self.db.write() as conn:
            journal.begin(conn, entry)

    def journal_record(self, request_id: str, receipt: dict[str, Any]) -> None:
        with self.db.write() as conn:
            for guard in journal.record(conn, request_id, receipt):
                self._insert_guard(conn, guard)

    def journal_incomplete(self) -> list[JournalEntry]:
        return journal.incomplete(self.db.conn())

    def journal_set_git(self, request_ids: list[str], git: dict[str, Any]) -> None:
        with self.db.write() as conn:
            journal.set_git(conn, request_ids, git)

    def journal_git_pending(self) -> list[str]:
        return journal.git_pending(self.db.conn())

    def history(self, record_id: str) -> list[dict[str, Any]]:
        return journal.history(self.db.conn(), record_id)

    def revisions_at(self, instant: str) -> list[PlannedWrite]:
        return journal.revisions_at(self.db.conn(), instant)


def _expression(tokens: list[str], mode: MatchMode) -> str:
    """The FTS5 query for word tokens: each token quoted, so user text is never FTS syntax
    (``OR``, ``NOT``, ``title:`` and quotes are just words or separators)."""
    if mode == "phrase":
        return '"' + " ".join(segmented(t).strip() for t in tokens) + '"'
    # An unspaced token is the phrase of its pairs of characters.
    quoted = [f'"{" ".join(segmented(t).split())}"' for t in tokens]
    return (" OR " if mode == "any" else " AND ").join(quoted)
