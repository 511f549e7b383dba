"""The search indexes of one server: one ``ProjectIndex`` per project, synced with the store
before each search behind its gate, held within a memory budget (``cache``), and saved as
snapshots in the cache dir so a restarted server does not rebuild them from every chunk; what
need not hold up a search or a write is left to ``jobs``."""

from __future__ import annotations

import functools
import logging
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from naturali.model import IndexState
from naturali.ports.storage import ChunkChanges, Storage
from naturali.ports.vector_search import VectorSearch
from naturali.retrieval.index import ProjectIndex
from naturali.retrieval.indexes import snapshot
from naturali.retrieval.indexes.cache import IndexCache
from naturali.retrieval.indexes.gate import Gate
from naturali.retrieval.indexes.jobs import IndexJobs
from naturali.retrieval.owners import read_owners
from naturali.retrieval.vector_leg.stored_vectors import StoredVectors

T = TypeVar("T")
# A project at most this large has its snapshot kept up to date as it is written (``written``):
# ~5 ms of a write's CPU for a project of 100 chunks; a large one's first search after a
# restart reads its snapshot and what changed since.
PREPARED_ROWS = 2_000
# How long a start spends loading small saved indexes once the large ones are in (``restore``).
RESTORE_SMALL_SECONDS = 2.0

log = logging.getLogger("naturali.index")


@dataclass(frozen=True)
class _Seen:
    """Changes read from the store, and the index cursors they were read from."""

    cursors: tuple[int, int]
    changes: ChunkChanges

    @property
    def changes_anything(self) -> bool:
        return bool(self.changes.added or self.changes.removed)


