"""What an aggregate written once needs of a backend (storage/audit.py, tokens.py,
sources.py): reads, a write transaction, and the words for locking a row. Statements are
written with ``?`` for each parameter; PostgreSQL's connection says them with ``%s``. What the
two engines really do differently — full-text search, vectors, the catalogue's own locks —
stays in their own modules."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Writer(Protocol):
    """A connection inside a write transaction."""

    def execute(self, sql: str, args: Sequence[Any] = ..., /) -> Cursor: ...


class SqlDatabase(Protocol):
    # Row locks of a read inside a write transaction: PostgreSQL's ("FOR UPDATE"); nothing on
    # SQLite, whose one writer at a time holds the whole database.
    for_update: str
    skip_locked: str  # ... and not waiting for a row another transaction locked

    def rows(self, sql: str, *args: Any) -> list[Any]: ...

    def row(self, sql: str, *args: Any) -> Any | None: ...

    def writing(self) -> AbstractContextManager[Writer]:
        """A write transaction: all or nothing."""
        ...
