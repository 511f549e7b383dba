"""A project's chunks in memory: vectors for exact cosine search and a BM25 index, kept in
step with the store incrementally (new chunks since a cursor, removals since a cursor).

Nothing is rebuilt that has not changed: a sync costs one indexed query when nothing moved.
Rows of removed chunks are masked, and the index is rebuilt from scratch only when more than
half of its rows are dead.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Self

import numpy as np
import numpy.typing as npt

from naturali.model import Chunk, SourceType
from naturali.retrieval.lexical import LexicalIndex
from naturali.retrieval.owners import SOURCE_CODE, OwnerAttrs, Owners, owner_key
from naturali.retrieval.vector_leg.vectors import Rows, VectorLeg, Vectors
from naturali.text.context import in_context

TagPairs = frozenset[tuple[str, str]]


def _narrows(default: object, *sources: SourceType, read: Callable[[Any], object] = tuple) -> Any:
    """A filter field of Selection, named as the search request's field it reads: the sources
    it narrows, its default (the immutable value that lets all of them through, what
    ``takes_all`` and ``paths_only`` compare with), and how the request's value is ``read``
    into it (a request's None is the default)."""
    return field(default=default, metadata={"narrows": frozenset(sources), "read": read})


def _pairs(tags: dict[str, str]) -> TagPairs:
    return frozenset(tags.items())


@dataclass(frozen=True)
class Selection:
    """The owners a search may return: the one predicate of a search's filters. Documents:
    all, or those of ``document_ids``, under a ``document_paths`` entry, carrying every
    ``tags`` pair. Memories: those of an existing store (``store_tags``: store id → the
    store's own pairs), of ``memory_store_ids`` when given, carrying every ``tags`` pair
    between the store's pairs and the memory's.

    A new filter is a field made with ``_narrows`` (named as the request's field, which
    ``of`` reads by that name) and its clause in ``accepts``: the shortcuts the index takes
    (every owner of a source at once; documents by path alone) are derived from the fields,
    so none can skip it."""

    documents: bool = True
    memories: bool = True
    document_ids: tuple[str, ...] | None = _narrows(None, SourceType.DOCUMENT)
    document_paths: tuple[str, ...] = _narrows((), SourceType.DOCUMENT)
    memory_store_ids: frozenset[str] | None = _narrows(None, SourceType.MEMORY, read=frozenset)
    tags: TagPairs = _narrows(frozenset(), SourceType.DOCUMENT, SourceType.MEMORY, read=_pairs)
    store_tags: dict[str, TagPairs] = field(default_factory=dict)

    @classmethod
    def of(cls, request: Mapping[str, Any], **context: Any) -> Self:
        """The selection of a search request's filter values (by field name; absent or None
        lets everything through), with ``context`` (participation, the stores' pairs)."""
        filters = {
            f.name: f.metadata["read"](request[f.name])
            for f in fields(cls)
            if "narrows" in f.metadata and request.get(f.name) is not None
        }
        return cls(**filters, **context)

    def accepts(self, attrs: OwnerAttrs) -> bool:
        if attrs.source == SourceType.DOCUMENT:
            return (
                self.documents
                and (self.document_ids is None or attrs.owner_id in self.document_ids)
                and (not self.document_paths or attrs.path.startswith(self.document_paths))
                and self.tags <= set(attrs.tags)
            )
        store = self.store_tags.get(attrs.store_id)
        if store is None or (
            self.memory_store_ids is not None and attrs.store_id not in self.memory_store_ids
        ):
            return False
        return self.memories and self.tags <= store | set(attrs.tags)

    def takes_all(self, source: SourceType) -> bool:
        """Whether every owner of ``source`` is accepted (no filter narrows it; a memory is
        still of an existing store, which the index's owners always are)."""
        return not self._narrowing(source)

    def paths_only(self) -> bool:
        """Whether the path prefixes are the documents' whole filter."""
        return self._narrowing(SourceType.DOCUMENT) == {"document_paths"}

    def _narrowing(self, source: SourceType) -> set[str]:
        """The filter fields of ``source`` set away from their let-everything-through value."""
        return {
            f.name
            for f in fields(self)
            if source in f.metadata.get("narrows", ()) and getattr(self, f.name) != f.default
        }


@dataclass
class ProjectIndex:
    project_id: str
    dimension: int
    model_id: str = ""  # vectors of another model are not comparable: left at zero
    chunk_cursor: int = 0
    removal_cursor: int = 0
    n: int = 0
    dead: int = 0
    vectors: Vectors = field(default_factory=lambda: Vectors(0))
    alive: npt.NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, np.bool_))
    source: npt.NDArray[np.int8] = field(default_factory=lambda: np.zeros(0, np.int8))
    owner: npt.NDArray[np.int32] = field(default_factory=lambda: np.zeros(0, np.int32))
    seqs: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    owners: Owners = field(default_factory=Owners)
    lexical: LexicalIndex = field(default_factory=LexicalIndex)
    # The store answers the vector leg and ``vectors`` stays empty
    # (retrieval/vector_leg/stored_vectors.py): set by the registry for a project from
    # ``database_vector_rows`` chunks on.
    stored_vectors: VectorLeg | None = None

    _owners_version: int = 0  # bumped when owners' attributes change (apply)
    # Owners version → documents' paths sorted, with their owner codes (_by_path). A search
    # fills it under the read gate: it replaces one whole entry, never extends one in place.
    _paths: dict[int, tuple[list[str], npt.NDArray[np.int64]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.vectors.dimension != self.dimension:
            self.vectors = Vectors(self.dimension)

    def memory_bytes(self) -> int:
        """What this index holds in memory, estimated: its arrays' rows in use, its BM25
        postings, and ~300 bytes of bookkeeping per owner (its key, code and attributes). A
        snapshot's float32 rows and postings are mapped, not held (``mapped_bytes``)."""
        columns = sum(a.itemsize for a in (self.alive, self.source, self.owner, self.seqs))
        rows = self.vectors.nbytes + columns * self.n
        return rows + self.lexical.memory_bytes() + 300 * len(self.owners)

    def mapped_bytes(self) -> int:
        """What this index reads from its snapshot's files: in the page cache as far as read."""
        return self.vectors.mapped_bytes + self.lexical.mapped_bytes()

    def owner_of(self, row: int) -> OwnerAttrs | None:
        """The document or memory a row's chunk belongs to (None while it is being loaded)."""
        return self.owners.get(int(self.owner[row]))

    def select(self, selection: Selection) -> npt.NDArray[np.bool_]:
        """Live rows whose owner the selection accepts. Filter-free sources take every owner of
        theirs at once; otherwise each candidate owner is checked once, never each row.

        Searches select side by side under the index's read gate, so this only reads."""
        sources = self.owners.sources
        allowed = np.zeros(len(self.owners), np.bool_)
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
        of_source: npt.NDArray[np.bool_] = sources == SOURCE_CODE[source]
        if selection.takes_all(source):
            return of_source
        if selection.document_ids is not None and source == SourceType.DOCUMENT:
            codes = [self.owners.code_of(owner_key(source, d)) for d in selection.document_ids]
            candidates = [c for c in codes if c is not None]
        elif source == SourceType.DOCUMENT and selection.document_paths:
            under = self._under(selection.document_paths)
            if selection.paths_only():
                allowed = np.zeros(len(self.owners), np.bool_)
                allowed[under] = True
                return allowed
            candidates = under.tolist()
        else:
            candidates = [int(c) for c in np.flatnonzero(of_source)]
        allowed = np.zeros(len(self.owners), np.bool_)
        for code in candidates:
            attrs = self.owners.get(code)
            allowed[code] = attrs is not None and selection.accepts(attrs)
        return allowed

    def _under(self, prefixes: tuple[str, ...]) -> npt.NDArray[np.int64]:
        """The codes of documents whose path starts with one of ``prefixes``: each prefix's
        documents are one run of the sorted paths, found by bisection (a filter of 1% of a
        large project reads that 1%, not every owner)."""
        paths, codes = self._by_path()
        runs = []
        for prefix in prefixes:
            low = bisect.bisect_left(paths, prefix)
            high = low
            if prefix and prefix[-1] != "\U0010ffff":
                following = prefix[:-1] + chr(ord(prefix[-1]) + 1)  # the first path after
                high = bisect.bisect_left(paths, following, low)
            else:
                while high < len(paths) and paths[high].startswith(prefix):
                    high += 1
            runs.append(codes[low:high])
        return np.concatenate(runs) if runs else np.empty(0, np.int64)

    def _by_path(self) -> tuple[list[str], npt.NDArray[np.int64]]:
        """Documents' paths, sorted, and their codes; made again after owners change. Made
        by a search under the read gate: two at once make equal ones, and one stays."""
        version = self._owners_version
        cached = self._paths.get(version)
        if cached is None:
            pairs = sorted(self.owners.documents())
            codes = np.array([code for _, code in pairs], np.int64)
            cached = ([path for path, _ in pairs], codes)
            self._paths.clear()  # an older version's, if any
            self._paths[version] = cached
        return cached

    @property
    def vector_leg(self) -> VectorLeg:
        """Where this project's vector leg is answered: the store's, or these ``vectors``."""
        return self.stored_vectors if self.stored_vectors is not None else self.vectors

    def store_vectors(self, leg: VectorLeg) -> None:
        """Let ``leg`` (the store) answer the vector leg from now on, and hold no vectors."""
        self.stored_vectors, self.vectors = leg, Vectors(self.dimension)

    def rows_of(self, seqs: npt.NDArray[np.int64]) -> tuple[Rows, npt.NDArray[np.bool_]]:
        """The rows of chunks by seq, and which were found. The rows' seqs ascend: the store
        hands chunks over in seq order, each after the cursor (``ChunkChanges``), so a seq's
        row is found by bisection, with no map of a million seqs to keep."""
        held = self.seqs[: self.n]
        if held.size == 0:
            return np.zeros(seqs.size, np.int64), np.zeros(seqs.size, np.bool_)
        rows = np.minimum(np.searchsorted(held, seqs), held.size - 1)
        return rows, held[rows] == seqs

    @property
    def live_rows(self) -> npt.NDArray[np.bool_]:
        return self.alive[: self.n]

    def apply(self, added: list[Chunk], removed: list[int], owners: dict[str, OwnerAttrs]) -> None:
        """Append ``added`` chunks and mask ``removed`` ones; ``owners`` are the current
        attributes of the new chunks' owners (by ``owner_key``)."""
        start = self.n
        self._grow(self.n + len(added))
        held = self.stored_vectors is None
        vectors = np.zeros((len(added) if held else 0, self.dimension), np.float32)
        texts = [in_context(chunk.text, chunk.context) for chunk in added]
        # A passage is found by its document's path too: its folders and file name are words a
        # question may use ("the 2018 10-K") that a title made of a file's stem no longer puts
        # in front of it. Never embedded: a file name in front of every passage lowers the
        # vector leg.
        paths = [_path(owners, chunk) for chunk in added]
        whole = start == 0  # read whole from the store: its postings made at once
        for i, chunk in enumerate(added):
            vector = np.frombuffer(chunk.vector, dtype=np.float32)
            if held and vector.size == self.dimension and chunk.model == self.model_id:
                vectors[i] = vector
            self._append(chunk)
            if not whole:
                self.lexical.add(start + i, texts[i], paths[i])
        if whole and texts:
            self.lexical = LexicalIndex.built(texts, paths)
        if held:
            self.vectors.put(start, vectors)
        for key, attrs in owners.items():
            code = self.owners.code_of(key)
            assert code is not None, "every new chunk's owner has a code (_append)"
            self.owners.set(code, attrs)
        if owners:
            self._owners_version += 1
        self._remove(removed)

    def _remove(self, removed: list[int]) -> None:
        """Mask the rows of the chunks ``removed`` (by seq)."""
        rows, found = self.rows_of(np.unique(np.array(removed, np.int64)))
        rows = rows[found]
        rows = rows[self.alive[rows]]
        self.alive[rows] = False
        self.dead += int(rows.size)

    def _grow(self, needed: int) -> None:
        capacity = len(self.alive)
        if needed <= capacity:
            return
        new_capacity = max(needed, capacity * 2, 1024)

        def grown(a: npt.NDArray[np.generic]) -> npt.NDArray[np.generic]:
            out = np.zeros(new_capacity, a.dtype)
            out[: self.n] = a[: self.n]
            return out

        if self.stored_vectors is None:
            self.vectors.grow(new_capacity, self.n)
        self.alive = grown(self.alive)  # type: ignore[assignment]
        self.source = grown(self.source)  # type: ignore[assignment]
        self.owner = grown(self.owner)  # type: ignore[assignment]
        self.seqs = grown(self.seqs)  # type: ignore[assignment]

    def _append(self, chunk: Chunk) -> None:
        row = self.n
        key = owner_key(chunk.source_type, chunk.owner_id)
        code = self.owners.add(key)
        self.alive[row] = True
        self.source[row] = SOURCE_CODE[chunk.source_type]
        self.owner[row] = code
        self.seqs[row] = chunk.seq
        self.n += 1


def _path(owners: Mapping[str, OwnerAttrs], chunk: Chunk) -> str:
    """The path of a chunk's document ("" for a memory's)."""
    attrs = owners.get(owner_key(chunk.source_type, chunk.owner_id))
    return attrs.path if attrs is not None else ""
