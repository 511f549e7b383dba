"""An in-memory BM25 index over chunk text, kept in step with the store.

A naive FTS5 ``bm25()`` OR query costs ~140 ms over 100,000 chunks; accumulating postings into
a dense score array with numpy costs well under a millisecond per term. Statistics (document
frequency, average length) are taken over the filtered subset, so a subset is ranked within
itself and nothing outside it changes a rank.

A chunk is indexed in its context (its document's title and the headings it sits under,
``text/context.py``), so the second half of a long document still matches on what the
document is about, as the vector leg's reading of it does.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from naturali.retrieval.strings import Strings
from naturali.text.tokens import indexed

# Chosen on the four development collections and LoCoMo-dev together (docs/quality.md): Lucene's
# defaults, with a row's length counted without stopwords (``tokens.indexed``), put the leg at
# or above BM25 off the shelf on each collection; 1.2 / 0.6 kept SciFact's hybrid 0.005 higher
# but left the leg under it on long questions (CISI). K3 saturates a term the query repeats, as
# BM25's query-term weight: said twice it weighs 1.8 times, five times 3.1.
K1 = 1.5
B = 0.75
K3 = 8.0

Mask = npt.NDArray[np.bool_]
Scores = npt.NDArray[np.float32]
Rows = npt.NDArray[np.integer]  # int32 in a snapshot's arrays, int64 appended
Tfs = npt.NDArray[np.number]  # uint16 in a snapshot's arrays, float32 appended


class _Postings:
    """One term's rows and term frequencies: those of a snapshot (views of its mapped arrays,
    never copied) and the rows appended since."""

    __slots__ = ("base", "rows", "tfs", "_tail")

    def __init__(self, base: tuple[Rows, Tfs] | None = None) -> None:
        self.base = base
        self.rows: list[int] = []
        self.tfs: list[int] = []
        self._tail: tuple[Rows, Tfs] | None = None

    def add(self, row: int, tf: int) -> None:
        self.rows.append(row)
        self.tfs.append(tf)
        self._tail = None

    def pieces(self) -> list[tuple[Rows, Tfs]]:
        """The rows and frequencies as arrays: the snapshot's, then the appended ones."""
        if self._tail is None and self.rows:
            self._tail = (np.array(self.rows, np.int64), np.array(self.tfs, np.float32))
        return [p for p in (self.base, self._tail) if p is not None]


class LexicalScores(NamedTuple):
    scores: Scores
    bound: float  # Σ idf·(k1 + 1) over the query's terms found in the subset


@dataclass(frozen=True)
class LexicalArrays:
    """The whole index as flat arrays (compressed sparse rows by term), for a snapshot; the
    vocabulary sorted, so a term is found by binary search without a dict of every term."""

    vocabulary: Strings
    offsets: npt.NDArray[np.int64]  # term i's postings are [offsets[i], offsets[i + 1])
    rows: npt.NDArray[np.int32]
    tfs: npt.NDArray[np.uint16]
    lengths: npt.NDArray[np.float32]


