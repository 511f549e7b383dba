"""The storage port: everything the service layer asks of a catalog backend.

SQL lives only in the adapters (``storage/sqlite``). A method either completes or raises and
leaves nothing written; ``save_document_version`` and ``replace_memory`` are single
transactions, so a crash mid-ingest leaves the previous version searchable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from naturali.model import (
    Chunk,
    ChunkDraft,
    Document,
    Member,
    Memory,
    MemoryStore,
    Project,
    SourceType,
    User,
)


@dataclass(frozen=True)
class ChunkChanges:
    """What changed in a project's chunks since a sync point (see ``retrieval.index``)."""

    added: list[Chunk]
    removed: list[int]  # chunk seqs
    chunk_cursor: int
    removal_cursor: int


@dataclass(frozen=True)
class EmbeddedChunk:
    draft: ChunkDraft
    vector: bytes


class DocumentPathTaken(Exception):
    """A unique name (document path, store name) is already in use."""


class LastOwner(Exception):
    """The change would leave a project without an owner (checked in the same transaction)."""


class VersionConflict(Exception):
    """The document moved on (or went away) since the new version was built from it."""


def memory_owner(store_id: str, memory_id: str) -> str:
    """A memory chunk's owner: record ids are unique within a store, not across stores."""
    return f"{store_id}/{memory_id}"


class Storage(Protocol):
    # users and tokens
    def create_user(self, user: User, token_hash: str) -> None: ...
    def add_token(self, user_id: str, token_hash: str) -> None: ...
    def user_for_token(self, token_hash: str) -> User | None: ...
    def get_user(self, user_id: str) -> User | None: ...
    def count_users(self) -> int: ...
    def oldest_user(self) -> User | None: ...

    # projects and members
    def create_project(self, project: Project, owner: Member) -> None: ...
    def get_project(self, project_id: str) -> Project | None: ...
    def list_projects(self, user_id: str) -> list[tuple[Project, Member]]: ...
    def get_member(self, project_id: str, user_id: str) -> Member | None: ...
    def list_members(self, project_id: str) -> list[Member]: ...
    def put_member(self, member: Member) -> None:
        """Add or change a member; raises LastOwner, changing nothing, if no owner is left."""
        ...

    def remove_member(self, project_id: str, user_id: str) -> None:
        """Raises LastOwner, changing nothing, if no owner would be left."""
        ...

    # documents
    def get_document(self, project_id: str, document_id: str) -> Document | None: ...
    def get_documents(self, project_id: str, ids: Sequence[str]) -> dict[str, Document]: ...
    def list_documents(
        self, project_id: str, path_prefix: str | None, after_path: str | None, limit: int
    ) -> list[Document]: ...
    def save_document_version(
        self, document: Document, chunks: Sequence[EmbeddedChunk], model_id: str, *, create: bool
    ) -> None: ...
    def delete_document(self, project_id: str, document_id: str) -> None: ...

    # memory stores and the memory index (the vault files are the truth)
    def create_memory_store(self, store: MemoryStore) -> None: ...
    def get_memory_store(self, project_id: str, store_id: str) -> MemoryStore | None: ...
    def list_memory_stores(self, project_id: str) -> list[MemoryStore]: ...
    def update_memory_store(self, store: MemoryStore) -> None: ...
    def delete_memory_store(self, project_id: str, store_id: str) -> None: ...
    def memory_hashes(self, store_id: str) -> dict[str, str]: ...
    def get_store_memories(
        self, keys: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], Memory]: ...
    def replace_memory(
        self,
        memory: Memory,
        path: str,
        chunks: Sequence[EmbeddedChunk],
        model_id: str,
    ) -> None: ...
    def remove_memory(self, store_id: str, memory_id: str) -> None: ...

    # chunks, for the in-memory search index and for fetch mode
    def chunk_changes(
        self, project_id: str, chunk_cursor: int, removal_cursor: int
    ) -> ChunkChanges: ...
    def get_chunks(self, seqs: Sequence[int]) -> dict[int, Chunk]: ...
    def stale_chunks(self, model_id: str, limit: int) -> list[Chunk]:
        """Chunks whose vectors another model made (oldest first)."""
        ...

    def set_vectors(self, vectors: Sequence[tuple[int, bytes]], model_id: str) -> None: ...
    def owner_chunks(self, source_type: SourceType, owner_ids: Sequence[str]) -> list[Chunk]: ...

    def close(self) -> None: ...
