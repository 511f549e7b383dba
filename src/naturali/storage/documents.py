"""A project's documents and their chunks (ports/storage.py), on either backend: a new version
written (each engine's ``write_version``), one by its path, a page of them in path order
(bytewise, as the cursor compares them), and the chunks another model embedded."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Any

from naturali.model import Chunk, Document, ProjectUsage
from naturali.ports.storage import EmbeddedChunk
from naturali.storage import rows as mapping
from naturali.storage.sql import Aggregate


class Documents(Aggregate):
    @cached_property
    def doc_select(self) -> str:
        """A document with its current version: the same words each call, made once."""
        return mapping.DOC_SELECT.format(current=self.db.dialect.current_version)

    def project_usage(self, project_id: str) -> ProjectUsage:
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
        self, project_id: str, path_prefix: str | None, after_path: str | None, limit: int
    ) -> list[Document]:
        sql = self.doc_select + " WHERE d.project_id = ?"
        args: list[Any] = [project_id]
        if path_prefix:
            # substr() rather than LIKE: paths may contain % and _.
            sql += " AND substr(d.path, 1, ?) = ?"
            args += [len(path_prefix), path_prefix]
        bytewise = self.db.dialect.bytewise
        if after_path is not None:
            sql += f" AND d.path > ?{bytewise}"
            args.append(after_path)
        sql += f" ORDER BY d.path{bytewise} LIMIT ?"
        args.append(limit)
        return [mapping.document(r) for r in self.db.rows(sql, *args)]
