"""Domain records shared by every layer (plain data, no behaviour beyond conversion)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Literal

Role = Literal["owner", "editor", "viewer"]
ROLES: tuple[Role, ...] = ("owner", "editor", "viewer")


class SourceType(StrEnum):
    """What a chunk belongs to; the values are the API's ``source_type``."""

    DOCUMENT = "document"
    MEMORY = "memory"


# A memory's tags come from its record's ``key:value`` strings, where a key may repeat: one
# value is a string, several are a list in file order, so no value is dropped.
MemoryTags = dict[str, str | list[str]]


def utcnow() -> str:
    """Timestamps are ISO 8601 UTC with microseconds and a ``Z``."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def tag_pairs(tags: Mapping[str, str | list[str]]) -> set[tuple[str, str]]:
    """Every key:value pair of a tag map, a repeated key contributing each of its values."""
    pairs: set[tuple[str, str]] = set()
    for key, value in tags.items():
        pairs.update((key, item) for item in ([value] if isinstance(value, str) else value))
    return pairs


def tags_from_strings(values: Iterable[str]) -> MemoryTags:
    """Record tags (``key:value``; a bare ``name`` has the value "") as a tag map."""
    grouped: dict[str, list[str]] = {}
    for value in values:
        key, _, item = value.partition(":")
        grouped.setdefault(key, []).append(item)
    return {k: v[0] if len(v) == 1 else v for k, v in grouped.items()}


@dataclass(frozen=True)
class Grant:
    """What of a project a caller may see and change beyond its role: the documents under one
    of ``paths`` (path prefixes) and the memory stores ``stores``; None lets all of them
    through, an empty tuple none. A token's grant and a membership's meet (``narrowed``) for
    every call; a token made by a limited caller is no wider (``covers``)."""

    paths: tuple[str, ...] | None = None
    stores: tuple[str, ...] | None = None

    @property
    def whole(self) -> bool:
        return self.paths is None and self.stores is None

    def sees_path(self, path: str) -> bool:
        return self.paths is None or path.startswith(self.paths)

    def sees_store(self, store_id: str) -> bool:
        return self.stores is None or store_id in self.stores

    def narrowed(self, other: Grant) -> Grant:
        """What both let through."""
        if self.stores is None or other.stores is None:
            stores = self.stores if other.stores is None else other.stores
        else:
            stores = tuple(s for s in self.stores if s in other.stores)
        return Grant(self.paths_within(other.paths), stores)

    def paths_within(self, prefixes: tuple[str, ...] | None) -> tuple[str, ...] | None:
        """The prefixes (None: every path) narrowed to what this grant lets through: for two
        prefixes of which one holds the other, the longer."""
        if prefixes is None or self.paths is None:
            met = prefixes if self.paths is None else self.paths
            return None if met is None else _shortest(set(met))
        return _shortest(
            {a if a.startswith(b) else b for a in prefixes for b in self.paths if _nested(a, b)}
        )

    def covers(self, other: Grant) -> bool:
        """Whether everything ``other`` lets through, this does too."""
        return self.narrowed(other) == other.narrowed(WHOLE)

    def as_dict(self) -> dict[str, Any]:
        """As the API and the audit trail spell it."""
        return {
            "path_prefixes": None if self.paths is None else list(self.paths),
            "memory_store_ids": None if self.stores is None else list(self.stores),
        }


def _nested(a: str, b: str) -> bool:
    return a.startswith(b) or b.startswith(a)


def _shortest(prefixes: set[str]) -> tuple[str, ...]:
    """The prefixes none of the others holds (a prefix under one kept adds nothing), sorted."""
    return tuple(
        sorted(p for p in prefixes if not any(p != q and p.startswith(q) for q in prefixes))
    )


WHOLE = Grant()


@dataclass(frozen=True)
class User:
    id: str
    name: str
    created_at: str
    # The token this caller came with: what it may do and, if limited, the projects it may
    # reach (None: every project the user is a member of). Commands on the data dir act as
    # the user with every right.
    scope: Scope = "admin"
    projects: tuple[str, ...] | None = None
    token_name: str | None = None
    token_id: str | None = None
    token_expires_at: str | None = None  # a token it makes expires no later
    # What of a project the call may see: the token's grant, and once admitted to a project
    # (service/platform/auth.py), the token's and the membership's together.
    grant: Grant = WHOLE


Scope = Literal["read", "write", "admin"]
SCOPES: tuple[Scope, ...] = ("read", "write", "admin")


@dataclass(frozen=True)
class Token:
    """A user's named bearer token; only its SHA-256 is stored, the secret shown once."""

    id: str
    user_id: str
    name: str
    scope: Scope
    projects: tuple[str, ...] | None
    created_at: str
    expires_at: str | None = None
    last_used_at: str | None = None
    revoked_at: str | None = None
    parent_id: str | None = None  # the token that made it (None: made on the data dir)
    grant: Grant = WHOLE


@dataclass(frozen=True)
class Project:
    id: str
    name: str
    created_at: str
    # The model its passages and questions are embedded with (None: the server's), and the
    # one it is moving to while its vectors are made again (searches use the first until then).
    embedding_model: str | None = None
    embedding_model_next: str | None = None


@dataclass(frozen=True)
class Member:
    project_id: str
    user_id: str
    role: Role
    created_at: str
    grant: Grant = WHOLE


