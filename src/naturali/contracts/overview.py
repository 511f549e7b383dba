"""Result models of a project at a glance: ``GET …/overview``, ``…/documents/folders`` and
``…/ingest_jobs`` (the Control UI's project page; any client may read them)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from naturali.contracts.described import Described
from naturali.model import Folder, IndexState, IngestJobStatus, MemoryStore, ProjectUsage


class ModelOut(Described):
    id: str
    dimension: int


class IndexOut(Described):
    """The project's search index on the server that answered (each server holds its own)."""

    loaded: bool = Field(description="In this server's memory now; else its next search loads it.")
    rows: int = Field(description="Live chunks in the index (0 when not loaded).")
    memory_bytes: int = Field(description="What the index holds in this process's memory.")
    mapped_bytes: int = Field(description="What it maps from its snapshot (the page cache's).")
    budget_bytes: int = Field(description="The server's budget for every project's index.")
    vector_leg: Literal["memory", "database"] = Field(
        description="Where the vector leg is answered: this server, or PostgreSQL (pgvector)."
    )


class StoreCount(Described):
    id: str
    name: str
    memories: int


class OverviewOut(Described):
    documents: int
    bytes: int
    chunks: int
    memories: int
    embedding_model: ModelOut
    index: IndexOut
    ingestion: dict[str, int] = Field(description="Jobs queued, running and failed.")
    memory_stores: list[StoreCount]

    @classmethod
    def of(
        cls,
        usage: ProjectUsage,
        model: ModelOut,
        index: IndexState,
        ingestion: dict[str, int],
        stores: list[tuple[MemoryStore, int]],
    ) -> OverviewOut:
        return cls(
            **usage.__dict__,
            embedding_model=model,
            index=IndexOut(**index.__dict__),
            ingestion=ingestion,
            memory_stores=[StoreCount(id=s.id, name=s.name, memories=n) for s, n in stores],
        )


class FolderOut(Described):
    path: str = Field(description="The folder, ending with '/'.")
    documents: int = Field(description="Documents under it, at any depth.")
    chunks: int = Field(description="Their chunks.")

    @classmethod
    def of(cls, f: Folder) -> FolderOut:
        return cls(**f.__dict__)


class FolderList(Described):
    prefix: str
    documents_here: int = Field(description="Documents directly in the prefix.")
    data: list[FolderOut]
    next_cursor: str | None

    @classmethod
    def of(cls, prefix: str, here: Folder, folders: list[Folder], cursor: str | None) -> FolderList:
        return cls(
            prefix=prefix,
            documents_here=here.documents,
            data=[FolderOut.of(f) for f in folders],
            next_cursor=cursor,
        )


class IngestJobOut(Described):
    id: str
    document_id: str
    path: str
    state: Literal["queued", "running", "failed"]
    chunks_total: int
    chunks_done: int
    error: dict[str, Any] | None
    created_at: str
    pages_total: int = Field(0, description="Pages to read by OCR before embedding.")
    pages_done: int = Field(0, description="Of those, read so far.")

    @classmethod
    def of(cls, job: IngestJobStatus) -> IngestJobOut:
        return cls(**job.__dict__)


class IngestJobList(Described):
    data: list[IngestJobOut]
    next_cursor: str | None

    @classmethod
    def of(cls, jobs: list[IngestJobStatus], cursor: str | None) -> IngestJobList:
        return cls(data=[IngestJobOut.of(j) for j in jobs], next_cursor=cursor)
