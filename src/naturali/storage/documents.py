"""A project's documents and their chunks (ports/storage.py), on either backend: a new version
written (each engine's ``write_version``), one by its path, a page of them in path order
(bytewise, as the cursor compares them), and the chunks another model embedded."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Any

from naturali.model import WHOLE, Chunk, Document, Grant, ProjectUsage
from naturali.ports.storage import EmbeddedChunk
from naturali.storage import rows as mapping
from naturali.storage.sql import Aggregate, under


class Documents(Aggregate):
    @cached_property
    def doc_select(self) -> str:
        """A document with its current version: the same words each call, made once."""
        return mapping.DOC_SELECT.format(current=self.db.dialect.current_version)

    def project_usage(self, project_id: str, grant: Grant = WHOLE) -> ProjectUsage:
        if not grant.whole:
            return self._granted_usage(project_id, grant)
        row = self.db.row(
            "SELECT (SELECT count(*) FROM documents WHERE project_id = ?) AS documents, "
            "(SELECT coalesce(sum(v.size), 0) FROM documents d JOIN document_versions v "
            f"ON {self.db.dialect.current_version} WHERE d.project_id = ?) AS bytes, "
            "(SELECT count(*) FROM chunks WHERE project_id = ?) AS chunks, "
            "(SELECT count(*) FROM memories WHERE project_id = ?) AS memories",
            *[project_id] * 4,
        )
        assert row is not None
        counts = (row["documents"], row["bytes"], row["chunks"], row["memories"])
        return ProjectUsage(*map(int, counts))

    def _granted_usage(self, project_id: str, grant: Grant) -> ProjectUsage:
        """What of the project ``grant`` lets through: its documents' current versions, its
        stores' memories and their chunks."""
        clause, within = under("d.path", grant.paths)
        documents = self.db.row(
            "SELECT count(*) AS n, coalesce(sum(v.size), 0) AS bytes, "
            "coalesce(sum(v.chunk_count), 0) AS chunks FROM documents d JOIN document_versions v "
            f"ON {self.db.dialect.current_version} WHERE d.project_id = ?" + clause,
            project_id,
            *within,
        )
        # A memory's chunks are owned by "store id/memory id": both are matched by the
        # prefixes "store id/", with the same arguments.
        stores = None if grant.stores is None else [f"{store}/" for store in grant.stores]
        of_memories, of_stores = under("memory_store_id || '/'", stores)
        of_chunks, _ = under("owner_id", stores)
        memories = self.db.row(
            "SELECT count(*) AS chunks, (SELECT count(*) FROM memories WHERE project_id = ?"
            f"{of_memories}) AS n FROM chunks WHERE project_id = ? AND source_type = 'memory'"
            + of_chunks,
            project_id,
            *of_stores,
            project_id,
            *of_stores,
        )
        assert documents is not None and memories is not None
        chunks = int(documents["chunks"]) + int(memories["chunks"])
        return ProjectUsage(
            int(documents["n"]), int(documents["bytes"]), chunks, int(memories["n"])
        )

    def save_document_version(
        self, document: Document, chunks: Sequence[EmbeddedChunk], model_id: str, *, create: bool
    ) -> None:
        with self.db.writing() as conn:
            self.write_version(conn, document, chunks, model_id, create=create)

    def chunks_not_of(
        self, project_id: str, model_id: str, after_seq: int, limit: int
    ) -> list[Chunk]:
        rows = self.db.rows(
            f"SELECT {mapping.CHUNK_TEXT_COLUMNS} FROM chunks WHERE project_id = ? AND seq > ? "
            "AND model <> ? ORDER BY seq LIMIT ?",
            project_id,
            after_seq,
            model_id,
            limit,
        )
        return [mapping.chunk(r, with_vector=False) for r in rows]

    def count_chunks_not_of(self, project_id: str, model_id: str) -> int:
        row = self.db.row(
            "SELECT count(*) AS n FROM chunks WHERE project_id = ? AND model <> ?",
            project_id,
            model_id,
        )
        return int(row["n"]) if row else 0

    def get_document_by_path(self, project_id: str, path: str) -> Document | None:
        sql = self.doc_select + " WHERE d.project_id = ? AND d.path = ?"
        row = self.db.row(sql, project_id, path)
        return mapping.document(row) if row else None

    def list_documents(
        self,
        project_id: str,
        prefixes: Sequence[str] | None,
        after_path: str | None,
        limit: int,
    ) -> list[Document]:
        clause, within = under("d.path", prefixes)
        sql = self.doc_select + " WHERE d.project_id = ?" + clause
        args: list[Any] = [project_id, *within]
        bytewise = self.db.dialect.bytewise
        if after_path is not None:
            sql += f" AND d.path > ?{bytewise}"
            args.append(after_path)
        sql += f" ORDER BY d.path{bytewise} LIMIT ?"
        args.append(limit)
        return [mapping.document(r) for r in self.db.rows(sql, *args)]