@dataclass(frozen=True)
class Document:
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
    # Whether the newest upload is searchable: "processing" while its job embeds (the
    # version before stays what search sees), "failed" with ``error`` if it could not be.
    status: str = "ready"
    chunks_total: int | None = None
    chunks_done: int | None = None
    error: dict[str, Any] | None = None
    # A PDF's or an image's pages read how (ingest/reading.py Reading's fields), and while
    # processing, its pages without a text layer read by OCR so far.
    reading: dict[str, Any] | None = None
    pages_total: int | None = None
    pages_done: int | None = None


@dataclass(frozen=True)
class AuditEntry:
    """One write, as the audit trail keeps it: who (user, token), what (the operation's route
    and the ids it named), when, under which request id, and the outcome (the status). Never
    a query or a document's content."""

    at: str
    project_id: str | None
    user_id: str
    token_name: str | None
    request_id: str
    operation: str  # "POST /v1/projects/{project_id}/documents"
    ids: dict[str, str]
    status: int
    seq: int = 0  # its place in the trail, set by the store
    grant: Grant = WHOLE  # what of the project the call could see and change


@dataclass(frozen=True)
class ProjectUsage:
    """What a project stores: its documents (their current versions' bytes), chunks (of
    documents and memories) and memories."""

    documents: int
    bytes: int
    chunks: int
    memories: int


@dataclass(frozen=True)
class Folder:
    """A folder of document paths (``/a/b/``): how many documents lie under it, at any depth,
    and their chunks. The folder equal to the prefix asked about holds the documents directly
    in it."""

    path: str
    documents: int
    chunks: int


@dataclass(frozen=True)
class IngestJobStatus:
    """A project's ingestion job as the project page lists it: its document and progress."""

    id: str
    document_id: str
    path: str
    state: str  # queued | running | failed
    chunks_total: int
    chunks_done: int
    error: dict[str, Any] | None
    created_at: str
    pages_total: int = 0  # pages to read by OCR first
    pages_done: int = 0


@dataclass(frozen=True)
class IndexState:
    """A project's search index on this server (GET …/overview): whether it is in memory,
    its live rows, the bytes it holds and maps, where its vector leg is answered."""

    loaded: bool
    budget_bytes: int
    rows: int = 0
    memory_bytes: int = 0
    mapped_bytes: int = 0
    vector_leg: str = "memory"  # memory | database


@dataclass(frozen=True)
class IngestProgress:
    """Where a document's unfinished (or failed) ingestion job stands."""

    state: str  # queued | running | failed
    chunks_total: int
    chunks_done: int
    error: dict[str, Any] | None
    pages_total: int = 0  # pages to read by OCR before the chunks are whole
    pages_done: int = 0


@dataclass(frozen=True)
class IngestJob:
    """A version waiting to be embedded: the document as it will be once ready, and its
    chunks cut but not yet embedded — or, with ``ocr_pages``, the pages to read by OCR first,
    after which the file is read again whole. Durable in the catalog; a server holds it on a
    lease."""

    id: str
    document: Document
    drafts: list[ChunkDraft]
    ocr_pages: list[int] = field(default_factory=list)
    state: str = "queued"  # queued | running | failed
    chunks_done: int = 0
    error: dict[str, Any] | None = None
    created_at: str = ""


@dataclass(frozen=True)
class ChunkDraft:
    """A passage cut from extracted text, before it is stored."""

    ordinal: int
    text: str
    start: int
    end: int
    page: int | None = None
    context: str = ""  # the headings it sits under; then its document's title over them

    def as_list(self) -> list[int | str | None]:
        """Its fields in order, as JSON carries it (``ChunkDraft(*fields)`` reads it back)."""
        return [self.ordinal, self.text, self.start, self.end, self.page, self.context]


@dataclass(frozen=True)
class Chunk:
    seq: int
    id: str
    project_id: str
    source_type: SourceType
    owner_id: str  # document id or memory id
    version: int
    ordinal: int
    text: str
    start: int
    end: int
    page: int | None
    vector: bytes = field(repr=False, default=b"")
    model: str = ""  # the embedder that made ``vector``
    context: str = ""  # its document's title and headings (text/context.py)


@dataclass(frozen=True)
class MemoryStore:
    id: str
    project_id: str
    name: str
    tags: dict[str, str]
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class Memory:
    id: str
    project_id: str
    memory_store_id: str
    title: str
    content: str
    tags: MemoryTags
    revision: int
    content_hash: str
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class Source:
    """A Git repository (or, later, a site) a project's documents under ``path`` mirror,
    synced by any server: now when asked, and every ``every_seconds`` when set.
    ``last_run`` says what its last sync did; ``cursor`` where it left off (a commit)."""

    id: str
    project_id: str
    kind: str  # git
    url: str
    ref: str | None  # a branch or tag; None: the remote's HEAD
    folder: str  # the repository's sub-folder mirrored ("" for all)
    path: str  # the logical prefix its documents go under, ending in "/"
    include: list[str]
    exclude: list[str]
    every_seconds: int | None
    created_at: str
    updated_at: str
    last_run: dict[str, Any] | None = None
    cursor: str | None = None
    next_run_at: float | None = None  # epoch seconds; None: manual only
    requested_at: float | None = None  # a sync asked for and not yet begun
