"""Typed responses of the SDK, generated from the API's contracts by ``python -m
naturali.api.generate.python_models``: do not edit."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow")  # newer servers may add fields


class Project(_Model):
    """A project as its caller sees it: its role, and what of the project it reaches."""

    # Only the documents under these path prefixes, and the sources writing under them; null:
    # every document.
    path_prefixes: list[str] | None = None
    # Only these memory stores; null: every store.
    memory_store_ids: list[str] | None = None
    # This object's id.
    id: str
    # The project's name.
    name: str
    # The role: owner, editor or viewer.
    role: str
    # When it was created (UTC).
    created_at: str
    # The model passages are embedded with.
    embedding_model: str
    # The model the project is moving to, its passages embedded again (null: none).
    embedding_model_next: str | None = None
    # While it moves: passages still to embed again by the new model (null: no move).
    chunks_to_reembed: int | None = None


class Token(_Model):
    """A token as listed; ``token`` (the secret) only in the answer that created it."""

    # Only the documents under these path prefixes, and the sources writing under them; null:
    # every document.
    path_prefixes: list[str] | None = None
    # Only these memory stores; null: every store.
    memory_store_ids: list[str] | None = None
    # This object's id.
    id: str
    # What the token is for.
    name: str
    # What the token may do: read, write or admin.
    scope: Literal["read", "write", "admin"]
    # The projects it is limited to; null for all of the user's.
    projects: list[str] | None
    # When it was created (UTC).
    created_at: str
    # When it stops working (UTC), or null for never.
    expires_at: str | None
    # When it was last used (UTC), or null.
    last_used_at: str | None
    # When it was revoked (UTC), or null.
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
    # Pages without a text layer not read by OCR: over the document's OCR page cap or the
    # project's hourly OCR budget (listed in its warnings too).
    ocr_skipped: list[int] = []


class Document(_Model):
    # This object's id.
    id: str
    # The project's id.
    project_id: str
    # The document's path in the project.
    path: str
    # The document's title (its first heading, or its name).
    title: str
    # What was read from the file (format-specific).
    metadata: dict[str, Any]
    # Key-value labels (keys ≤ 256 chars without ':'; values ≤ 256).
    tags: dict[str, str]
    # The document's version, +1 each time its content changes.
    version: int
    # The stored file's id (one per uploaded content).
    file_id: str
    # The uploaded file's name.
    filename: str
    # The file's size in bytes.
    size: int
    # The file's media type.
    content_type: str
    # The SHA-256 of the content (hex).
    content_hash: str
    # Passages the document was cut into.
    chunk_count: int
    # Pages in the file (PDF and images), else null.
    page_count: int | None
    # What was skipped or guessed, one sentence each.
    warnings: list[str]
    # When it was created (UTC).
    created_at: str
    # When it last changed (UTC).
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
    # This object's id.
    id: str
    # The project's id.
    project_id: str
    # A name (1-200 characters, one line).
    name: str
    # Key-value labels (keys ≤ 256 chars without ':'; values ≤ 256).
    tags: dict[str, str]
    # When it was created (UTC).
    created_at: str
    # When it last changed (UTC).
    updated_at: str


class Passage(_Model):
    """One passage of a document (a chunk of its current version), in order."""

    # The passage's id: cite it, or read the passages around it.
    chunk_id: str
    # The passage's place in its document, from 0.
    ordinal: int
    # The page the passage is on (PDF), else null.
    page: int | None
    # The passage's text.
    content: str
    # ocr: read by OCR from a page without a text layer.
    read_by: Literal["text", "ocr"] = "text"


class PassageList(_Model):
    """A run of a document's passages: ``start`` is the first's place among all ``total``."""

    # This page's items.
    data: list[Passage]
    # The first ordinal returned.
    start: int
    # How many there are in all.
    total: int


class Memory(_Model):
    # This object's id.
    id: str
    # The project's id.
    project_id: str
    # The memory store's id.
    memory_store_id: str
    # The title.
    title: str
    # The text.
    content: str
    # The record's key:value tags; a key with several values maps to a list.
    tags: dict[str, str | list[str]]
    # The memory's revision, +1 on each update.
    revision: int
    # The SHA-256 of the content (hex).
    content_hash: str
    # When it was created (UTC).
    created_at: str
    # When it last changed (UTC).
    updated_at: str


class TermMatch(_Model):
    """A whole word of a result's content whose term is one of the query's: its start and end
    in UTF-16 code units (as JavaScript strings count) and the stemmed term."""

    # The term's first character in the content.
    start: int
    # The character after the term.
    end: int
    # The query term found.
    term: str


class Explanation(_Model):
    """Why a result ranked where it did (``explain: true``): its 1-based rank among each leg's
    candidates (null when that leg did not propose it), its cosine and BM25 score, a
    document's cosine with the query fed back toward the best documents (what the fusion
    weighs in its place), the fused score that orders the results, and with ``rerank: true``
    the cross-encoder's score, blended with the fused one to order the rescored top (null
    for results below it)."""

    # Its rank in the vector leg (1 = first), or null.
    vector_rank: int | None
    # Its cosine similarity to the query, or null.
    cosine: float | None
    # Its rank in the lexical leg (1 = first), or null.
    lexical_rank: int | None
    # Its BM25 score in the lexical leg, or null.
    bm25: float | None
    # A document's cosine with the query moved toward the best documents, which the fusion
    # weighs in place of its cosine; null for a memory.
    fed_back_cosine: float | None = None
    # The blended score of both legs.
    fused: float
    # The cross-encoder's score, when reranked.
    rerank: float | None = None
    # Where the query's terms, as the lexical leg tokenised them, occur in content.
    matches: list[TermMatch] = []
    # The language the lexical leg read content in (ISO 639-1: en, de, zh…).
    language: str | None = None


class DocumentKnowledgeResult(_Model):
    # document or memory.
    source_type: Literal["document"]
    # The document's id.
    document_id: str
    # The passage's id: cite it, or read the passages around it.
    chunk_id: str
    # The document version the passage belongs to.
    document_version: int
    # The page the passage is on (PDF), else null.
    page: int | None
    # The stored file's id (one per uploaded content).
    file_id: str
    # The project's id.
    project_id: str
    # The document's path in the project.
    path: str
    # The uploaded file's name.
    filename: str
    # The file's size in bytes.
    size: int
    # The document's title (its first heading, or its name).
    title: str
    # What was read from the file (format-specific).
    metadata: dict[str, Any]
    # Key-value labels (keys ≤ 256 chars without ':'; values ≤ 256).
    tags: dict[str, str]
    # The passage's own text (null in a fetch without a query when not stored).
    content: str | None
    # The ranking score (higher is better; compare within one answer).
    score: float
    # Raw cosine similarity, 0–1. Present only when query was given.
    similarity_score: float | None = None
    # When it was created (UTC).
    created_at: str
    # When it last changed (UTC).
    updated_at: str
    # naturali extension, only with explain: true.
    explain: Explanation | None = None


class MemoryKnowledgeResult(_Model):
    # document or memory.
    source_type: Literal["memory"]
    # The memory's id.
    memory_id: str
    # The memory store's id.
    memory_store_id: str
    # The memory store's name.
    memory_store_name: str
    # The text.
    content: str
    # The ranking score (higher is better; compare within one answer).
    score: float
    # Raw cosine similarity, 0–1. Present only when query was given.
    similarity_score: float | None = None
    # When it was created (UTC).
    created_at: str
    # When it last changed (UTC).
    updated_at: str
    # naturali extension, only with explain: true.
    explain: Explanation | None = None

    @property
    def path(self) -> None:
        """Memories have no path; present so code can read ``hit.path`` on any result."""
        return None


class KnowledgeSearchResponse(_Model):
    # The results, best first (documents and memories mixed).
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
    # Documents added.
    created: int = 0
    # Documents changed.
    updated: int = 0
    # Documents removed because their file was.
    deleted: int = 0
    # Files already up to date.
    unchanged: int = 0
    # Files whose bytes were read (changed ones only).
    files_read: int = 0
    # Files left out, each with why (binary, too large).
    skipped: list[str] = []
    # Files that could not be read, with why.
    failed: dict[str, str] = {}
    # Why the whole sync failed, if it did.
    error: str | None = None
    # Why the run stopped before the end (its deadline, its page budget); the next run resumes
    # where it stopped.
    truncated: str | None = None


class Source(_Model):
    # This object's id.
    id: str
    # The project's id.
    project_id: str
    # git: a Git repository; web: a documentation site.
    kind: Literal["git", "web"]
    # Where the source is fetched from.
    url: str
    # The branch, tag or commit (Git); null for the default branch.
    ref: str | None
    # The repository folder (Git) or URL path prefix (web) to read.
    folder: str
    # The folder of the project the source's files are kept under.
    path: str
    # Gitignore-style patterns a file must match.
    include: list[str]
    # Gitignore-style patterns that leave a file out.
    exclude: list[str]
    # Seconds between scheduled syncs, or null for on demand.
    every_seconds: int | None
    # When it was created (UTC).
    created_at: str
    # When it last changed (UTC).
    updated_at: str
    # The latest sync's outcome, or null before the first.
    last_run: SourceRun | None = None
    # When the servers sync it next.
    next_run_at: str | None = None
    # A sync asked for and not yet ended (waiting for a server, or running).
    sync_requested: bool = False
