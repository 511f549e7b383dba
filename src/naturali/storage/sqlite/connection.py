"""SQLite connections: one per live thread, WAL, and one process-wide writer at a time."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from naturali.storage.sql import Dialect


class Database:
    """Also what an aggregate written once for both backends needs (storage/sql.py)."""

    dialect = Dialect(
        for_update="",
        skip_locked="",
        insertion_order="rowid",
        project_key="id",
        bytewise="",  # SQLite's default collation is bytewise
        unique_violation=sqlite3.IntegrityError,
        position="instr({0}, {1})",
        serialise_claims="",
        current_version="v.document_id = d.id AND v.version = d.version",
    )

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._write_lock = threading.RLock()
        self._all: list[tuple[threading.Thread, sqlite3.Connection]] = []
        self._all_lock = threading.Lock()

    def conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=30.0
            )
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA busy_timeout=30000")
            self._local.conn = conn
            with self._all_lock:
                self._close_orphans()
                self._all.append((threading.current_thread(), conn))
        return conn

    def _close_orphans(self) -> None:
        """Close the connections of threads that have ended: a thread's local connection does
        not close with it, and each short-lived thread (a snapshot's save) would leave its
        descriptors open until the database closed."""
        live = []
        for thread, conn in self._all:
            if thread.is_alive():
                live.append((thread, conn))
            else:
                conn.close()
        self._all = live

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction: all or nothing, one writer in this process at a time
        (``BEGIN IMMEDIATE`` also serialises writers in other processes)."""
        with self._write_lock:
            conn = self.conn()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def rows(self, sql: str, *args: Any) -> list[Any]:
        return self.conn().execute(sql, args).fetchall()

    def row(self, sql: str, *args: Any) -> Any | None:
        return self.conn().execute(sql, args).fetchone()

    def writing(self) -> AbstractContextManager[sqlite3.Connection]:
        return self.write()

    def close_others(self) -> None:
        """Close every connection but the calling thread's, while no other thread uses the
        database: an idle database keeps one (closing the last one checkpoints the WAL,
        ~2.5 ms) instead of one a thread that ever used it."""
        mine: sqlite3.Connection | None = getattr(self._local, "conn", None)
        with self._all_lock:
            for _, conn in self._all:
                if conn is not mine:
                    conn.close()
            self._all = [(t, c) for t, c in self._all if c is mine]
        self._local = threading.local()
        if mine is not None:
            self._local.conn = mine

    def close(self) -> None:
        with self._all_lock:
            for _, conn in self._all:
                conn.close()
            self._all.clear()
        self._local = threading.local()
