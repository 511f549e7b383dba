"""Memory stores and memories. A store is a vault directory of knowledge records; a memory is
one record file (the file is the truth), mirrored into the catalog for search.

Writes go file first (atomic), then the catalog. If the catalog step fails the file still
holds the memory and the next reconcile indexes it, so nothing is lost.
"""

from __future__ import annotations

import builtins
import shutil
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from naturali.errors import Conflict, InvalidRequest, NotFound
from naturali.ids import new_id
from naturali.ingest.chunk import chunk_pages
from naturali.ingest.extract import Page
from naturali.model import Memory, MemoryStore, ProjectUsage, User, tags_from_strings, utcnow
from naturali.ports.embedder import Embedder
from naturali.ports.state import PlannedWrite
from naturali.ports.storage import EmbeddedChunk, NameTaken, Storage
from naturali.retrieval.records.eligibility import AvailableRecord
from naturali.service import validation
from naturali.service.memory.mutations import MemoryStoreKey, Mutations, Written
from naturali.service.memory.record_requests import SaveRequest, WithdrawRequest
from naturali.service.memory.stores import StoreRegistry, require_store
from naturali.service.platform import grants
from naturali.service.platform.auth import Auth
from naturali.service.platform.quotas import Quotas
from naturali.text.context import in_context
from naturali.vault.record import Record, parse

MAX_NAME_CHARS = 200


@dataclass(frozen=True)
class ReconcileReport:
    indexed: int
    removed: int
    unchanged: int
    invalid: list[str]


def tags_to_strings(tags: dict[str, str]) -> list[str]:
    return [f"{k}:{v}" for k, v in tags.items()]


