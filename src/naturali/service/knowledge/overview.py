"""A project at a glance (the Control UI's project page, ``GET …/overview``): what it stores,
its folders with their counts, its ingestion jobs, its memory stores' sizes, the embedding
model and this server's search index. Reads only; every figure comes from the catalog except
the index's, which is this server's."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from naturali.errors import InvalidRequest
from naturali.model import Folder, IndexState, IngestJobStatus, MemoryStore, ProjectUsage, User
from naturali.ports.embedder import Embedder
from naturali.ports.storage import Storage
from naturali.retrieval.indexes.registry import IndexRegistry
from naturali.service import validation
from naturali.service.cursors import check_limit, decode_cursor, encode_cursor
from naturali.service.platform.auth import Auth


@dataclass(frozen=True)
class ProjectOverview:
    usage: ProjectUsage
    model_id: str
    dimension: int
    index: IndexState
    ingestion: dict[str, int]  # queued | running | failed → jobs
    stores: list[tuple[MemoryStore, int]]  # each store and its memories


@dataclass(frozen=True)
class FolderPage:
    prefix: str
    here: Folder  # the documents directly in the prefix (0 when none)
    folders: list[Folder]
    next_cursor: str | None


@dataclass(frozen=True)
class JobPage:
    jobs: list[IngestJobStatus]
    next_cursor: str | None


class Overview:
    def __init__(
        self,
        storage: Storage,
        auth: Auth,
        indexes: IndexRegistry,
        embedder: Callable[[str], Embedder],
    ) -> None:
        self._storage = storage
        self._auth = auth
        self._indexes = indexes
        self._embedder = embedder

    def project(self, user: User, project_id: str) -> ProjectOverview:
        """The project as far as the caller was granted it: a limited caller's index shows
        whether it is loaded and the budget, not the rows and bytes of the rest."""
        grant = user.grant
        counts = self._storage.memory_counts(project_id)
        stores = self._storage.list_memory_stores(project_id)
        embedder = self._embedder(project_id)
        index = self._indexes.state(project_id)
        return ProjectOverview(
            usage=self._storage.project_usage(project_id, grant),
            model_id=embedder.model_id,
            dimension=embedder.dimension,
            index=index if grant.whole else IndexState(index.loaded, index.budget_bytes),
            ingestion=self._storage.project_ingest_counts(project_id, grant.paths),
            stores=[(s, counts.get(s.id, 0)) for s in stores if grant.sees_store(s.id)],
        )

    def folders(
        self,
        user: User,
        project_id: str,
        prefix: str = "/",
        cursor: str | None = None,
        limit: int = 100,
    ) -> FolderPage:
        """The folders directly under ``prefix`` (a folder: ends with ``/``), a page at a time,
        each with its documents and chunks at any depth."""
        check_limit(limit)
        validation.logical_path(prefix, "prefix", prefix=True)
        if not prefix.endswith("/"):
            raise InvalidRequest(
                "prefix must be a folder: end it with '/'", code="invalid_path", param="prefix"
            )
        after = decode_cursor(cursor) if cursor else None
        rows = self._storage.document_folders(
            project_id, prefix, after, limit + 2, user.grant.paths
        )
        here = rows.pop(0) if rows and rows[0].path == prefix else Folder(prefix, 0, 0)
        more = len(rows) > limit
        rows = rows[:limit]
        return FolderPage(prefix, here, rows, encode_cursor(rows[-1].path) if more else None)

    def jobs(
        self, user: User, project_id: str, cursor: str | None = None, limit: int = 20
    ) -> JobPage:
        """The project's ingestion jobs not yet done (queued, running) or failed, oldest
        first; a job is gone once its version is written."""
        check_limit(limit)
        after: tuple[str, str] | None = None
        if cursor:
            created_at, _, job_id = decode_cursor(cursor).partition(" ")
            if not job_id:
                raise InvalidRequest("invalid cursor", code="invalid_cursor", param="cursor")
            after = (created_at, job_id)
        rows = self._storage.list_ingest_jobs(project_id, after, limit + 1, user.grant.paths)
        more = len(rows) > limit
        rows = rows[:limit]
        last = rows[-1] if rows else None
        next_cursor = encode_cursor(f"{last.created_at} {last.id}") if more and last else None
        return JobPage(rows, next_cursor)
