"""Typed responses of the SDK (a client-side mirror of the API's response shapes)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow")  # newer servers may add fields


class Project(_Model):
    id: str
    name: str
    role: str
    created_at: str


class Token(_Model):
    """A token as listed; ``token`` (the secret) only in the answer that created it."""

    id: str
    name: str
    scope: Literal["read", "write", "admin"]
    projects: list[str] | None = None
    created_at: str
    expires_at: str | None = None
    last_used_at: str | None = None
    revoked_at: str | None = None
    token: str | None = None


class Document(_Model):
    id: str
    project_id: str
    path: str
    title: str
    metadata: dict[str, Any]
    tags: dict[str, str]
    version: int
    file_id: str
    filename: str
    size: int
    content_type: str
    content_hash: str = ""
    chunk_count: int
    page_count: int | None = None
    warnings: list[str] = []
    created_at: str
    updated_at: str
    status: Literal["processing", "ready", "failed"] = "ready"
    chunks_total: int | None = None
    chunks_done: int | None = None
    error: dict[str, Any] | None = None


class MemoryStore(_Model):
    id: str
    project_id: str
    name: str
    tags: dict[str, str]
    created_at: str
    updated_at: str


class Passage(_Model):
    chunk_id: str
    ordinal: int
    page: int | None
    content: str


class PassageList(_Model):
    """A run of a document's passages: ``start`` is the first's place among all ``total``."""

    data: list[Passage]
    start: int
    total: int


class Memory(_Model):
    id: str
    memory_store_id: str
    title: str
    content: str
    tags: dict[str, str | list[str]]  # a key with several values maps to a list
    revision: int
    created_at: str
    updated_at: str


class TermMatch(_Model):
    """A whole word of the content whose term is one of the query's (UTF-16 offsets)."""

    start: int
    end: int
    term: str


class Explanation(_Model):
    """Why a result ranked where it did (``explain=True``): 1-based rank in each leg's
    candidates (None when that leg did not propose it), cosine, BM25 score, fused score, the
    cross-encoder's score with ``rerank=True``, and where the query's terms occur."""

    vector_rank: int | None
    cosine: float | None
    lexical_rank: int | None
    bm25: float | None
    fused: float
    rerank: float | None = None
    matches: list[TermMatch] = []


class DocumentKnowledgeResult(_Model):
    source_type: Literal["document"]
    document_id: str
    chunk_id: str
    document_version: int
    page: int | None
    file_id: str
    project_id: str
    path: str
    filename: str
    size: int
    title: str
    metadata: dict[str, Any]
    tags: dict[str, str]
    content: str | None
    score: float
    similarity_score: float | None = None
    created_at: str
    updated_at: str
    explain: Explanation | None = None  # naturali extension, only with explain=True


class MemoryKnowledgeResult(_Model):
    source_type: Literal["memory"]
    memory_id: str
    memory_store_id: str
    memory_store_name: str
    content: str
    score: float
    similarity_score: float | None = None
    created_at: str
    updated_at: str
    explain: Explanation | None = None  # naturali extension, only with explain=True

    @property
    def path(self) -> None:
        """Memories have no path; present so code can read ``hit.path`` on any result."""
        return None


class KnowledgeSearchResponse(_Model):
    results: list[
        Annotated[
            DocumentKnowledgeResult | MemoryKnowledgeResult, Field(discriminator="source_type")
        ]
    ]
