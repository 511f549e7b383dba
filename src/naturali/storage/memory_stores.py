"""Memory stores (ports/storage.py), on either backend: a store's name is unique in its
project (the backend's unique violation becomes ``NameTaken``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

from naturali.model import MemoryStore
from naturali.ports.storage import NameTaken
from naturali.storage import rows as mapping
from naturali.storage.sql import Aggregate

INSERT = (
    "INSERT INTO memory_stores (id, project_id, name, tags, created_at, updated_at) "
    "VALUES (?, ?, ?, ?, ?, ?)"
)
UPDATE = (
    "UPDATE memory_stores SET name = ?, tags = ?, updated_at = ? WHERE project_id = ? AND id = ?"
)


class MemoryStores(Aggregate):
    def create_memory_store(self, store: MemoryStore) -> None:
        s = store
        with self._naming(s.name), self.db.writing() as conn:
            conn.execute(
                INSERT,
                (s.id, s.project_id, s.name, json.dumps(s.tags), s.created_at, s.updated_at),
            )

    def get_memory_store(self, project_id: str, store_id: str) -> MemoryStore | None:
        row = self.db.row(
            "SELECT * FROM memory_stores WHERE project_id = ? AND id = ?", project_id, store_id
        )
        return mapping.store(row) if row else None

    def list_memory_stores(self, project_id: str) -> list[MemoryStore]:
        by_name = f"name{self.db.dialect.bytewise}, id"
        rows = self.db.rows(
            f"SELECT * FROM memory_stores WHERE project_id = ? ORDER BY {by_name}", project_id
        )
        return [mapping.store(r) for r in rows]

    def update_memory_store(self, store: MemoryStore) -> None:
        s = store
        with self._naming(s.name), self.db.writing() as conn:
            conn.execute(UPDATE, (s.name, json.dumps(s.tags), s.updated_at, s.project_id, s.id))

    def memory_hashes(self, store_id: str) -> dict[str, str]:
        rows = self.db.rows(
            "SELECT id, content_hash FROM memories WHERE memory_store_id = ?", store_id
        )
        return {r["id"]: r["content_hash"] for r in rows}

    @contextmanager
    def _naming(self, name: str) -> Iterator[None]:
        try:
            yield
        except self.db.dialect.unique_violation as exc:
            raise NameTaken(name) from exc
