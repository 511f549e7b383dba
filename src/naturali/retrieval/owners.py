"""The owners of an index's rows — documents and memories — by code: each one's key, source and
attributes (path, tags, store).

What a filter can look at is declared once, in ``COLUMNS``: each column names an attribute of
``OwnerAttrs`` and says how it is read from a document and from a memory, and how it is
written as text. The registry's fill, a snapshot's files and its format (a hash of the table,
so a new column rebuilds old snapshots by itself) are made from it.

A million chunks have half a million owners. Read from a snapshot as JSON and made into
objects, they took 2.7 of the 3.1 s a restart spent loading such a project; they are kept
instead as columns of UTF-8 text (``Strings``: one byte array and its offsets, mapped from the
snapshot's files), and an owner's attributes are made when a search first asks for them (a
result's, a filter's candidate's). Owners added or re-read since the snapshot are held as
objects beside the columns.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from naturali.model import Chunk, Document, Memory, SourceType, tag_pairs
from naturali.ports.storage import Storage
from naturali.retrieval.strings import Strings

SOURCE_CODE = {SourceType.DOCUMENT: 0, SourceType.MEMORY: 1}
_SOURCES = {code: source for source, code in SOURCE_CODE.items()}


class OwnerAttrs(NamedTuple):
    """What filters look at: a document's path and tags, or a memory's store and tags — after
    its source and id, one field a column of ``COLUMNS`` (a test holds them equal)."""

    source: SourceType
    owner_id: str  # document id, or memory id
    path: str = ""  # documents
    store_id: str = ""  # memories
    tags: tuple[tuple[str, str], ...] = ()


def owner_key(source_type: SourceType, owner_id: str) -> str:
    return ("d:" if source_type == SourceType.DOCUMENT else "m:") + owner_id


Tags = tuple[tuple[str, str], ...]


def _tags_text(tags: Tags) -> str:
    return json.dumps([list(pair) for pair in tags])


def _tags_read(text: str) -> Tags:
    return tuple((str(k), str(v)) for k, v in json.loads(text))


@dataclass(frozen=True)
class Column:
    """An owner attribute the index keeps: ``name`` is its field of ``OwnerAttrs`` and its
    snapshot file; how a document's and a memory's value is read (the memory with its store's
    id), and written as text and read back."""

    name: str
    of_document: Callable[[Document], Any]
    of_memory: Callable[[str, Memory], Any]
    text: Callable[[Any], str] = str
    read: Callable[[str], Any] = str


COLUMNS: tuple[Column, ...] = (
    Column("path", lambda doc: doc.path, lambda store, memory: ""),
    Column("store_id", lambda doc: "", lambda store, memory: store),
    Column(
        "tags",
        lambda doc: tuple(sorted(doc.tags.items())),
        lambda store, memory: tuple(sorted(tag_pairs(memory.tags))),
        _tags_text,
        _tags_read,
    ),
)
# The files of a snapshot's owners: every owner's key, then its id and each column.
FILES = ("keys", "ids", *(c.name for c in COLUMNS))
# Changes whenever the table does: a snapshot of other columns is not read, and is rebuilt.
LAYOUT = hashlib.sha256(",".join(FILES).encode()).hexdigest()[:8]


def read_owners(storage: Storage, project_id: str, added: list[Chunk]) -> dict[str, OwnerAttrs]:
    """The owners of new chunks, read from the store (a new version may retag them)."""
    documents = sorted({c.owner_id for c in added if c.source_type == SourceType.DOCUMENT})
    memories = sorted(
        {tuple(c.owner_id.split("/", 1)) for c in added if c.source_type == SourceType.MEMORY}
    )
    owners = {
        owner_key(SourceType.DOCUMENT, doc.id): of_document(doc)
        for doc in storage.get_documents(project_id, documents).values()
    }
    keys = [(k[0], k[1]) for k in memories]
    for (store_id, memory_id), memory in storage.get_store_memories(keys).items():
        key = owner_key(SourceType.MEMORY, f"{store_id}/{memory_id}")
        owners[key] = of_memory(store_id, memory_id, memory)
    return owners


def of_document(document: Document) -> OwnerAttrs:
    values = {c.name: c.of_document(document) for c in COLUMNS}
    return OwnerAttrs(SourceType.DOCUMENT, document.id, **values)


def of_memory(store_id: str, memory_id: str, memory: Memory) -> OwnerAttrs:
    values = {c.name: c.of_memory(store_id, memory) for c in COLUMNS}
    return OwnerAttrs(SourceType.MEMORY, memory_id, **values)


class Owners:
    """Owner codes 0… with their keys and attributes: a snapshot's columns, then the owners
    added since. Only the index's writer adds or sets; searches read."""

    def __init__(self, saved: dict[str, Strings] | None = None, known: int = 0) -> None:
        """``saved``: a snapshot's columns; ``known``: how many of its owners had attributes."""
        self._saved = saved or {name: Strings.of([]) for name in FILES}
        self._base = len(self._saved["keys"])
        self._known = known
        self._keys: list[str] = []  # of owners added since the snapshot
        self._attrs: dict[int, OwnerAttrs] = {}  # added or re-read since, and made on demand
        self._code: dict[str, int] | None = None  # key → code, made when first needed
        keys = self._saved["keys"]
        starts = keys.data[keys.offsets[:-1]] if self._base else np.zeros(0, np.uint8)
        # Each owner's source code (1: memory, by its key's "m:"), with room to grow: a cold
        # load adds half a million owners one by one, and growing by one copied them all each time.
        self._sources: npt.NDArray[np.int8] = (starts == ord("m")).astype(np.int8)

    def __len__(self) -> int:
        return self._base + len(self._keys)

    @property
    def sources(self) -> npt.NDArray[np.int8]:
        return self._sources[: len(self)]

    def code_of(self, key: str) -> int | None:
        if self._code is None:  # a snapshot's half a million keys: only when first asked
            keys = self._saved["keys"]
            # Made whole before it is shared: searches ask side by side, and one that saw a
            # half-made map would miss the owners added since the snapshot.
            code = {keys[i]: i for i in range(self._base)}
            code.update((k, self._base + i) for i, k in enumerate(self._keys))
            self._code = code
        return self._code.get(key)

    def add(self, key: str) -> int:
        """The code of ``key``, a new one if it has none."""
        code = self.code_of(key)
        if code is None:
            code = len(self)
            if code == len(self._sources):
                self._sources = np.resize(self._sources, max(2 * code, 1024))
            self._sources[code] = 1 if key.startswith("m:") else 0
            self._keys.append(key)
            assert self._code is not None
            self._code[key] = code
        return code

    def set(self, code: int, attrs: OwnerAttrs) -> None:
        self._attrs[code] = attrs

    def get(self, code: int) -> OwnerAttrs | None:
        """An owner's attributes (None while its chunks are being loaded)."""
        attrs = self._attrs.get(code)
        if attrs is None and code < self._known:
            attrs = self._read(code)
            if attrs is not None:
                self._attrs[code] = attrs  # two searches may: equal ones, one stays
        return attrs

    def _read(self, code: int) -> OwnerAttrs | None:
        s = self._saved
        owner_id = s["ids"][code]
        if not owner_id:
            return None  # an owner gone before its attributes were read (no id is empty)
        values = {c.name: c.read(s[c.name][code]) for c in COLUMNS}
        return OwnerAttrs(_SOURCES[int(self.sources[code])], owner_id, **values)

    def documents(self) -> Iterator[tuple[str, int]]:
        """Every document's path and code."""
        for code in np.flatnonzero(self.sources == 0).tolist():
            attrs = self.get(code)
            if attrs is not None:
                yield attrs.path, code

    def columns(self) -> tuple[dict[str, Strings], int]:
        """Every owner as columns, for a snapshot, and how many of them have attributes (the
        owners after those are being loaded)."""
        count = len(self)
        known = max([self._known, *(c + 1 for c in self._attrs)], default=0)
        none = OwnerAttrs(SourceType.DOCUMENT, "")  # no attributes: read back as None
        rows = [self.get(code) or none for code in range(known)]
        keys = [self._saved["keys"][i] for i in range(self._base)] + self._keys
        columns = {
            "keys": Strings.of(keys[:count]),
            "ids": Strings.of([a.owner_id for a in rows]),
            **{c.name: Strings.of([c.text(getattr(a, c.name)) for a in rows]) for c in COLUMNS},
        }
        return columns, known
