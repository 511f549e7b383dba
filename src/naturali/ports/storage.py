"""The storage port: what the service layer asks of a catalog backend, one protocol per
aggregate (users, projects and members, documents, memory stores and memories, chunks);
``Storage`` is all of them, as one backend provides them.

SQL lives only in the adapters (``storage/sqlite``). A method either completes or raises and
leaves nothing written; ``save_document_version`` and ``replace_memory`` are single
transactions, so a crash mid-ingest leaves the previous version searchable.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from naturali.model import (
    WHOLE,
    AuditEntry,
    Chunk,
    ChunkDraft,
    Document,
    Folder,
    Grant,
    IngestJob,
    IngestJobStatus,
    IngestProgress,
    Member,
    Memory,
    MemoryStore,
    Project,
    ProjectUsage,
    SourceType,
    Token,
    User,
)
from naturali.ports.sources import SourceStorage
from naturali.ports.vector_search import VectorSearch


@dataclass(frozen=True)
class ChunkChanges:
    """What changed in a project's chunks since a sync point (see ``retrieval.index``)."""

    added: list[Chunk]  # in seq order, each after the chunk cursor (the index bisects seqs)
    removed: list[int]  # chunk seqs
    chunk_cursor: int
    removal_cursor: int


@dataclass(frozen=True)
class NewVector:
    """A stored chunk's vector made again, by its key (project, seq)."""

    project_id: str
    seq: int
    vector: bytes


@dataclass(frozen=True)
class EmbeddedChunk:
    draft: ChunkDraft
    vector: bytes


class DocumentPathTaken(Exception):
    """Another document of the project has this path."""


class NameTaken(Exception):
    """Another memory store of the project has this name."""


class LastOwner(Exception):
    """The change would leave a project without an owner (checked in the same transaction)."""


class VersionConflict(Exception):
    """The document moved on (or went away) since the new version was built from it."""


def memory_owner(store_id: str, memory_id: str) -> str:
    """A memory chunk's owner: record ids are unique within a store, not across stores."""
    return f"{store_id}/{memory_id}"


class UserStorage(Protocol):
    def create_user(self, user: User, token: Token, token_hash: str) -> None:
        """A user with its first token (by SHA-256)."""
        ...

    def create_token(self, token: Token, token_hash: str) -> None:
        """Another token (by SHA-256) for a user."""
        ...

    def token_for(self, token_hash: str) -> tuple[User, Token] | None:
        """The token with this SHA-256 and its user, acting as the token allows, or None.
        Revoked and expired tokens are returned too: the caller says why they are refused."""
        ...

    def list_tokens(self, user_id: str, within: str | None = None) -> list[Token]:
        """A user's tokens, oldest first, revoked ones included; with ``within``, only that
        token and those made through it."""
        ...

    def revoke_token(
        self, user_id: str, token_id: str, when: str, within: str | None = None
    ) -> bool:
        """Revoke one of the user's tokens and every token made through it, in one step;
        False if it has no such live token (with ``within``: none made through that one)."""
        ...

    def touch_token(self, token_id: str, when: str) -> None:
        """Record when a token was last used."""
        ...

    def get_user(self, user_id: str) -> User | None:
        """The user with this id, or None."""
        ...

    def count_users(self) -> int:
        """How many users exist (zero on a fresh data dir)."""
        ...

    def oldest_user(self) -> User | None:
        """The first user created (the owner a fresh data dir was bootstrapped with)."""
        ...


class ProjectStorage(Protocol):
    def create_project(self, project: Project, owner: Member) -> None:
        """The project and its first owner, in one transaction."""
        ...

    def get_project(self, project_id: str) -> Project | None:
        """The project with this id, or None."""
        ...

    def list_projects(self, user_id: str) -> list[tuple[Project, Member]]:
        """The projects ``user_id`` is a member of, with the membership."""
        ...

    def get_member(self, project_id: str, user_id: str) -> Member | None:
        """The user's membership of the project, or None."""
        ...

    def list_members(self, project_id: str) -> list[Member]:
        """The project's members."""
        ...

    def put_member(self, member: Member) -> None:
        """Add or change a member; raises LastOwner, changing nothing, if no owner is left."""
        ...

    def remove_member(self, project_id: str, user_id: str) -> None:
        """Raises LastOwner, changing nothing, if no owner would be left."""
        ...

    def set_project_models(
        self, project_id: str, model: str | None, next_model: str | None
    ) -> None:
        """The model the project is embedded with, and the one it moves to."""
        ...

    def moving_projects(self) -> list[Project]:
        """The projects whose vectors are being made again by another model."""
        ...


