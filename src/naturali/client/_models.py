"""Typed responses of the SDK, generated from the API's contracts by ``python -m
naturali.api.python_models``: do not edit."""

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
    projects: list[str] | None
    created_at: str
    expires_at: str | None
    last_used_at: str | None
    revoked_at: str | None
    token: str | None = None


class PagesRead(_Model):
    """What was read how on a PDF's or an image's pages. A passage on a page in ``ocr_pages``
    was read by OCR: check it against the page before quoting it."""

    # Pages read from their text layer.
    text_pages: int
    # Pages without a text layer, read by OCR.
    ocr_pages: list[int]
    # Pages with no text, by either.
    empty_pages: list[int]
    # Pages without a text layer still waiting for OCR (while processing).
    ocr_pending: list[int]


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
    content_hash: str
    chunk_count: int
    page_count: int | None
    warnings: list[str]
    created_at: str
    updated_at: str
    # processing while the newest upload is embedded (the version before is what search sees
    # until then), ready once it is searchable, failed with error.
    status: Literal["processing", "ready", "failed"]
    # Chunks of the upload in progress.
    chunks_total: int | None = None
    # Of those, embedded so far.
    chunks_done: int | None = None
    # Why the newest upload failed, in the error shape's fields.
    error: dict[str, Any] | None = None
    # A PDF's or an image's pages read how (null for other files).
    reading: PagesRead | None = None
    # Pages of the upload in progress to read by OCR before embedding.
    pages_total: int | None = None
    # Of those, read so far.
    pages_done: int | None = None


class MemoryStore(_Model):
    id: str
    project_id: str
    name: str
    tags: dict[str, str]
    created_at: str
    updated_at: str


class Passage(_Model):
    """One passage of a document (a chunk of its current version), in order."""

    chunk_id: str
    ordinal: int
    page: int | None
    content: str
    # ocr: read by OCR from a page without a text layer.
    read_by: Literal["text", "ocr"] = "text"


class PassageList(_Model):
    """A run of a document's passages: ``start`` is the first's place among all ``total``."""

    data: list[Passage]
    start: int
    total: int


class Memory(_Model):
    id: str
    project_id: str
    memory_store_id: str
    title: str
    content: str
    # The record's key:value tags; a key with several values maps to a list.
    tags: dict[str, str | list[str]]
    revision: int
    content_hash: str
    created_at: str
    updated_at: str


class TermMatch(_Model):
    """A whole word of a result's content whose term is one of the query's: its start and end
    in UTF-16 code units (as JavaScript strings count) and the stemmed term."""

    start: int
    end: int
    term: str


class Explanation(_Model):
    """Why a result ranked where it did (``explain: true``): its 1-based rank among each leg's
    candidates (null when that leg did not propose it), its cosine and BM25 score, and the
    fused score that orders the results — or, with ``rerank: true``, the cross-encoder's
    score that orders the rescored top (null for results below it)."""

    vector_rank: int | None
    cosine: float | None
    lexical_rank: int | None
    bm25: float | None
    fused: float
    rerank: float | None = None
    # Where the query's terms, as the lexical leg tokenised them, occur in content.
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
    # Raw cosine similarity, 0–1. Present only when query was given.
    similarity_score: float | None = None
    created_at: str
    updated_at: str
    # naturali extension, only with explain: true.
    explain: Explanation | None = None


class MemoryKnowledgeResult(_Model):
    source_type: Literal["memory"]
    memory_id: str
    memory_store_id: str
    memory_store_name: str
    content: str
    score: float
    # Raw cosine similarity, 0–1. Present only when query was given.
    similarity_score: float | None = None
    created_at: str
    updated_at: str
    # naturali extension, only with explain: true.
    explain: Explanation | None = None

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


class SourceRun(_Model):
    """What a source's last sync did."""

    # When it ended.
    at: str
    # The commit mirrored (Git).
    commit: str | None = None
    created: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0
    # Files whose bytes were read (changed ones only).
    files_read: int = 0
    # Files left out, each with why (binary, too large).
    skipped: list[str] = []
    # Files that could not be read, with why.
    failed: dict[str, str] = {}
    # Why the whole sync failed, if it did.
    error: str | None = None


class Source(_Model):
    id: str
    project_id: str
    kind: Literal["git", "web"]
    url: str
    ref: str | None
    folder: str
    path: str
    include: list[str]
    exclude: list[str]
    every_seconds: int | None
    created_at: str
    updated_at: str
    last_run: SourceRun | None = None
    # When the servers sync it next.
    next_run_at: str | None = None
    # A sync asked for and not yet ended (waiting for a server, or running).
    sync_requested: bool = False
