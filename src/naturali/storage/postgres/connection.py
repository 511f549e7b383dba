"""A connection pool to the shared database, with pgvector's types registered."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from pgvector.psycopg import register_vector
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from naturali.storage.postgres.migrations import migrate
from naturali.storage.sql import Dialect


class Database:
    """Migrations on open, then a pool: reads run in autocommit, writes in ``transaction``.
    Also what an aggregate written once for both backends needs (storage/sql.py), its ``?``
    said as ``%s``."""

    dialect = Dialect(
        for_update="FOR UPDATE",
        skip_locked="SKIP LOCKED",
        insertion_order="ord",
        project_key="project_id",
        bytewise=' COLLATE "C"',
        unique_violation=psycopg.errors.UniqueViolation,
        position="strpos({0}, {1})",
        serialise_claims="SELECT pg_advisory_xact_lock(7164201004)",
        current_version=(
            "v.project_id = d.project_id AND v.document_id = d.id AND v.version = d.version"
        ),
    )

    def __init__(self, url: str, max_size: int = 16) -> None:
        migrate(url)
        self.pool: ConnectionPool[psycopg.Connection[dict[str, Any]]] = ConnectionPool(
            url,
            min_size=1,
            max_size=max_size,
            kwargs={"autocommit": True, "row_factory": dict_row},
            configure=register_vector,
            open=True,
        )

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[dict[str, Any]]]:
        with self.pool.connection() as conn:
            yield conn

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection[dict[str, Any]]]:
        with self.pool.connection() as conn, conn.transaction():
            yield conn

    def one(self, sql: str, *args: Any) -> dict[str, Any] | None:
        with self.pool.connection() as conn:
            row: dict[str, Any] | None = conn.execute(sql.encode(), args).fetchone()
            return row

    def all(self, sql: str, *args: Any, binary: bool = False) -> list[dict[str, Any]]:
        """Rows of a query; ``binary`` for rows with vectors (parsing them from text costs
        six times as much: 11 s against 1.7 s for 108k chunks here)."""
        with self.pool.connection() as conn:
            return list(conn.execute(sql.encode(), args, binary=binary).fetchall())

    def rows(self, sql: str, *args: Any) -> list[Any]:
        return self.all(_marks(sql), *args)

    def row(self, sql: str, *args: Any) -> Any | None:
        return self.one(_marks(sql), *args)

    @contextmanager
    def writing(self) -> Iterator[_Marked]:
        with self.transaction() as conn:
            yield _Marked(conn)

    def close(self) -> None:
        self.pool.close()


class _Marked:
    """A connection in a transaction that takes statements written with ``?``."""

    def __init__(self, conn: psycopg.Connection[dict[str, Any]]) -> None:
        self.raw = conn  # for what this engine writes its own way (a version's chunks)

    def execute(self, sql: str, args: Sequence[Any] = ()) -> psycopg.Cursor[dict[str, Any]]:
        return self.raw.execute(_marks(sql).encode(), args)


def raw(conn: Any) -> psycopg.Connection[dict[str, Any]]:
    """The psycopg connection of a ``writing`` transaction."""
    assert isinstance(conn, _Marked)
    return conn.raw


@functools.lru_cache(maxsize=512)  # shared statements: a few dozen, some by a list's length
def _marks(sql: str) -> str:
    """A statement written with ``?`` for each parameter, as psycopg takes it (``%s``; a
    literal ``%`` doubled). Shared statements hold no other ``?``."""
    return sql.replace("%", "%%").replace("?", "%s")