class Memories:
    def __init__(
        self,
        storage: Storage,
        auth: Auth,
        embedder: Callable[[str], Embedder],  # a project's (its model's)
        stores: StoreRegistry,
        mutations: Mutations,
        quotas: Quotas,
    ) -> None:
        self._mutations = mutations
        self._quotas = quotas
        # Told each project whose memories' chunks a background index changed.
        self.after_index: Callable[[str], None] = lambda project_id: None
        self._storage = storage
        self._auth = auth
        self._embedder = embedder
        self._stores = stores
        # One reconcile per store at a time: the background indexer and searches share it.
        self._reconciling: dict[str, threading.Lock] = {}
        self._reconciling_guard = threading.Lock()

    def vault(self, store_id: str) -> Path:
        """The directory of a store's Markdown records."""
        return self._stores.vault(store_id)

    # stores ---------------------------------------------------------------------------------
    def create_store(
        self, user: User, project_id: str, name: str, tags: dict[str, str] | None
    ) -> MemoryStore:
        """A new memory store with an empty vault."""
        grants.new_stores(user)
        now = utcnow()
        store = MemoryStore(
            new_id("mstore"), project_id, _name(name), validation.tags(tags), now, now
        )
        try:
            self._storage.create_memory_store(store)
        except NameTaken as exc:
            raise Conflict(
                f"a memory store named {store.name!r} exists", code="name_taken", param="name"
            ) from exc
        # The folder only once the store exists: a refused or failed creation leaves none.
        try:
            self.vault(store.id).mkdir(parents=True, exist_ok=True)
        except OSError:
            self._storage.delete_memory_store(project_id, store.id)
            raise
        return store

    def list_stores(self, user: User, project_id: str) -> list[MemoryStore]:
        """The project's memory stores (those the caller was granted)."""
        stores = self._storage.list_memory_stores(project_id)
        return [s for s in stores if user.grant.sees_store(s.id)]

    def get_store(self, user: User, project_id: str, store_id: str) -> MemoryStore:
        """One memory store of the project."""
        return self._store(project_id, store_id)

    def update_store(
        self,
        user: User,
        project_id: str,
        store_id: str,
        name: str | None,
        tags: dict[str, str] | None,
    ) -> MemoryStore:
        """Rename or retag a memory store."""
        store = self._store(project_id, store_id)
        updated = MemoryStore(
            store.id,
            project_id,
            _name(name) if name is not None else store.name,
            validation.tags(tags) if tags is not None else store.tags,
            store.created_at,
            utcnow(),
        )
        try:
            self._storage.update_memory_store(updated)
        except NameTaken as exc:
            raise Conflict(
                f"a memory store named {updated.name!r} exists", code="name_taken", param="name"
            ) from exc
        return updated

    def delete_store(self, user: User, project_id: str, store_id: str) -> None:
        """Deletes the store and its vault (owners only: this removes history too)."""
        self._store(project_id, store_id)
        self._storage.delete_memory_store(project_id, store_id)
        self._stores.forget(store_id)
        shutil.rmtree(self.vault(store_id).parent, ignore_errors=True)

    def _store(self, project_id: str, store_id: str) -> MemoryStore:
        return require_store(self._storage, project_id, store_id)

    # memories (written through the one mutation path) -------------------------------------
    def create(
        self,
        user: User,
        project_id: str,
        store_id: str,
        content: str,
        tags: dict[str, str] | None = None,
        title: str | None = None,
    ) -> Memory:
        """A memory, written as a claim record through the write path and indexed."""
        store = self._store(project_id, store_id)
        body = _content(content)
        record = {
            "kind": "claim",
            "type": "fact",
            "title": validation.title(title) or _title_from(body),
            "tags": tags_to_strings(validation.tags(tags)),
            "body": body,
        }
        with self._quotas.reserve(project_id, ProjectUsage(0, 0, chunks=1, memories=1)):
            written = self._mutations.save_in(
                _key(store), SaveRequest(requestId=new_id("req"), id=new_id("mem"), record=record)
            )
            return self._indexed(store, written)

    def update(
        self,
        user: User,
        project_id: str,
        store_id: str,
        memory_id: str,
        content: str | None = None,
        tags: dict[str, str] | None = None,
        title: str | None = None,
    ) -> Memory:
        """A new revision of a memory (fenced by the revision read)."""
        store = self._store(project_id, store_id)
        current = self._active(store, memory_id)
        record: dict[str, Any] = {}
        if title is not None:
            record["title"] = validation.title(title) or current.title
        if tags is not None:
            record["tags"] = tags_to_strings(validation.tags(tags))
        if content is not None:
            record["body"] = _content(content)
        written = self._mutations.save_in(
            _key(store),
            SaveRequest(
                requestId=new_id("req"),
                id=memory_id,
                expectedRevision=current.scanned.record.revision,
                expectedHash=current.scanned.sha256,
                record=record,
            ),
        )
        return self._indexed(store, written)

    def get(self, user: User, project_id: str, store_id: str, memory_id: str) -> Memory:
        """One memory, as indexed from its record."""
        store = self._store(project_id, store_id)
        self.reconcile(store)
        found = self._storage.get_store_memories([(store.id, memory_id)]).get((store.id, memory_id))
        if found is None:
            raise NotFound(
                f"memory {memory_id} not found", code="memory_not_found", param="memory_id"
            )
        return found

    def list(self, user: User, project_id: str, store_id: str) -> builtins.list[Memory]:
        """The store's memories, oldest first."""
        store = self._store(project_id, store_id)
        self.reconcile(store)
        keys = [(store.id, i) for i in sorted(self._storage.memory_hashes(store.id))]
        memories = self._storage.get_store_memories(keys).values()
        return sorted(memories, key=lambda m: (m.created_at, m.id))

    def delete(self, user: User, project_id: str, store_id: str, memory_id: str) -> None:
        """Withdraws the record: the file stays (lifecycle withdrawn), it leaves search."""
        store = self._store(project_id, store_id)
        self._active(store, memory_id)
        self._mutations.withdraw_in(
            _key(store),
            WithdrawRequest(
                requestId=new_id("req"), id=memory_id, reason="deleted through the memories API"
            ),
        )
        self._storage.remove_memory(store.id, memory_id)

    def _active(self, store: MemoryStore, memory_id: str) -> AvailableRecord:
        with self._stores.opened(store.id) as opened:
            entry = opened.view().entries.get(memory_id)
        if entry is None or entry.lifecycle != "active":
            raise NotFound(
                f"memory {memory_id} not found", code="memory_not_found", param="memory_id"
            )
        return entry

    # reconcile ------------------------------------------------------------------------------
    def reconcile(self, store: MemoryStore, budget: float | None = None) -> ReconcileReport:
        """Bring the catalog in line with the vault, through the same scan and eligibility as
        the records tools: re-chunk and re-embed only records whose content hash changed, drop
        records that left, stopped being active or became ineligible (guards included).

        Writes through the service are indexed by the background indexer as they are
        written; what a search finds left is mostly files edited by other means. A search
        passes a ``budget`` in seconds: once spent, the remaining records wait for the next
        call, so no search does unbounded embedding on another writer's behalf."""
        with self._store_lock(store.id):
            return self._reconcile(store, budget)

    def catch_up(self, store: MemoryStore, budget: float) -> None:
        """A search's ``reconcile``, done without reading a record when nothing changed since
        the catalogue last matched the store in full (``OpenStore.unchanged_since_match``): a
        server of many stores reopens one for almost every search, and the full reconcile
        (read and parse every record, apply the guards) was ~40% of such a search."""
        with self._store_lock(store.id):
            with self._stores.opened(store.id) as opened:
                checking = not opened.matched and opened.listing_allowed
                known = self._storage.memory_hashes(store.id) if checking else None
                if known is not None and opened.unchanged_since_match(known):
                    return
            self._reconcile(store, budget, known)

    def _store_lock(self, store_id: str) -> threading.Lock:
        """The lock a store's reconcile and the indexing of handed writes share."""
        with self._reconciling_guard:
            return self._reconciling.setdefault(store_id, threading.Lock())

    def _reconcile(
        self, store: MemoryStore, budget: float | None, known: dict[str, str] | None = None
    ) -> ReconcileReport:
        """``known``: the catalogue's content hashes, when the caller read them under the
        store's lock it still holds."""
        with self._stores.opened(store.id) as opened:  # open until its match is kept
            view = opened.view()
            invalid = [f"{i.path}: {i.message}" for i in view.scan.issues]
            matched = opened.matched
            if matched and matched[0] is view:
                return ReconcileReport(0, 0, matched[1], invalid)
            active = {i: e for i, e in view.entries.items() if e.lifecycle == "active"}
            if known is None:
                known = self._storage.memory_hashes(store.id)
            indexed, removed, complete = self._match(store, active, known, budget)
            if complete:
                opened.matched = (view, len(active))
                opened.keep_match(view, {i: e.scanned.sha256 for i, e in active.items()})
        return ReconcileReport(indexed, removed, len(active) - indexed, invalid)

    def _match(
        self,
        store: MemoryStore,
        active: dict[str, AvailableRecord],
        known: dict[str, str],
        budget: float | None,
    ) -> tuple[int, int, bool]:
        """The catalogue (``known``: its content hashes) brought to ``active``: (records
        indexed, removed, whether all were within the budget)."""
        indexed, complete = 0, True
        deadline = None if budget is None else time.monotonic() + budget
        for record_id, entry in active.items():
            if known.get(record_id) != entry.scanned.sha256:
                # At least one record per call, so a small budget still makes progress.
                if indexed and deadline is not None and time.monotonic() > deadline:
                    complete = False
                    break
                self._index(store, entry.scanned.record, entry.scanned.sha256, entry.scanned.path)
                indexed += 1
        removed = 0
        for record_id in known.keys() - active.keys():
            self._storage.remove_memory(store.id, record_id)
            removed += 1
        return indexed, removed, complete

    def index_written(self, project_id: str, store_id: str, writes: Iterable[PlannedWrite]) -> None:
        """Index the records a write through the service handed over (from the background
        indexer): parsed from what was written, not read back. Under the store's reconcile
        lock, which a search's reconcile takes too; that reconcile still applies eligibility
        and whatever else changed the files."""
        store = self._storage.get_memory_store(project_id, store_id)
        if store is None:
            return
        with self._store_lock(store.id):
            known = self._storage.memory_hashes(store.id)
            for write in writes:
                if write.lifecycle != "active":
                    self._storage.remove_memory(store.id, write.record_id)
                elif known.get(write.record_id) != write.sha256:
                    self._index_write(store, write)
        self.after_index(project_id)

    def _indexed(self, store: MemoryStore, written: Written) -> Memory:
        """The memory a write just made, indexed now unless the background indexer did."""
        record = written.receipt.records[0]
        key = (store.id, record.id)
        found = self._storage.get_store_memories([key]).get(key)
        if found is not None and found.content_hash == record.sha256:
            return found
        # The memories API answers with the memory as written, indexed: this one record only.
        (write,) = (w for w in written.writes if w.record_id == record.id)
        return self._index_write(store, write)

    def _index_write(self, store: MemoryStore, write: PlannedWrite) -> Memory:
        return self._index(store, parse(write.content), write.sha256, write.path)

    def _index(self, store: MemoryStore, record: Record, digest: str, relative: str) -> Memory:
        now = utcnow()
        memory = Memory(
            id=record.id,
            project_id=store.project_id,
            memory_store_id=store.id,
            title=record.title,
            content=record.body,
            tags=tags_from_strings(record.tags),
            revision=record.revision,
            content_hash=digest,
            created_at=str(record.front.get("recorded_at") or now),
            updated_at=str(
                record.front.get("updated_at") or record.front.get("recorded_at") or now
            ),
        )
        embedder = self._embedder(store.project_id)
        drafts = chunk_pages([Page(None, _searchable(record), 0)], embedder.count_tokens)
        # Urgent: a write's answer waits on this, or searches of the store do (it runs under
        # their reconcile lock), so at their priority and not queued behind an upload's.
        texts = [in_context(d.text, d.context) for d in drafts]
        vectors = embedder.embed(texts, urgent=True) if drafts else np.zeros((0, 1))
        chunks = [
            EmbeddedChunk(d, np.ascontiguousarray(v, dtype=np.float32).tobytes())
            for d, v in zip(drafts, vectors, strict=True)
        ]
        self._storage.replace_memory(memory, relative, chunks, embedder.model_id)
        return memory


def _searchable(record: Record) -> str:
    """What a record is found by: its body, or for a record written without one (a dated
    decision with only a title), its title and summary, so that no record is unsearchable."""
    if record.body.strip():
        return record.body
    summary = record.front.get("summary")
    return "\n\n".join(str(t) for t in (record.title, summary) if t)


def _key(store: MemoryStore) -> MemoryStoreKey:
    return MemoryStoreKey(store.project_id, store.id)


def _content(content: str) -> str:
    if not isinstance(content, str) or not content.strip():
        raise InvalidRequest(
            "content must be a non-empty string", code="invalid_content", param="content"
        )
    return validation.text(content, "content")


def _name(name: str) -> str:
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME_CHARS:
        raise InvalidRequest(
            f"name must be 1–{MAX_NAME_CHARS} characters", code="invalid_name", param="name"
        )
    return validation.one_line(name, "name", "invalid_name").strip()


def _title_from(content: str) -> str:
    first = content.strip().splitlines()[0].lstrip("# ").strip()
    return first[:80] + ("…" if len(first) > 80 else "")