class DocumentStorage(Protocol):
    def get_document(self, project_id: str, document_id: str) -> Document | None:
        """The document with this id in the project, or None."""
        ...

    def get_document_by_path(self, project_id: str, path: str) -> Document | None:
        """The document at exactly ``path`` in the project, or None."""
        ...

    def get_documents(self, project_id: str, ids: Sequence[str]) -> dict[str, Document]:
        """The documents of ``ids`` that exist in the project, by id."""
        ...

    def project_usage(self, project_id: str, grant: Grant = WHOLE) -> ProjectUsage:
        """What the project stores now (for its quotas and ``/usage``), or what of it is
        under ``grant`` (its documents' current versions' chunks, its stores' memories)."""
        ...

    def project_lock(self, project_id: str) -> AbstractContextManager[None]:
        """Held by one writer of the project at a time, across threads, processes and
        servers: a quota's check and the write it admits are one step under it."""
        ...

    def list_documents(
        self,
        project_id: str,
        prefixes: Sequence[str] | None,
        after_path: str | None,
        limit: int,
    ) -> list[Document]:
        """Documents by path, from after ``after_path``, under one of ``prefixes`` (None:
        all)."""
        ...

    def save_document_version(
        self, document: Document, chunks: Sequence[EmbeddedChunk], model_id: str, *, create: bool
    ) -> None:
        """A new document, or its next version fenced by the previous one (VersionConflict),
        with its chunks; DocumentPathTaken if another document has the path."""
        ...

    def delete_document(self, project_id: str, document_id: str) -> None:
        """The document, its versions and its chunks."""
        ...


class AuditStorage(Protocol):
    """The append-only audit trail of writes."""

    def append_audit(self, entry: AuditEntry) -> None:
        """Append one entry (its ``seq`` is the store's)."""
        ...

    def list_audit(
        self,
        project_id: str,
        since: str | None,
        until: str | None,
        operation: str | None,
        after_seq: int,
        limit: int,
    ) -> list[AuditEntry]:
        """A project's entries in order, after ``after_seq``, in [since, until), of one
        operation (its route, e.g. ``POST /v1/projects/{project_id}/documents``) if given."""
        ...


class IngestJobStorage(Protocol):
    """Durable ingestion jobs: a version cut into chunks, waiting to be embedded by whichever
    server takes it. A server holds a job on a lease it renews; a job whose lease ran out
    (its server died) is taken again, and only the holder of the lease completes it."""

    def enqueue_ingest(self, job: IngestJob, placeholder: Document | None) -> None:
        """Queue the job, replacing any earlier unfinished job of its document (the newest
        upload wins). A new document is created as ``placeholder`` (version 0, no chunks)
        in the same transaction: DocumentPathTaken if another document has the path."""
        ...

    def claim_ingest(
        self, owner: str, lease_seconds: float, exclude_projects: Collection[str] = ()
    ) -> IngestJob | None:
        """The oldest queued job, or one whose lease ran out, of a project not in
        ``exclude_projects`` (those a worker is already serving), now held by ``owner``;
        never one job to two owners."""
        ...

    def queued_chunks(self, project_id: str) -> int:
        """Chunks of the project's queued and running jobs not embedded yet."""
        ...

    def renew_ingest(
        self,
        job_id: str,
        owner: str,
        chunks_done: int,
        lease_seconds: float,
        pages_done: int = 0,
        chunks_total: int | None = None,
    ) -> bool:
        """Record progress (pages read by OCR, chunks embedded, and once OCR is done the
        chunks the version has) and extend the lease; False if the job is no longer
        ``owner``'s (replaced by a newer upload, deleted, or taken after the lease ran out)."""
        ...

    def finish_ingest(
        self,
        job_id: str,
        owner: str,
        document: Document,
        chunks: Sequence[EmbeddedChunk],
        model_id: str,
    ) -> bool:
        """In one transaction: the version and its chunks written (fenced as
        save_document_version) and the job gone. False, with nothing written, if the job is
        no longer ``owner``'s."""
        ...

    def fail_ingest(self, job_id: str, owner: str, error: dict[str, Any]) -> None:
        """The job failed with ``error`` (the error shape); the document keeps its version."""
        ...

    def ingest_job_counts(self) -> dict[str, int]:
        """How many jobs of every project are queued, running and failed (for metrics)."""
        ...

    def ingest_progress(
        self, project_id: str, document_ids: Sequence[str]
    ) -> dict[str, IngestProgress]:
        """Where the unfinished or failed job of each of these documents stands, by id."""
        ...


