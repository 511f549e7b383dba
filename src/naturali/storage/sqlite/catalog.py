"""The SQLite catalog adapter: the only place that speaks SQL (with ``migrations``)."""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

from naturali.model import (
    Chunk,
    Document,
    Member,
    Memory,
    MemoryStore,
    Project,
    ProjectUsage,
    Role,
    SourceType,
    User,
)
from naturali.ports.storage import (
    ChunkChanges,
    EmbeddedChunk,
    LastOwner,
    NameTaken,
    NewVector,
    memory_owner,
)
from naturali.storage import rows as mapping
from naturali.storage.audit import Audit
from naturali.storage.jobs import IngestJobs
from naturali.storage.sources import Sources
from naturali.storage.sql import Writer
from naturali.storage.sqlite.connection import Database
from naturali.storage.sqlite.migrations import migrate
from naturali.storage.sqlite.overview import SqliteOverview
from naturali.storage.sqlite.writes import insert_chunks, write_version
from naturali.storage.tokens import Tokens

_MAX_VARS = 900  # stay under SQLite's bound-parameter limit
# Whether a project's chunks changed since the cursors: the newest seq of each table, read
# from the end of its (project_id, seq) index (the PostgreSQL adapter's check, in SQLite).
ANY_CHUNK_CHANGE = (
    "SELECT COALESCE((SELECT MAX(seq) FROM chunks WHERE project_id = ?), 0) > ? "
    "OR COALESCE((SELECT MAX(seq) FROM chunk_removals WHERE project_id = ?), 0) > ?"
)

# Vectors another model made (Services.reembed), by two ranges of the model's index (a
# planner reads none for !=), in no particular order: each batch re-embedded leaves them.
STALE_CHUNKS = "SELECT * FROM chunks WHERE model < ? OR model > ? LIMIT ?"


def _placeholders(n: int) -> str:
    return ",".join("?" * n)


def _batches(items: Sequence[Any]) -> list[Sequence[Any]]:
    return [items[i : i + _MAX_VARS] for i in range(0, len(items), _MAX_VARS)]


