"""The search indexes of one server: one ``ProjectIndex`` per project, synced with the store
before each search, kept within a memory budget, and saved as snapshots in the cache dir so a
restarted server does not rebuild them from every chunk."""

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
from naturali.retrieval import snapshot
from naturali.retrieval.gate import Gate
from naturali.retrieval.index import ProjectIndex
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
        dimension: Callable[[], int],
        model_id: Callable[[], str],
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
        self._builders: list[threading.Thread] = []
        self._dimension = dimension
        self._model_id = model_id
        self._budget = memory_budget
        # What the budget dropped since start: indexes, and their bytes (GET /metrics).
        self.evictions = 0
        self.evicted_bytes = 0
        self._snapshots = snapshots
        # Saved when this many rows were appended since the last save, and at least a fifth
        # of the index: often enough that a restart reads little, rarely enough to cost little.
        self._snapshot_rows = snapshot_rows
        # Least recently searched first: a dict keeps insertion order, and a search moves
        # its project to the end.
        self._indexes: dict[str, ProjectIndex] = {}
        # Each loaded index's size when it was last searched, and their sum: a search adds up
        # its own, not every loaded one's (a thousand of them cost a search 15 ms).
        self._sizes: dict[str, int] = {}
        self._held = 0
        self._gates: dict[str, Gate] = {}
        self._saved_rows: dict[str, int] = {}  # project → index rows when last saved
        self._saving: dict[str, threading.Thread] = {}
        self._to_prepare: dict[str, None] = {}  # projects written, in order (``written``)
        self._preparer: threading.Thread | None = None
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
            with self._guard:
                index = self._indexes.get(project_id)
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
        if index is None or _needs_rebuild(index):
            return None
        cursors = (index.chunk_cursor, index.removal_cursor)
        return _Seen(cursors, self._storage.chunk_changes(index.project_id, *cursors))

    def _sync(self, project_id: str, seen: _Seen | None) -> ProjectIndex:
        """Bring the project's index up to date (the caller holds its gate for writing).
        ``seen`` are changes read under the read gate: used again when no other sync moved
        the index's cursors since, so the new chunks are not read twice."""
        with self._guard:
            index = self._indexes.get(project_id)
        if index is None or _needs_rebuild(index):
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
        search, and a larger project's snapshot is saved by the searches (``_worth_saving``).
        One thread prepares them in turn, however many projects are written at once."""
        with self._guard:
            if self._snapshots is None or project_id in self._indexes:
                return
            self._to_prepare[project_id] = None
            if self._preparer is None:
                self._preparer = threading.Thread(
                    target=self._prepare_each, name="naturali-prepare", daemon=True
                )
                self._preparer.start()

    def _prepare_each(self) -> None:
        while True:
            with self._guard:
                if not self._to_prepare:
                    self._preparer = None
                    return
                project_id = next(iter(self._to_prepare))
                del self._to_prepare[project_id]
            self._prepare(project_id)

    def _prepare(self, project_id: str) -> None:
        assert self._snapshots is not None
        try:
            if self._saved_rows.get(project_id, 0) > PREPARED_ROWS:
                return  # known large without counting
            if self._storage.project_usage(project_id).chunks > PREPARED_ROWS:
                return
            with self._gate(project_id).write():
                with self._guard:
                    if project_id in self._indexes:
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
            builder = threading.Thread(target=build, name="naturali-vector-index", daemon=True)
            with self._guard:
                self._builders.append(builder)
            builder.start()
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
        return ProjectIndex(project_id, self._dimension(), model_id=self._model_id())

    def _saved(self, project_id: str) -> ProjectIndex | None:
        """The project's snapshot, if one matches the store and the model."""
        if self._snapshots is None:
            return None
        holds = functools.partial(self._holds, project_id)
        dimension, model_id = self._dimension(), self._model_id()
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
        if self._held >= self._budget or not exists(project_id):
            return False
        with self._gate(project_id).write():
            with self._guard:
                if project_id in self._indexes:
                    return False  # a search loaded it first
            index = self._saved(project_id)
            if index is None:
                return False
            with self._guard:
                self._indexes[project_id] = index
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
            and index.project_id not in self._saving
            and (
                (appended >= self._snapshot_rows and appended * 5 >= index.n)
                or (saved == 0 and index.n > 0)
            )
        )

    def _save_later(self, project_id: str, evicted: ProjectIndex | None = None) -> None:
        """Save in the background, after the search that found it worth saving returns (or
        the index the budget just dropped, so that it comes back from its snapshot alone)."""
        thread = threading.Thread(
            target=self._save, args=(project_id, evicted), name="naturali-snapshot", daemon=True
        )
        with self._guard:
            self._saving[project_id] = thread
        thread.start()

    def _save(self, project_id: str, evicted: ProjectIndex | None = None) -> None:
        """Save the project's index (or ``evicted``), then read its float32 rows from the file
        saved rather than from memory (a project built by this server holds none after)."""
        gate = self._gate(project_id)
        try:
            with gate.read():  # searches go on; syncs wait
                with self._guard:
                    index = evicted or self._indexes.get(project_id)
                if index is None or self._snapshots is None:
                    return
                snapshot.save(index, self._snapshots, self._newest(index))
                self._saved_rows[project_id] = index.n
            with gate.write():  # a search reads the rows where they are, not midway
                with self._guard:
                    current = self._indexes.get(project_id)
                if current is index:
                    snapshot.remap(index, self._snapshots)
        finally:
            with self._guard:
                self._saving.pop(project_id, None)

    def _newest(self, index: ProjectIndex) -> snapshot.Newest | None:
        live = index.seqs[: index.n][index.live_rows]
        if live.size == 0:
            return None
        seq = int(live.max())
        chunk = self._storage.get_chunks(index.project_id, [seq]).get(seq)
        return (seq, chunk.id) if chunk is not None else None

    def close(self) -> None:
        """Wait for snapshots being written, then save every index changed since its last."""
        with self._guard:
            # The projects still to prepare are done first: each is a few milliseconds
            # (small ones only), and a restart's first searches would pay more.
            preparer = [self._preparer] if self._preparer is not None else []
            pending = list(self._saving.values()) + self._builders + preparer
            changed = [p for p, i in self._indexes.items() if self._unsaved(p, i)]
        # Joined before the store closes: a thread must never outlive its database.
        for thread in pending:
            thread.join()
        if self._snapshots is not None:
            for project_id in changed:
                self._save(project_id)

    def _unsaved(self, project_id: str, index: ProjectIndex) -> bool:
        """Changed since its last snapshot."""
        return index.n != self._saved_rows.get(project_id, 0)

    def _touch(self, project_id: str, index: ProjectIndex) -> None:
        """Mark the project most recently searched, then drop the least recently searched
        other projects' indexes while all of them exceed the memory budget (a dropped index
        is reloaded from the store on its next search)."""
        with self._guard:
            self._indexes.pop(project_id, None)
            self._indexes[project_id] = index
            size = index.memory_bytes()
            self._held += size - self._sizes.get(project_id, 0)
            self._sizes[project_id] = size
            unsaved: list[tuple[str, ProjectIndex]] = []
            while self._held > self._budget:
                victim = next(iter(self._indexes))  # the least recently searched
                if victim == project_id:
                    break
                dropped = self._indexes.pop(victim)
                evicted = self._sizes.pop(victim)
                self._held -= evicted
                self.evictions += 1
                self.evicted_bytes += evicted
                if self._unsaved(victim, dropped) and victim not in self._saving:
                    unsaved.append((victim, dropped))
        for victim, dropped in unsaved if self._snapshots is not None else []:
            self._save_later(victim, dropped)

    @property
    def budget(self) -> int:
        return self._budget

    def loaded(self) -> dict[str, int]:
        """Projects whose index is in memory, least recently searched first, with its size."""
        with self._guard:
            return {p: i.memory_bytes() for p, i in self._indexes.items()}

    def state(self, project_id: str) -> IndexState:
        """How this server holds the project's index now, without loading it: a project
        not searched since start (or evicted) is loaded by its next search."""
        with self._guard:
            index = self._indexes.get(project_id)
        if index is None:
            return IndexState(loaded=False, budget_bytes=self._budget)
        return IndexState(
            loaded=True,
            budget_bytes=self._budget,
            rows=index.n - index.dead,
            memory_bytes=index.memory_bytes(),
            mapped_bytes=index.mapped_bytes(),
            vector_leg="database" if index.stored_vectors is not None else "memory",
        )

    def reset(self) -> None:
        """Forget every index and snapshot (vectors changed in place, e.g. after re-embedding)."""
        with self._guard:
            pending = list(self._saving.values())
        for thread in pending:
            thread.join()
        with self._guard:
            self._indexes.clear()
            self._sizes.clear()
            self._held = 0
            self._saved_rows.clear()
            if self._snapshots is not None:
                shutil.rmtree(self._snapshots, ignore_errors=True)


def _needs_rebuild(index: ProjectIndex) -> bool:
    """More than half of the rows are of removed chunks (and at least 1,000 of them)."""
    return index.dead > max(1000, index.n // 2)
