"""Result models of the documents-and-memories side (docs/spec/search-api.md): projects,
members, documents, memory stores, memories and knowledge search results."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import Field

from naturali.contracts.described import Described
from naturali.model import (
    AuditEntry,
    Document,
    Member,
    Memory,
    MemoryStore,
    Project,
    Source,
    Token,
)


class Limited(Described):
    """What of a project it reaches (model.py Grant), beyond its projects and role."""

    path_prefixes: list[str] | None = Field(
        None,
        description="Only the documents under these path prefixes, and the sources writing "
        "under them; null: every document.",
    )
    memory_store_ids: list[str] | None = Field(
        None, description="Only these memory stores; null: every store."
    )


class ProjectOut(Limited):
    """A project as its caller sees it: its role, and what of the project it reaches."""

    id: str
    name: str
    role: str
    created_at: str
    embedding_model: str
    embedding_model_next: str | None = None
    chunks_to_reembed: int | None = None

    @classmethod
    def of(
        cls, project: Project, member: Member, model: str, left: int | None = None
    ) -> ProjectOut:
        """``member``: the caller's membership, its grant met with the token's; ``model``: the
        model the project is embedded with now; ``left``: while it moves to another, its
        chunks still to embed again."""
        return cls(
            **member.grant.as_dict(),
            id=project.id,
            name=project.name,
            role=member.role,
            created_at=project.created_at,
            embedding_model=model,
            embedding_model_next=project.embedding_model_next,
            chunks_to_reembed=left,
        )


class ProjectList(Described):
    data: list[ProjectOut]


class TokenOut(Limited):
    """A token as listed: never its secret."""

    id: str
    name: str
    scope: Literal["read", "write", "admin"]
    projects: list[str] | None
    created_at: str
    expires_at: str | None
    last_used_at: str | None
    revoked_at: str | None

    @classmethod
    def of(cls, token: Token) -> TokenOut:
        projects = list(token.projects) if token.projects is not None else None
        left_out = ("user_id", "projects", "grant")
        fields = {k: v for k, v in token.__dict__.items() if k not in left_out}
        return cls(**fields, projects=projects, **token.grant.as_dict())


class TokenCreated(TokenOut):
    token: str = Field(description="The secret: shown this once, only its hash is kept.")


class TokenList(Described):
    data: list[TokenOut]


class MemberOut(Limited):
    project_id: str
    user_id: str
    role: str
    created_at: str

    @classmethod
    def of(cls, m: Member) -> MemberOut:
        return cls(
            project_id=m.project_id,
            user_id=m.user_id,
            role=m.role,
            created_at=m.created_at,
            **m.grant.as_dict(),
        )


class MemberList(Described):
    data: list[MemberOut]


class PagesRead(Described):
    """What was read how on a PDF's or an image's pages. A passage on a page in
    ``ocr_pages`` was read by OCR: check it against the page before quoting it."""

    text_pages: int = Field(description="Pages read from their text layer.")
    ocr_pages: list[int] = Field(description="Pages without a text layer, read by OCR.")
    empty_pages: list[int] = Field(description="Pages with no text, by either.")
    ocr_pending: list[int] = Field(
        description="Pages without a text layer still waiting for OCR (while processing)."
    )
    ocr_skipped: list[int] = Field(
        default_factory=list,
        description="Pages without a text layer not read by OCR: over the document's OCR page "
        "cap or the project's hourly OCR budget (listed in its warnings too).",
    )


class DocumentOut(Described):
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
    status: Literal["processing", "ready", "failed"] = Field(
        description="processing while the newest upload is embedded (the version before is "
        "what search sees until then), ready once it is searchable, failed with error."
    )
    chunks_total: int | None = Field(None, description="Chunks of the upload in progress.")
    chunks_done: int | None = Field(None, description="Of those, embedded so far.")
    error: dict[str, Any] | None = Field(
        None, description="Why the newest upload failed, in the error shape's fields."
    )
    reading: PagesRead | None = Field(
        None, description="A PDF's or an image's pages read how (null for other files)."
    )
    pages_total: int | None = Field(
        None, description="Pages of the upload in progress to read by OCR before embedding."
    )
    pages_done: int | None = Field(None, description="Of those, read so far.")

    @classmethod
    def of(cls, d: Document) -> DocumentOut:
        return cls(**d.__dict__)


class DocumentList(Described):
    data: list[DocumentOut]
    next_cursor: str | None


class Passage(Described):
    """One passage of a document (a chunk of its current version), in order."""

    chunk_id: str
    ordinal: int
    page: int | None
    content: str
    read_by: Literal["text", "ocr"] = Field(
        "text", description="ocr: read by OCR from a page without a text layer."
    )


class PassageList(Described):
    """A run of a document's passages: ``start`` is the first's place among all ``total``."""

    data: list[Passage]
    start: int
    total: int


class MemoryStoreOut(Described):
    id: str
    project_id: str
    name: str
    tags: dict[str, str]
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, s: MemoryStore) -> MemoryStoreOut:
        return cls(**s.__dict__)


class MemoryStoreList(Described):
    data: list[MemoryStoreOut]


class MemoryOut(Described):
    id: str
    project_id: str
    memory_store_id: str
    title: str
    content: str
    tags: dict[str, str | list[str]] = Field(
        description="The record's key:value tags; a key with several values maps to a list."
    )
    revision: int
    content_hash: str
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, m: Memory) -> MemoryOut:
        return cls(**m.__dict__)


class MemoryList(Described):
    data: list[MemoryOut]


class TermMatch(Described):
    """A whole word of a result's content whose term is one of the query's: its start and
    end in UTF-16 code units (as JavaScript strings count) and the stemmed term."""

    start: int
    end: int
    term: str


class Explanation(Described):
    """Why a result ranked where it did (``explain: true``): its 1-based rank among each leg's
    candidates (null when that leg did not propose it), its cosine and BM25 score, a
    document's cosine with the query fed back toward the best documents (what the fusion
    weighs in its place), the fused score that orders the results, and with ``rerank: true``
    the cross-encoder's score, blended with the fused one to order the rescored top (null
    for results below it)."""

    vector_rank: int | None
    cosine: float | None
    lexical_rank: int | None
    bm25: float | None
    fed_back_cosine: float | None = None
    fused: float
    rerank: float | None = None
    matches: list[TermMatch] = Field(
        default_factory=list,
        description="Where the query's terms, as the lexical leg tokenised them, occur in content.",
    )
    language: str | None = Field(
        default=None,
        description="The language the lexical leg read content in (ISO 639-1: en, de, zh…).",
        examples=["de"],
    )


class DocumentKnowledgeResult(Described):
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
    similarity_score: float | None = Field(
        default=None, description="Raw cosine similarity, 0–1. Present only when query was given."
    )
    created_at: str
    updated_at: str
    explain: Explanation | None = Field(
        default=None, description="naturali extension, only with explain: true."
    )


class MemoryKnowledgeResult(Described):
    source_type: Literal["memory"]
    memory_id: str
    memory_store_id: str
    memory_store_name: str
    content: str
    score: float
    similarity_score: float | None = Field(
        default=None, description="Raw cosine similarity, 0–1. Present only when query was given."
    )
    created_at: str
    updated_at: str
    explain: Explanation | None = Field(
        default=None, description="naturali extension, only with explain: true."
    )


KnowledgeResult = Annotated[
    DocumentKnowledgeResult | MemoryKnowledgeResult, Field(discriminator="source_type")
]


class KnowledgeSearchResponse(Described):
    results: list[KnowledgeResult]


class Deleted(Described):
    id: str
    deleted: bool = True


class UsageOut(Described):
    """What a project stores, beside its quotas (0: no quota)."""

    documents: int
    bytes: int
    chunks: int
    memories: int
    quotas: dict[str, int]


class AuditEntryOut(Limited):
    """One audited write; ``path_prefixes`` and ``memory_store_ids``: what of the project
    the call could reach."""

    seq: int
    at: str
    user_id: str
    token_name: str | None
    request_id: str
    operation: str
    ids: dict[str, str]
    status: int

    @classmethod
    def of(cls, entry: AuditEntry) -> AuditEntryOut:
        fields = {k: v for k, v in entry.__dict__.items() if k not in ("project_id", "grant")}
        return cls(**fields, **entry.grant.as_dict())


class AuditPage(Described):
    data: list[AuditEntryOut]
    next_cursor: str | None


class SourceRun(Described):
    """What a source's last sync did."""

    at: str = Field(description="When it ended.")
    commit: str | None = Field(None, description="The commit mirrored (Git).")
    created: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0
    files_read: int = Field(0, description="Files whose bytes were read (changed ones only).")
    skipped: list[str] = Field(
        default_factory=list, description="Files left out, each with why (binary, too large)."
    )
    failed: dict[str, str] = Field(
        default_factory=dict, description="Files that could not be read, with why."
    )
    error: str | None = Field(None, description="Why the whole sync failed, if it did.")
    truncated: str | None = Field(
        None,
        description="Why the run stopped before the end (its deadline, its page budget); "
        "the next run resumes where it stopped.",
    )


class SourceOut(Described):
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
    next_run_at: str | None = Field(None, description="When the servers sync it next.")
    sync_requested: bool = Field(
        False, description="A sync asked for and not yet ended (waiting for a server, or running)."
    )

    @classmethod
    def of(cls, s: Source) -> SourceOut:
        fields = {k: v for k, v in s.__dict__.items() if k not in _SOURCE_STATE}
        return cls(
            **fields,
            next_run_at=_iso(s.next_run_at),
            sync_requested=s.requested_at is not None,
        )


_SOURCE_STATE = {"cursor", "next_run_at", "requested_at"}


def _iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class SourceList(Described):
    data: list[SourceOut]