class SqliteStorage(IngestJobs, SqliteOverview, Tokens, Audit, Sources):
    db: Database

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = Database(path)
        self._locks = path.parent / "locks"
        migrate(self.db.conn(), path.with_suffix(".lock"))

    @contextmanager
    def project_lock(self, project_id: str) -> Iterator[None]:
        # A file lock: every thread and process on the data dir opens its own descriptor.
        self._locks.mkdir(mode=0o700, exist_ok=True)
        fd = os.open(self._locks / f"{project_id}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def write_version(
        self,
        conn: Writer,
        d: Document,
        chunks: Sequence[EmbeddedChunk],
        model_id: str,
        *,
        create: bool,
    ) -> None:
        """A version in a ``writing`` transaction (storage/jobs.py writes jobs once)."""
        write_version(cast(sqlite3.Connection, conn), d, chunks, model_id, create=create)

    def close(self) -> None:
        self.db.close()

    def vector_search(self) -> None:
        return None  # the server's memory answers the vector leg (retrieval/vector_leg/)

    # users and tokens ---------------------------------------------------------------------

    def get_user(self, user_id: str) -> User | None:
        row = self.db.row("SELECT * FROM users WHERE id = ?", user_id)
        return User(row["id"], row["name"], row["created_at"]) if row else None

    def oldest_user(self) -> User | None:
        row = self.db.row("SELECT * FROM users ORDER BY created_at, rowid LIMIT 1")
        return User(row["id"], row["name"], row["created_at"]) if row else None

    def count_users(self) -> int:
        row = self.db.row("SELECT count(*) AS n FROM users")
        return int(row["n"]) if row else 0

    # projects and members -------------------------------------------------------------------
    def create_project(self, project: Project, owner: Member) -> None:
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO projects VALUES (?, ?, ?)",
                (project.id, project.name, project.created_at),
            )
            self._insert_member(conn, owner)

    @staticmethod
    def _insert_member(conn: sqlite3.Connection, m: Member) -> None:
        conn.execute(
            "INSERT INTO members VALUES (?, ?, ?, ?) ON CONFLICT (project_id, user_id) "
            "DO UPDATE SET role = excluded.role",
            (m.project_id, m.user_id, m.role, m.created_at),
        )

    def get_project(self, project_id: str) -> Project | None:
        row = self.db.row("SELECT * FROM projects WHERE id = ?", project_id)
        return Project(row["id"], row["name"], row["created_at"]) if row else None

    def list_projects(self, user_id: str) -> list[tuple[Project, Member]]:
        rows = self.db.rows(
            "SELECT p.*, m.role, m.created_at AS joined FROM projects p "
            "JOIN members m ON m.project_id = p.id WHERE m.user_id = ? ORDER BY p.created_at, p.id",
            user_id,
        )
        return [
            (
                Project(r["id"], r["name"], r["created_at"]),
                Member(r["id"], user_id, cast(Role, r["role"]), r["joined"]),
            )
            for r in rows
        ]

    def get_member(self, project_id: str, user_id: str) -> Member | None:
        row = self.db.row(
            "SELECT * FROM members WHERE project_id = ? AND user_id = ?", project_id, user_id
        )
        return mapping.member(row) if row else None

    def list_members(self, project_id: str) -> list[Member]:
        rows = self.db.rows(
            "SELECT * FROM members WHERE project_id = ? ORDER BY created_at, user_id", project_id
        )
        return [mapping.member(r) for r in rows]

    def put_member(self, member: Member) -> None:
        with self.db.write() as conn:
            self._insert_member(conn, member)
            self._keep_an_owner(conn, member.project_id)

    def remove_member(self, project_id: str, user_id: str) -> None:
        with self.db.write() as conn:
            conn.execute(
                "DELETE FROM members WHERE project_id = ? AND user_id = ?", (project_id, user_id)
            )
            self._keep_an_owner(conn, project_id)

    @staticmethod
    def _keep_an_owner(conn: sqlite3.Connection, project_id: str) -> None:
        """Checked inside the write transaction, so two owners removing each other at once
        cannot both succeed: the second sees the first's change and rolls back."""
        (owners,) = conn.execute(
            "SELECT count(*) FROM members WHERE project_id = ? AND role = 'owner'", (project_id,)
        ).fetchone()
        if owners == 0:
            raise LastOwner(project_id)

    # documents ------------------------------------------------------------------------------
    def get_document(self, project_id: str, document_id: str) -> Document | None:
        row = self.db.row(
            mapping.DOC_SELECT + " WHERE d.id = ? AND +d.project_id = ?", document_id, project_id
        )
        return mapping.document(row) if row else None

    def get_document_by_path(self, project_id: str, path: str) -> Document | None:
        row = self.db.row(
            mapping.DOC_SELECT + " WHERE d.project_id = ? AND d.path = ?", project_id, path
        )
        return mapping.document(row) if row else None

    def get_documents(self, project_id: str, ids: Sequence[str]) -> dict[str, Document]:
        out: dict[str, Document] = {}
        for batch in _batches(list(ids)):
            # "+d.project_id": look documents up by primary key, not by the (project, path)
            # index, which would scan every document of the project.
            sql = (
                mapping.DOC_SELECT
                + f" WHERE d.id IN ({_placeholders(len(batch))}) AND +d.project_id = ?"
            )
            for row in self.db.rows(sql, *batch, project_id):
                out[row["id"]] = mapping.document(row)
        return out

    def project_usage(self, project_id: str) -> ProjectUsage:
        row = self.db.row(
            "SELECT (SELECT count(*) FROM documents WHERE project_id = ?) AS documents, "
            "(SELECT coalesce(sum(v.size), 0) FROM documents d JOIN document_versions v "
            " ON v.document_id = d.id AND v.version = d.version WHERE d.project_id = ?) AS bytes, "
            "(SELECT count(*) FROM chunks WHERE project_id = ?) AS chunks, "
            "(SELECT count(*) FROM memories WHERE project_id = ?) AS memories",
            project_id,
            project_id,
            project_id,
            project_id,
        )
        assert row is not None
        return ProjectUsage(row["documents"], row["bytes"], row["chunks"], row["memories"])

    def list_documents(
        self, project_id: str, path_prefix: str | None, after_path: str | None, limit: int
    ) -> list[Document]:
        sql = mapping.DOC_SELECT + " WHERE d.project_id = ?"
        args: list[Any] = [project_id]
        if path_prefix:
            # substr() rather than LIKE: paths may contain % and _.
            sql += " AND substr(d.path, 1, ?) = ?"
            args += [len(path_prefix), path_prefix]
        if after_path is not None:
            sql += " AND d.path > ?"
            args.append(after_path)
        sql += " ORDER BY d.path LIMIT ?"
        args.append(limit)
        return [mapping.document(r) for r in self.db.rows(sql, *args)]

    def save_document_version(
        self, document: Document, chunks: Sequence[EmbeddedChunk], model_id: str, *, create: bool
    ) -> None:
        with self.db.write() as conn:
            write_version(conn, document, chunks, model_id, create=create)

    def delete_document(self, project_id: str, document_id: str) -> None:
        with self.db.write() as conn:
            conn.execute(
                "DELETE FROM chunks WHERE source_type = 'document' AND owner_id = ?", (document_id,)
            )
            conn.execute("DELETE FROM document_versions WHERE document_id = ?", (document_id,))
            conn.execute("DELETE FROM ingest_jobs WHERE document_id = ?", (document_id,))
            conn.execute(
                "DELETE FROM documents WHERE project_id = ? AND id = ?", (project_id, document_id)
            )

    # memory stores and memories -------------------------------------------------------------
    def create_memory_store(self, store: MemoryStore) -> None:
        with self.db.write() as conn:
            try:
                conn.execute(
                    "INSERT INTO memory_stores VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        store.id,
                        store.project_id,
                        store.name,
                        json.dumps(store.tags),
                        store.created_at,
                        store.updated_at,
                    ),
                )
            except sqlite3.IntegrityError as exc:
                raise NameTaken(store.name) from exc

    def get_memory_store(self, project_id: str, store_id: str) -> MemoryStore | None:
        row = self.db.row(
            "SELECT * FROM memory_stores WHERE project_id = ? AND id = ?", project_id, store_id
        )
        return mapping.store(row) if row else None

    def list_memory_stores(self, project_id: str) -> list[MemoryStore]:
        rows = self.db.rows(
            "SELECT * FROM memory_stores WHERE project_id = ? ORDER BY name, id", project_id
        )
        return [mapping.store(r) for r in rows]

    def update_memory_store(self, store: MemoryStore) -> None:
        with self.db.write() as conn:
            try:
                conn.execute(
                    "UPDATE memory_stores SET name = ?, tags = ?, updated_at = ? WHERE id = ?",
                    (store.name, json.dumps(store.tags), store.updated_at, store.id),
                )
            except sqlite3.IntegrityError as exc:
                raise NameTaken(store.name) from exc

    def delete_memory_store(self, project_id: str, store_id: str) -> None:
        with self.db.write() as conn:
            conn.execute(
                "DELETE FROM chunks WHERE source_type = 'memory' AND substr(owner_id, 1, ?) = ?",
                (len(store_id) + 1, store_id + "/"),
            )
            conn.execute("DELETE FROM memories WHERE memory_store_id = ?", (store_id,))
            conn.execute(
                "DELETE FROM memory_stores WHERE project_id = ? AND id = ?", (project_id, store_id)
            )

    def memory_hashes(self, store_id: str) -> dict[str, str]:
        rows = self.db.rows(
            "SELECT id, content_hash FROM memories WHERE memory_store_id = ?", store_id
        )
        return {r["id"]: r["content_hash"] for r in rows}

    def get_store_memories(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], Memory]:
        out: dict[tuple[str, str], Memory] = {}
        for store_id, memory_id in keys:
            row = self.db.row(
                "SELECT * FROM memories WHERE memory_store_id = ? AND id = ?", store_id, memory_id
            )
            if row is not None:
                out[(store_id, memory_id)] = mapping.memory(row)
        return out

    def replace_memory(
        self,
        memory: Memory,
        path: str,
        chunks: Sequence[EmbeddedChunk],
        model_id: str,
    ) -> None:
        m = memory
        with self.db.write() as conn:
            self._delete_memory(conn, m.memory_store_id, m.id)
            conn.execute(
                "INSERT INTO memories VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    m.id,
                    m.project_id,
                    m.memory_store_id,
                    m.title,
                    m.content,
                    json.dumps(m.tags),
                    m.revision,
                    m.content_hash,
                    path,
                    m.created_at,
                    m.updated_at,
                ),
            )
            insert_chunks(
                conn,
                m.project_id,
                SourceType.MEMORY,
                memory_owner(m.memory_store_id, m.id),
                m.revision,
                chunks,
                model_id,
            )

    @staticmethod
    def _delete_memory(conn: sqlite3.Connection, store_id: str, memory_id: str) -> None:
        conn.execute(
            "DELETE FROM chunks WHERE source_type = 'memory' AND owner_id = ?",
            (memory_owner(store_id, memory_id),),
        )
        conn.execute(
            "DELETE FROM memories WHERE memory_store_id = ? AND id = ?", (store_id, memory_id)
        )

    def remove_memory(self, store_id: str, memory_id: str) -> None:
        with self.db.write() as conn:
            self._delete_memory(conn, store_id, memory_id)

    # chunks -----------------------------------------------------------------------------------
    def _any_change(self, project_id: str, chunk_cursor: int, removal_cursor: int) -> bool:
        row = self.db.row(ANY_CHUNK_CHANGE, project_id, chunk_cursor, project_id, removal_cursor)
        return row is None or bool(row[0])

    def chunk_changes(
        self, project_id: str, chunk_cursor: int, removal_cursor: int
    ) -> ChunkChanges:
        # Most searches find nothing new: one statement (one snapshot) answers that.
        if not self._any_change(project_id, chunk_cursor, removal_cursor):
            return ChunkChanges([], [], chunk_cursor, removal_cursor)
        conn = self.db.conn()
        # One read transaction, so additions and removals describe the same snapshot.
        conn.execute("BEGIN")
        try:
            added = [
                mapping.chunk(r)
                for r in conn.execute(
                    "SELECT * FROM chunks WHERE project_id = ? AND seq > ? ORDER BY seq",
                    (project_id, chunk_cursor),
                )
            ]
            removed_rows = conn.execute(
                "SELECT seq, chunk_seq FROM chunk_removals WHERE project_id = ? AND seq > ? "
                "ORDER BY seq",
                (project_id, removal_cursor),
            ).fetchall()
        finally:
            conn.execute("COMMIT")
        return ChunkChanges(
            added=added,
            removed=[r["chunk_seq"] for r in removed_rows],
            chunk_cursor=added[-1].seq if added else chunk_cursor,
            removal_cursor=removed_rows[-1]["seq"] if removed_rows else removal_cursor,
        )

    def get_chunks(self, project_id: str, seqs: Sequence[int]) -> dict[int, Chunk]:
        out: dict[int, Chunk] = {}
        for batch in _batches(list(seqs)):
            # "+project_id": by rowid (seq), the project checked on the rows found.
            sql = (
                f"SELECT {mapping.CHUNK_TEXT_COLUMNS} FROM chunks "
                f"WHERE seq IN ({_placeholders(len(batch))}) AND +project_id = ?"
            )
            for row in self.db.rows(sql, *batch, project_id):
                out[row["seq"]] = mapping.chunk(row, with_vector=False)
        return out

    def stale_chunks(self, model_id: str, limit: int) -> list[Chunk]:
        rows = self.db.rows(STALE_CHUNKS, model_id, model_id, limit)
        return [mapping.chunk(r) for r in rows]

    def set_vectors(self, vectors: Sequence[NewVector], model_id: str) -> None:
        with self.db.write() as conn:
            conn.executemany(
                "UPDATE chunks SET vector = ?, model = ? WHERE seq = ? AND +project_id = ?",
                [(v.vector, model_id, v.seq, v.project_id) for v in vectors],
            )

    def owner_chunks(
        self, project_id: str, source_type: SourceType, owner_ids: Sequence[str]
    ) -> list[Chunk]:
        out: list[Chunk] = []
        for batch in _batches(list(owner_ids)):
            sql = (
                "SELECT * FROM chunks WHERE source_type = ? "
                f"AND owner_id IN ({_placeholders(len(batch))}) AND +project_id = ? "
                "ORDER BY owner_id, ordinal"
            )
            rows = self.db.rows(sql, source_type, *batch, project_id)
            out.extend(mapping.chunk(r) for r in rows)
        return out
