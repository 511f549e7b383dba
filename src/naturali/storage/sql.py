"""What an aggregate written once needs of a backend (storage/audit.py, tokens.py,
sources.py): reads, a write transaction, and the words for locking a row. Statements are
written with ``?`` for each parameter; PostgreSQL's connection says them with ``%s``. What the
two engines really do differently — full-text search, vectors, the catalogue's own locks —
stays in their own modules."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from naturali.model import Document
    from naturali.ports.storage import EmbeddedChunk


def under(column: str, prefixes: Sequence[str] | None) -> tuple[str, list[Any]]:
    """SQL (`` AND …``) and its arguments for ``column`` starting with one of ``prefixes``
    (None: any value; none: no row). substr() rather than LIKE: paths may hold % and _."""
    if prefixes is None:
        return "", []
    if not prefixes:
        return " AND 1 = 0", []
    clause = " OR ".join(f"substr({column}, 1, ?) = ?" for _ in prefixes)
    return f" AND ({clause})", [a for p in prefixes for a in (len(p), p)]


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Writer(Protocol):
    """A connection inside a write transaction."""

    def execute(self, sql: str, args: Sequence[Any] = ..., /) -> Cursor: ...


@dataclass(frozen=True)
class Dialect:
    """The words a statement written once takes from its backend."""

    # Row locks of a read inside a write transaction: PostgreSQL's ("FOR UPDATE"); nothing on
    # SQLite, whose one writer at a time holds the whole database.
    for_update: str
    skip_locked: str  # ... and not waiting for a row another transaction locked
    insertion_order: str  # the column that orders rows as they were inserted
    project_key: str  # the projects table's key column
    bytewise: str  # a collation that orders text by its bytes, as Python's sort does
    unique_violation: type[Exception]  # what a broken UNIQUE constraint raises
    position: str  # where the text {1} first stands in the text {0} (1-based; 0: nowhere)
    # Run first in a transaction that claims work, so that claims follow one another ("":
    # SQLite's one writer already does)
    serialise_claims: str
    # How a document meets its current version (the versions' key: with the project or not).
    current_version: str


class SqlDatabase(Protocol):
    dialect: Dialect

    def rows(self, sql: str, *args: Any) -> list[Any]: ...

    def row(self, sql: str, *args: Any) -> Any | None: ...

    def writing(self) -> AbstractContextManager[Writer]:
        """A write transaction: all or nothing."""
        ...


class Aggregate:
    """An aggregate written once for both engines (audit.py, people.py, jobs.py…): the
    catalogue it is part of gives it its database, and writes a document's version its own
    way (``write_version``: the engines' chunk locks and vectors differ)."""

    if TYPE_CHECKING:

        @property
        def db(self) -> SqlDatabase: ...

        @staticmethod
        def write_version(
            writer: Writer,
            d: Document,
            chunks: Sequence[EmbeddedChunk],
            model_id: str,
            *,
            create: bool,
        ) -> None: ...
