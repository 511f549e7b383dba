"""A project's chunks in memory: vectors for exact cosine search and a BM25 index, kept in
step with the store incrementally (new chunks since a cursor, removals since a cursor).

Nothing is rebuilt that has not changed: a sync costs one indexed query when nothing moved.
Rows of removed chunks are masked, and the index is rebuilt from scratch only when more than
half of its rows are dead.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from naturali.model import Chunk, SourceType, tag_pairs
from naturali.ports.storage import Storage
from naturali.retrieval.lexical import LexicalIndex

TagPairs = frozenset[tuple[str, str]]
_CODE = {SourceType.DOCUMENT: 0, SourceType.MEMORY: 1}  # the int8 per-row source column


@dataclass(frozen=True)
class OwnerAttrs:
    """What filters look at: a document's path and tags, or a memory's store and tags."""

    source: SourceType
    owner_id: str  # document id, or memory id
    path: str = ""  # documents
    store_id: str = ""  # memories
    tags: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Selection:
    """The owners a search may return. Documents: all, or those of ``document_ids``, under a
    ``path_prefixes`` entry, carrying every ``tags`` pair. Memories: those of an existing
    store (``store_tags``: store id → the store's own pairs), of ``store_ids`` when given,
    carrying every ``tags`` pair between the store's pairs and the memory's."""

    documents: bool = True
    memories: bool = True
    document_ids: tuple[str, ...] | None = None
    path_prefixes: tuple[str, ...] = ()
    store_ids: frozenset[str] | None = None
    store_tags: dict[str, TagPairs] = field(default_factory=dict)
    tags: TagPairs = frozenset()

    def accepts(self, attrs: OwnerAttrs) -> bool:
        if attrs.source == SourceType.DOCUMENT:
            return (
                self.documents
                and (self.document_ids is None or attrs.owner_id in self.document_ids)
                and (not self.path_prefixes or attrs.path.startswith(self.path_prefixes))
                and self.tags <= set(attrs.tags)
            )
        store = self.store_tags.get(attrs.store_id)
        if store is None or (self.store_ids is not None and attrs.store_id not in self.store_ids):
            return False
        return self.memories and self.tags <= store | set(attrs.tags)


@dataclass
class ProjectIndex:
    project_id: str
    dimension: int
    model_id: str = ""  # vectors of another model are not comparable: left at zero
    chunk_cursor: int = 0
    removal_cursor: int = 0
    n: int = 0
    dead: int = 0
    vectors: npt.NDArray[np.float32] = field(default_factory=lambda: np.zeros((0, 0), np.float32))
    alive: npt.NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, np.bool_))
    source: npt.NDArray[np.int8] = field(default_factory=lambda: np.zeros(0, np.int8))
    owner: npt.NDArray[np.int32] = field(default_factory=lambda: np.zeros(0, np.int32))
    seqs: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    row_of_seq: dict[int, int] = field(default_factory=dict)
    owner_keys: list[str] = field(default_factory=list)
    owner_code: dict[str, int] = field(default_factory=dict)
    lexical: LexicalIndex = field(default_factory=LexicalIndex)
    owner_attrs: dict[int, OwnerAttrs] = field(default_factory=dict)

    _owner_sources: npt.NDArray[np.int8] = field(default_factory=lambda: np.zeros(0, np.int8))

    def memory_bytes(self) -> int:
        """What this index holds in memory, estimated: its arrays, its BM25 postings, and
        ~200 bytes of bookkeeping per row and per owner."""
        arrays = sum(
            a.nbytes for a in (self.vectors, self.alive, self.source, self.owner, self.seqs)
        )
        return arrays + self.lexical.memory_bytes() + 200 * (self.n + len(self.owner_keys))

    def owner_of(self, row: int) -> OwnerAttrs | None:
        """The document or memory a row's chunk belongs to (None while it is being loaded)."""
        return self.owner_attrs.get(int(self.owner[row]))

    def select(self, selection: Selection) -> npt.NDArray[np.bool_]:
        """Live rows whose owner the selection accepts. Filter-free sources take every owner of
        theirs at once; otherwise each candidate owner is checked once, never each row."""
        sources = self._sources()
        allowed = np.zeros(len(self.owner_keys), np.bool_)
        for source, wanted in (
            (SourceType.DOCUMENT, selection.documents),
            (SourceType.MEMORY, selection.memories),
        ):
            if wanted:
                allowed |= self._allowed(selection, source, sources)
        if allowed.size == 0:
            return np.zeros(self.n, np.bool_)
        selected: npt.NDArray[np.bool_] = allowed[self.owner[: self.n]] & self.live_rows
        return selected

    def _allowed(
        self, selection: Selection, source: SourceType, sources: npt.NDArray[np.int8]
    ) -> npt.NDArray[np.bool_]:
        of_source: npt.NDArray[np.bool_] = sources == _CODE[source]
        if source == SourceType.DOCUMENT:
            unfiltered = selection.document_ids is None and not selection.path_prefixes
        else:
            unfiltered = selection.store_ids is None
        if unfiltered and not selection.tags:
            return of_source
        if selection.document_ids is not None and source == SourceType.DOCUMENT:
            codes = [self.owner_code.get(owner_key(source, d)) for d in selection.document_ids]
            candidates = [c for c in codes if c is not None]
        else:
            candidates = [int(c) for c in np.flatnonzero(of_source)]
        allowed = np.zeros(len(self.owner_keys), np.bool_)
        for code in candidates:
            attrs = self.owner_attrs.get(code)
            allowed[code] = attrs is not None and selection.accepts(attrs)
        return allowed

    def _sources(self) -> npt.NDArray[np.int8]:
        """Source code of each owner, extended only when owners were added."""
        known = len(self._owner_sources)
        if known < len(self.owner_keys):
            extra = [0 if k.startswith("d:") else 1 for k in self.owner_keys[known:]]
            self._owner_sources = np.concatenate([self._owner_sources, np.array(extra, np.int8)])
        return self._owner_sources

    @property
    def live_rows(self) -> npt.NDArray[np.bool_]:
        return self.alive[: self.n]

    def apply(self, added: list[Chunk], removed: list[int]) -> None:
        self._grow(self.n + len(added))
        for chunk in added:
            self._append(chunk)
        for seq in removed:
            row = self.row_of_seq.pop(seq, None)
            if row is not None and self.alive[row]:
                self.alive[row] = False
                self.dead += 1

    def _grow(self, needed: int) -> None:
        capacity = len(self.alive)
        if needed <= capacity:
            return
        new_capacity = max(needed, capacity * 2, 1024)

        def grown(a: npt.NDArray[np.generic], shape: tuple[int, ...]) -> npt.NDArray[np.generic]:
            out = np.zeros(shape, a.dtype)
            if self.n:
                out[: self.n] = a[: self.n]
            return out

        self.vectors = grown(self.vectors, (new_capacity, self.dimension))  # type: ignore[assignment]
        self.alive = grown(self.alive, (new_capacity,))  # type: ignore[assignment]
        self.source = grown(self.source, (new_capacity,))  # type: ignore[assignment]
        self.owner = grown(self.owner, (new_capacity,))  # type: ignore[assignment]
        self.seqs = grown(self.seqs, (new_capacity,))  # type: ignore[assignment]

    def _append(self, chunk: Chunk) -> None:
        row = self.n
        vector = np.frombuffer(chunk.vector, dtype=np.float32)
        if vector.size == self.dimension and chunk.model == self.model_id:
            self.vectors[row] = vector
        key = owner_key(chunk.source_type, chunk.owner_id)
        code = self.owner_code.get(key)
        if code is None:
            code = self.owner_code[key] = len(self.owner_keys)
            self.owner_keys.append(key)
        self.alive[row] = True
        self.source[row] = _CODE[chunk.source_type]
        self.owner[row] = code
        self.seqs[row] = chunk.seq
        self.row_of_seq[chunk.seq] = row
        self.lexical.add(row, chunk.text)
        self.n += 1


def owner_key(source_type: SourceType, owner_id: str) -> str:
    return ("d:" if source_type == SourceType.DOCUMENT else "m:") + owner_id


class IndexRegistry:
    """One ``ProjectIndex`` per project, synced before each search under a per-project lock."""

    def __init__(
        self,
        storage: Storage,
        dimension: Callable[[], int],
        model_id: Callable[[], str],
        memory_budget: int = 2 << 30,
    ) -> None:
        self._storage = storage
        self._dimension = dimension
        self._model_id = model_id
        self._budget = memory_budget
        # Least recently searched first: a dict keeps insertion order, and a search moves
        # its project to the end.
        self._indexes: dict[str, ProjectIndex] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    @contextmanager
    def synced(self, project_id: str) -> Iterator[ProjectIndex]:
        """The project's index, brought up to date, held for the caller's read.

        Reads of one project are serialised with its syncs: numpy does the heavy work, and this
        keeps the arrays and postings consistent without copying them per query.
        """
        with self._guard:
            lock = self._locks.setdefault(project_id, threading.Lock())
        with lock:
            with self._guard:
                index = self._indexes.get(project_id)
            if index is None or index.dead > max(1000, index.n // 2):
                index = ProjectIndex(project_id, self._dimension(), model_id=self._model_id())
            changes = self._storage.chunk_changes(
                project_id, index.chunk_cursor, index.removal_cursor
            )
            if changes.added or changes.removed:
                index.apply(changes.added, changes.removed)
                self._load_owner_attrs(index, changes.added)
                index.chunk_cursor = changes.chunk_cursor
                index.removal_cursor = changes.removal_cursor
            self._touch(project_id, index)
            yield index

    def _touch(self, project_id: str, index: ProjectIndex) -> None:
        """Mark the project most recently searched, then drop the least recently searched
        other projects' indexes while all of them exceed the memory budget (a dropped index
        is reloaded from the store on its next search)."""
        with self._guard:
            self._indexes.pop(project_id, None)
            self._indexes[project_id] = index
            sizes = {p: i.memory_bytes() for p, i in self._indexes.items()}
            total = sum(sizes.values())
            for victim in list(self._indexes):
                if total <= self._budget or victim == project_id:
                    break
                total -= sizes[victim]
                del self._indexes[victim]

    def loaded(self) -> dict[str, int]:
        """Projects whose index is in memory, least recently searched first, with its size."""
        with self._guard:
            return {p: i.memory_bytes() for p, i in self._indexes.items()}

    def _load_owner_attrs(self, index: ProjectIndex, added: list[Chunk]) -> None:
        """Owners of new chunks: re-read their attributes (a new version may retag them)."""
        doc_ids = sorted({c.owner_id for c in added if c.source_type == SourceType.DOCUMENT})
        memory_keys = sorted(
            {tuple(c.owner_id.split("/", 1)) for c in added if c.source_type == SourceType.MEMORY}
        )
        for doc in self._storage.get_documents(index.project_id, doc_ids).values():
            code = index.owner_code[owner_key(SourceType.DOCUMENT, doc.id)]
            index.owner_attrs[code] = OwnerAttrs(
                SourceType.DOCUMENT, doc.id, path=doc.path, tags=tuple(sorted(doc.tags.items()))
            )
        keys = [(k[0], k[1]) for k in memory_keys]
        for (store_id, memory_id), memory in self._storage.get_store_memories(keys).items():
            code = index.owner_code[owner_key(SourceType.MEMORY, f"{store_id}/{memory_id}")]
            index.owner_attrs[code] = OwnerAttrs(
                SourceType.MEMORY,
                memory_id,
                store_id=store_id,
                tags=tuple(sorted(tag_pairs(memory.tags))),
            )

    def reset(self) -> None:
        """Forget every index (vectors changed in place, e.g. after re-embedding)."""
        with self._guard:
            self._indexes.clear()