class LexicalIndex:
    def __init__(self) -> None:
        self._postings: dict[str, _Postings] = {}
        # A snapshot's (or a ``built`` index's) vocabulary, postings and lengths (``_base``)
        # stay in their flat arrays until a term is first looked up (``_postings_of``): a
        # restart at 108k chunks would otherwise make 26.6k objects, and ten thousand small
        # projects a dict of a few thousand terms each.
        self._base_terms: dict[str, int] = {}  # looked-up term → its place in the base's
        self._base = LexicalArrays(
            Strings.of([]),
            np.zeros(1, np.int64),
            np.zeros(0, np.int32),
            np.zeros(0, np.uint16),
            np.zeros(0, np.float32),
        )
        self._lengths: list[int] = []
        self._length_array: npt.NDArray[np.float32] | None = None
        self._entries = 0  # appended postings entries, for the memory estimate

    def memory_bytes(self) -> int:
        """What the process holds, estimated: ~36 bytes per appended postings entry (two list
        slots and a row int; term frequencies are cached small ints) and 12 more for their
        arrays, ~250 per term held as an object (looked up or added: its key and lists), 4
        per row for the lengths and 36 more per appended row; within a few percent of
        tracemalloc over 3,000 SciFact abstracts. A snapshot's vocabulary and postings are read
        where they lie (``mapped_bytes``); those ``built`` or read are held."""
        appended = len(self._lengths)
        terms = len(self._postings)
        held = 0 if self._base_mapped() else self._base_bytes()
        return self._entries * 48 + terms * 250 + appended * 40 + held

    def mapped_bytes(self) -> int:
        """A snapshot's postings and lengths, mapped: in the page cache as far as read."""
        return self._base_bytes() if self._base_mapped() else 0

    def _base_bytes(self) -> int:
        base, words = self._base, self._base.vocabulary
        arrays = (base.offsets, base.rows, base.tfs, base.lengths, words.data, words.offsets)
        return sum(a.nbytes for a in arrays)

    def _base_mapped(self) -> bool:
        return isinstance(self._base.rows, np.memmap)

    def add(self, row: int, text: str, about: str = "") -> None:
        """Index ``text`` at ``row``, with the words ``about`` it (``tokens.indexed``)."""
        assert row == len(self._base.lengths) + len(self._lengths), "rows are appended in order"
        words, length = indexed(text, about)
        counts = Counter(words)
        self._lengths.append(length)
        self._length_array = None
        self._entries += len(counts)
        for term, tf in counts.items():
            postings = self._postings_of(term)
            if postings is None:
                postings = self._postings[term] = _Postings()
            postings.add(row, tf)

    def lengths(self) -> npt.NDArray[np.float32]:
        if self._length_array is None:
            tail = np.array(self._lengths, np.float32)
            self._length_array = np.concatenate([self._base.lengths, tail])
        return self._length_array

    def score(self, query: Mapping[str, int], mask: Mask, subset_size: int) -> LexicalScores:
        """BM25 of every row for the query's terms and how often it says each (0 where no
        term matches; rows outside ``mask`` score 0), and the score no row can reach over the
        subset: every matched term saturated."""
        lengths = self.lengths()
        scores = np.zeros(lengths.size, np.float32)
        bound = 0.0
        if subset_size == 0:
            return LexicalScores(scores, bound)
        avgdl = float(lengths[mask].mean()) or 1.0
        for term, said in query.items():
            postings = self._postings_of(term)
            if postings is None:
                continue
            kept = [
                (r[keep], t[keep].astype(np.float32))
                for r, t in postings.pieces()
                for keep in (mask[r],)
            ]
            found = sum(rows.size for rows, _ in kept)
            if found == 0:
                continue
            weight = (K3 + 1.0) * said / (K3 + said)
            idf = weight * np.log(1.0 + (subset_size - found + 0.5) / (found + 0.5))
            for rows, tfs in kept:
                norm = K1 * (1.0 - B + B * lengths[rows] / avgdl)
                scores[rows] += np.float32(idf) * tfs * (K1 + 1.0) / (tfs + norm)
            bound += float(idf) * (K1 + 1.0)
        return LexicalScores(scores, bound)

    def containing(self, term: str, rows: Rows) -> npt.NDArray[np.bool_]:
        """Which of ``rows`` hold ``term``."""
        postings = self._postings_of(term)
        found = np.zeros(rows.size, np.bool_)
        for held, _ in postings.pieces() if postings is not None else []:
            found |= np.isin(rows, held)
        return found

    def _postings_of(self, term: str) -> _Postings | None:
        """The term's postings, made from the snapshot's arrays the first time it is asked for
        (a race makes two equal ones, and the last stays)."""
        postings = self._postings.get(term)
        if postings is None and (i := self._base.vocabulary.find(term)) is not None:
            self._base_terms[term] = i
            postings = self._postings[term] = _Postings(self._saved(i))
        return postings

    def to_arrays(self) -> LexicalArrays:
        """The index as a snapshot holds it: the base's terms and the terms added since, in one
        sorted vocabulary (the base's, as it is, when none were added)."""
        if not self._lengths:
            return self._base  # nothing appended since it was built or loaded
        base = self._base.vocabulary
        # Copied at once: searches (under the same read gate as a save) may look up a base
        # term meanwhile. Every held term of the base was recorded in _base_terms when looked
        # up (``_postings_of``), so the others are new.
        looked = {i: t for t, i in list(self._base_terms.items())}
        new = sorted(t for t in list(self._postings) if t not in self._base_terms)
        words = [base[i] for i in range(len(base))] if new else []
        vocabulary: list[str] = []
        frozen: list[tuple[npt.NDArray[np.integer], npt.NDArray[np.number]]] = []
        i = j = 0
        while i < len(base) or j < len(new):
            if j < len(new) and (i == len(base) or new[j] < words[i]):
                vocabulary.append(new[j])
                frozen.append(self._held_arrays(new[j]))
                j += 1
                continue
            term = looked.get(i)
            frozen.append(self._held_arrays(term) if term is not None else self._saved(i))
            if new:
                vocabulary.append(words[i])
            i += 1
        sizes = np.array([r.size for r, _ in frozen], np.int64)
        offsets = np.zeros(len(frozen) + 1, np.int64)
        np.cumsum(sizes, out=offsets[1:])
        rows = [r for r, _ in frozen] or [np.zeros(0, np.int64)]
        tfs = [t for _, t in frozen] or [np.zeros(0, np.float32)]
        return LexicalArrays(
            Strings.of(vocabulary) if new else base,
            offsets,
            np.concatenate(rows).astype(np.int32),
            np.concatenate(tfs).astype(np.uint16),
            self.lengths().copy(),
        )

    def _held_arrays(self, term: str) -> tuple[npt.NDArray[np.integer], npt.NDArray[np.number]]:
        """A held term's rows and frequencies for a snapshot, in whichever types they are."""
        pieces = self._postings[term].pieces()
        if len(pieces) == 1:
            return pieces[0]
        (rows, tfs), (more_rows, more_tfs) = pieces
        return np.concatenate([rows, more_rows]), np.concatenate([tfs, more_tfs])

    def _saved(self, i: int) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.uint16]]:
        """The snapshot's postings of its ``i``-th term, as saved (views of its arrays)."""
        start, end = int(self._base.offsets[i]), int(self._base.offsets[i + 1])
        return self._base.rows[start:end], self._base.tfs[start:end]

    @classmethod
    def built(cls, texts: list[str], about: list[str] | None = None) -> LexicalIndex:
        """An index of ``texts`` (rows 0, 1, …, each with the words ``about`` it) made at once
        as flat arrays, as a snapshot holds them: a project read whole from the store costs a
        third of appending it row by row, and 8 bytes a postings entry instead of ~48."""
        vocabulary: defaultdict[str, int] = defaultdict(itertools.count().__next__)
        term_ids: list[int] = []
        rows: list[int] = []
        tfs: list[int] = []
        lengths = np.zeros(len(texts), np.float32)
        for row, text in enumerate(texts):  # each loop over a passage's terms runs in C
            words, lengths[row] = indexed(text, about[row] if about else "")
            counts = Counter(words)
            term_ids += map(vocabulary.__getitem__, counts)  # a new term: the next id
            rows += itertools.repeat(row, len(counts))
            tfs += counts.values()
        words = sorted(vocabulary)
        place = np.zeros(len(words), np.int64)  # a term's first id → its sorted place
        place[[vocabulary[w] for w in words]] = np.arange(len(words))
        ids = place[np.array(term_ids, np.int64)]
        order = np.argsort(ids, kind="stable")  # by term, each term's rows ascending
        offsets = np.zeros(len(words) + 1, np.int64)
        np.cumsum(np.bincount(ids, minlength=len(words)), out=offsets[1:])
        return cls.from_arrays(
            LexicalArrays(
                Strings.of(words),
                offsets,
                np.array(rows, np.int32)[order],
                np.minimum(np.array(tfs, np.int64), np.iinfo(np.uint16).max).astype(np.uint16)[
                    order
                ],
                lengths,
            )
        )

    @classmethod
    def from_arrays(cls, arrays: LexicalArrays) -> LexicalIndex:
        index = cls()
        index._base = arrays
        return index