class IndexRegistry:
    """One ``ProjectIndex`` per project, synced before each search behind a per-project
    readers–writer ``Gate``."""

    def __init__(
        self,
        storage: Storage,
        dimension: Callable[[str], int],
        model_id: Callable[[str], str],
        memory_budget: int = 2 << 30,
        snapshots: Path | None = None,
        snapshot_rows: int = 10_000,
        stored_vectors_from: int = 0,
    ) -> None:
        """``stored_vectors_from``: a project of at least this many chunks has its vector leg
        answered by the store when it can (``Storage.vector_search``; 0: never)."""
        self._storage = storage
        self._vector_search = storage.vector_search() if stored_vectors_from else None
        self._stored_vectors_from = stored_vectors_from
        self._building: set[str] = set()  # projects whose store-side index was asked for
        self._dimension = dimension
        self._model_id = model_id
        self.cache = IndexCache(memory_budget)
        self.jobs = IndexJobs()  # run by the composition root's thread
        self._snapshots = snapshots
        # Saved when this many rows were appended since the last save, and at least a fifth
        # of the index: often enough that a restart reads little, rarely enough to cost little.
        self._snapshot_rows = snapshot_rows
        self._gates: dict[str, Gate] = {}
        self._saved_rows: dict[str, int] = {}  # project → index rows when last saved
        self._guard = threading.Lock()

    @contextmanager
    def synced(self, project_id: str) -> Iterator[ProjectIndex]:
        """The project's index, brought up to date, held for the caller's read.

        Searches of a project read its index together; a sync that changes it waits for them
        (numpy does the heavy work, and this keeps the arrays and postings consistent without
        copying them per query). Most searches find nothing changed and never wait.
        """
        gate = self._gate(project_id)
        with gate.read():
            index = self.cache.get(project_id)
            seen = self._changes(index)
            if index is not None and seen is not None and not seen.changes_anything:
                self._touch(project_id, index)
                yield index
                return
        with gate.write():
            index = self._sync(project_id, seen)
            worth_saving = self._worth_saving(index)
        if worth_saving:
            self._save_later(project_id)
        with gate.read():
            yield index

    def _gate(self, project_id: str) -> Gate:
        with self._guard:
            return self._gates.setdefault(project_id, Gate())

    def _changes(self, index: ProjectIndex | None) -> _Seen | None:
        """What the store changed since the index last synced (one indexed query), or None
        when the index must be loaded or rebuilt anyway."""
        if index is None or self._outdated(index):
            return None
        cursors = (index.chunk_cursor, index.removal_cursor)
        return _Seen(cursors, self._storage.chunk_changes(index.project_id, *cursors))

    def _sync(self, project_id: str, seen: _Seen | None) -> ProjectIndex:
        """Bring the project's index up to date (the caller holds its gate for writing).
        ``seen`` are changes read under the read gate: used again when no other sync moved
        the index's cursors since, so the new chunks are not read twice."""
        index = self.cache.get(project_id)
        if index is None or self._outdated(index):
            index = self._fresh(project_id, reuse_snapshot=index is None)
            seen = None
        self._catch_up(index, seen)
        self._touch(project_id, index)
        return index

    def _catch_up(self, index: ProjectIndex, seen: _Seen | None) -> None:
        """Apply what the store changed since the index's cursors (``seen``, when it was read
        from them)."""
        cursors = (index.chunk_cursor, index.removal_cursor)
        changes = (
            seen.changes
            if seen is not None and seen.cursors == cursors
            else self._storage.chunk_changes(index.project_id, *cursors)
        )
        if index.stored_vectors is None and self._stores_vectors(index, len(changes.added)):
            index.store_vectors(self._stored_leg(index))
        if changes.added or changes.removed:
            owners = read_owners(self._storage, index.project_id, changes.added)
            index.apply(changes.added, changes.removed, owners)
            index.chunk_cursor = changes.chunk_cursor
            index.removal_cursor = changes.removal_cursor

    def written(self, project_id: str) -> None:
        """The store took new chunks of the project. A small project whose index is not loaded
        here has its snapshot brought up to date in the background, so that its next first
        search reads one file instead of tokenising every chunk: on a host of many small
        projects, most searches are some project's first. A loaded index syncs at its next
        search, and a larger project's snapshot is saved by the searches (``_worth_saving``)."""
        if self._snapshots is not None and project_id not in self.cache:
            self.jobs.add("prepare", project_id, functools.partial(self._prepare, project_id))

    def _prepare(self, project_id: str) -> None:
        assert self._snapshots is not None
        try:
            if self._saved_rows.get(project_id, 0) > PREPARED_ROWS:
                return  # known large without counting
            if self._storage.project_usage(project_id).chunks > PREPARED_ROWS:
                return
            with self._gate(project_id).write():
                if project_id in self.cache:
                    return  # a search loaded it meanwhile
                index = self._fresh(project_id, reuse_snapshot=True)
                if _needs_rebuild(index):
                    index = self._fresh(project_id, reuse_snapshot=False)
                self._catch_up(index, None)
                if self._unsaved(project_id, index):
                    snapshot.save(index, self._snapshots, self._newest(index))
                    self._saved_rows[project_id] = index.n
        except Exception:  # the write stands; the next search builds the index
            log.exception("preparing the index of %s failed", project_id)

    def _stores_vectors(self, index: ProjectIndex, added: int) -> bool:
        """Whether the store should answer the index's vector leg, once ``added`` are in."""
        live = index.n - index.dead + added
        return self._vector_search is not None and live >= self._stored_vectors_from

    def _stored_leg(self, index: ProjectIndex) -> StoredVectors:
        """The store's vector leg for ``index``; its index in the store built in the
        background the first time (searches meanwhile are exact, and slower)."""
        assert self._vector_search is not None
        search, project_id = self._vector_search, index.project_id
        with self._guard:
            first = project_id not in self._building
            self._building.add(project_id)
        if first:
            build = functools.partial(
                self._build_stored, search, project_id, index.model_id, index.dimension
            )
            self.jobs.add("build", project_id, build)
        return StoredVectors(search, index)

    @staticmethod
    def _build_stored(search: VectorSearch, project_id: str, model_id: str, dimension: int) -> None:
        try:
            search.index_vectors(project_id, model_id, dimension)
        except Exception:  # the database gone (a shutdown): the next server builds it
            log.exception("building the stored vector index of %s failed", project_id)

    def _fresh(self, project_id: str, *, reuse_snapshot: bool) -> ProjectIndex:
        """The project's saved index when there is one that matches, else an empty one (the
        sync that follows reads every chunk)."""
        saved = self._saved(project_id) if reuse_snapshot else None
        if saved is not None:
            return saved
        self._saved_rows[project_id] = 0
        return ProjectIndex(
            project_id, self._dimension(project_id), model_id=self._model_id(project_id)
        )

    def _saved(self, project_id: str) -> ProjectIndex | None:
        """The project's snapshot, if one matches the store and the model."""
        if self._snapshots is None:
            return None
        holds = functools.partial(self._holds, project_id)
        dimension, model_id = self._dimension(project_id), self._model_id(project_id)
        stored = self._stored_leg if self._vector_search is not None else None
        loaded = snapshot.load(self._snapshots, project_id, dimension, model_id, holds, stored)
        if loaded is not None:
            self._saved_rows[project_id] = loaded.n
        return loaded

    def restore(self, exists: Callable[[str], bool]) -> list[str]:
        """Load the indexes the last run saved while they fit the memory budget, each then
        synced as a search would, so that a restarted server's first searches need not read
        them (`bench/ready.py`): those large enough to be mapped first, then small ones for
        ``RESTORE_SMALL_SECONDS`` (each is read by its first search in a millisecond or two,
        and ten thousand of them would hold a restart for a minute); the most recently saved
        first. A project that no longer ``exists``, or whose snapshot does not match, is left
        to its first search."""
        if self._snapshots is None:
            return []
        large = snapshot.saved(self._snapshots, snapshot.READ_BELOW)
        mapped = set(large)
        small = [p for p in snapshot.saved(self._snapshots) if p not in mapped]
        restored = [p for p in large if self._restore(p, exists)]
        deadline = time.monotonic() + RESTORE_SMALL_SECONDS
        for project_id in small:
            if time.monotonic() > deadline:
                break
            if self._restore(project_id, exists):
                restored.append(project_id)
        return restored

    def _restore(self, project_id: str, exists: Callable[[str], bool]) -> bool:
        if self.cache.held >= self.cache.budget or not exists(project_id):
            return False
        with self._gate(project_id).write():
            if project_id in self.cache:
                return False  # a search loaded it first
            index = self._saved(project_id)
            if index is None or not self.cache.put(project_id, index):
                return False
            self._sync(project_id, None)  # what the store changed since the snapshot
        return True

    def _holds(self, project_id: str, seq: int, chunk_id: str) -> bool:
        chunk = self._storage.get_chunks(project_id, [seq]).get(seq)
        return chunk is not None and chunk.id == chunk_id

    def _worth_saving(self, index: ProjectIndex) -> bool:
        """Many rows appended since its last snapshot, or read whole from the store (whatever
        its size: a small project's snapshot loads in a fifth of the time its chunks take to
        tokenise again, for its next server or after an eviction)."""
        saved = self._saved_rows.get(index.project_id, 0)
        appended = index.n - saved
        return (
            self._snapshots is not None
            and not self.jobs.pending("save", index.project_id)
            and (
                (appended >= self._snapshot_rows and appended * 5 >= index.n)
                or (saved == 0 and index.n > 0)
            )
        )

    def _save_later(self, project_id: str, evicted: ProjectIndex | None = None) -> None:
        """Save in the background, after the search that found it worth saving returns (or
        the index the budget just dropped, so that it comes back from its snapshot alone)."""
        self.jobs.add("save", project_id, functools.partial(self._save, project_id, evicted))

    def _save(self, project_id: str, evicted: ProjectIndex | None = None) -> None:
        """Save the project's index (or ``evicted``), then read its float32 rows from the file
        saved rather than from memory (a project built by this server holds none after)."""
        gate = self._gate(project_id)
        with gate.read():  # searches go on; syncs wait
            index = evicted or self.cache.get(project_id)
            if index is None or self._snapshots is None:
                return
            snapshot.save(index, self._snapshots, self._newest(index))
            self._saved_rows[project_id] = index.n
        with gate.write():  # a search reads the rows where they are, not midway
            if self.cache.get(project_id) is index:
                snapshot.remap(index, self._snapshots)

    def _newest(self, index: ProjectIndex) -> snapshot.Newest | None:
        live = index.seqs[: index.n][index.live_rows]
        if live.size == 0:
            return None
        seq = int(live.max())
        chunk = self._storage.get_chunks(index.project_id, [seq]).get(seq)
        return (seq, chunk.id) if chunk is not None else None

    def close(self) -> None:
        """Do the work left for the background (its thread stopped first), then save every
        index changed since its last snapshot. The projects still to prepare are done too:
        each is a few milliseconds (small ones only), and a restart's first searches would
        pay more."""
        self.jobs.drain()
        if self._snapshots is not None:
            for project_id, index in self.cache.items():
                if self._unsaved(project_id, index):
                    self._save(project_id)

    def _unsaved(self, project_id: str, index: ProjectIndex) -> bool:
        """Changed since its last snapshot."""
        return index.n != self._saved_rows.get(project_id, 0)

    def _touch(self, project_id: str, index: ProjectIndex) -> None:
        """Mark the project most recently searched; what the budget drops for it is saved
        first when it changed since its snapshot (it is reloaded from the store otherwise)."""
        for victim, dropped in self.cache.touch(project_id, index):
            if self._snapshots is not None and self._unsaved(victim, dropped):
                self._save_later(victim, dropped)

    def _outdated(self, index: ProjectIndex) -> bool:
        """Rebuilt rather than synced: mostly removed rows, or vectors of a model the project
        has left (its vectors were made again by the one it moved to)."""
        return _needs_rebuild(index) or index.model_id != self._model_id(index.project_id)

    def state(self, project_id: str) -> IndexState:
        """How this server holds the project's index now, without loading it: a project
        not searched since start (or evicted) is loaded by its next search."""
        return self.cache.state(project_id)

    def reset(self) -> None:
        """Forget every index and snapshot (vectors changed in place, e.g. after re-embedding)."""
        self.jobs.drain()
        self.cache.clear()
        with self._guard:
            self._saved_rows.clear()
        if self._snapshots is not None:
            shutil.rmtree(self._snapshots, ignore_errors=True)


def _needs_rebuild(index: ProjectIndex) -> bool:
    """More than half of the rows are of removed chunks (and at least 1,000 of them)."""
    return index.dead > max(1000, index.n // 2)