class OverviewStorage(Protocol):
    """Read-only aggregates for a project's page: its folders, jobs and stores' sizes."""

    def document_folders(
        self,
        project_id: str,
        prefix: str,
        after: str | None,
        limit: int,
        granted: Sequence[str] | None = None,
    ) -> list[Folder]:
        """The folders directly under ``prefix`` (a path ending in ``/``) by path, after the
        folder ``after``, with their documents and chunks at any depth (of those under
        ``granted`` when given); first, when no ``after`` is given and it has any, ``prefix``
        itself for the documents directly in it."""
        ...

    def list_ingest_jobs(
        self,
        project_id: str,
        after: tuple[str, str] | None,
        limit: int,
        granted: Sequence[str] | None = None,
    ) -> list[IngestJobStatus]:
        """The project's unfinished and failed jobs, oldest first, after (created_at, id);
        of documents under ``granted`` when given."""
        ...

    def project_ingest_counts(
        self, project_id: str, granted: Sequence[str] | None = None
    ) -> dict[str, int]:
        """How many of the project's jobs are queued, running and failed."""
        ...

    def memory_counts(self, project_id: str) -> dict[str, int]:
        """Memories in each of the project's stores that has any, by store id."""
        ...


class MemoryStorage(Protocol):
    """Memory stores and the memory index (the vault files are the truth)."""

    def create_memory_store(self, store: MemoryStore) -> None:
        """NameTaken if another store of the project has the name."""
        ...

    def get_memory_store(self, project_id: str, store_id: str) -> MemoryStore | None:
        """The store with this id in the project, or None."""
        ...

    def list_memory_stores(self, project_id: str) -> list[MemoryStore]:
        """The project's memory stores."""
        ...

    def update_memory_store(self, store: MemoryStore) -> None:
        """NameTaken if another store of the project has the new name."""
        ...

    def delete_memory_store(self, project_id: str, store_id: str) -> None:
        """The store, its indexed memories and their chunks (not its vault)."""
        ...

    def memory_hashes(self, store_id: str) -> dict[str, str]:
        """Indexed memory id → content hash of the file it was indexed from."""
        ...

    def get_store_memories(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], Memory]:
        """Indexed memories by (store id, memory id)."""
        ...

    def replace_memory(
        self, memory: Memory, path: str, chunks: Sequence[EmbeddedChunk], model_id: str
    ) -> None:
        """A memory and its chunks as indexed from the vault file at ``path``, replacing any
        earlier indexing of it, in one transaction."""
        ...

    def remove_memory(self, store_id: str, memory_id: str) -> None:
        """A memory and its chunks leave the index."""
        ...


class ChunkStorage(Protocol):
    """Chunks, for the in-memory search index, fetch mode and re-embedding."""

    def chunk_changes(
        self, project_id: str, chunk_cursor: int, removal_cursor: int
    ) -> ChunkChanges:
        """Chunks added and removed in the project since the cursors (see ``retrieval.index``)."""
        ...

    def get_chunks(self, project_id: str, seqs: Sequence[int]) -> dict[int, Chunk]:
        """A project's chunks by their sequence numbers (those that still exist in it), without
        their vectors (``vector`` is empty): their text and provenance, for results. The
        project bounds the lookup: a seq of another project is not found, and a store keyed
        by (project, seq) reads them by its key."""
        ...

    def stale_chunks(self, model_id: str, limit: int) -> list[Chunk]:
        """Chunks of the projects on the server's model whose vectors another model made, in
        no particular order."""
        ...

    def chunks_not_of(
        self, project_id: str, model_id: str, after_seq: int, limit: int
    ) -> list[Chunk]:
        """The project's chunks after ``after_seq`` whose vectors another model made (or that
        have none), in seq order, without their vectors."""
        ...

    def count_chunks_not_of(self, project_id: str, model_id: str) -> int:
        """How many of the project's chunks another model embedded."""
        ...

    def set_vectors(self, vectors: Sequence[NewVector], model_id: str) -> None:
        """Replace chunks' vectors with ones ``model_id`` made."""
        ...

    def owner_chunks(
        self, project_id: str, source_type: SourceType, owner_ids: Sequence[str]
    ) -> list[Chunk]:
        """A project's chunks of these documents or memories, in order."""
        ...


class Storage(
    UserStorage,
    SourceStorage,
    ProjectStorage,
    DocumentStorage,
    IngestJobStorage,
    AuditStorage,
    MemoryStorage,
    ChunkStorage,
    OverviewStorage,
    Protocol,
):
    """Every aggregate of the catalog, as one backend provides them."""

    def close(self) -> None:
        """Close the catalog's connections."""
        ...

    def vector_search(self) -> VectorSearch | None:
        """The store's own nearest-vector search, if it has one."""
        ...
