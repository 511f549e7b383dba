"""An in-memory BM25 index over chunk text, kept in step with the store.

A naive FTS5 ``bm25()`` OR query costs ~140 ms over 100,000 chunks; accumulating postings into
a dense score array with numpy costs well under a millisecond per term. Statistics (document
frequency, average length) are taken over the filtered subset, so a subset is ranked within
itself and nothing outside it changes a rank.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import numpy.typing as npt

from naturali.text.tokens import terms

K1 = 1.2
B = 0.75

Mask = npt.NDArray[np.bool_]
Scores = npt.NDArray[np.float32]


class _Postings:
    __slots__ = ("rows", "tfs", "_frozen")

    def __init__(self) -> None:
        self.rows: list[int] = []
        self.tfs: list[int] = []
        self._frozen: tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]] | None = None

    def add(self, row: int, tf: int) -> None:
        self.rows.append(row)
        self.tfs.append(tf)
        self._frozen = None

    def arrays(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        if self._frozen is None:
            self._frozen = (np.array(self.rows, np.int64), np.array(self.tfs, np.float32))
        return self._frozen


class LexicalIndex:
    def __init__(self) -> None:
        self._postings: dict[str, _Postings] = {}
        self._lengths: list[int] = []
        self._length_array: npt.NDArray[np.float32] | None = None
        self._entries = 0  # postings entries, for the memory estimate

    def memory_bytes(self) -> int:
        """An estimate: ~36 bytes per postings entry (two list slots and a row int; term
        frequencies are cached small ints), ~250 per term (its key and lists); within a few
        percent of tracemalloc over 3,000 SciFact abstracts."""
        return self._entries * 36 + len(self._postings) * 250 + len(self._lengths) * 36

    def add(self, row: int, text: str) -> None:
        assert row == len(self._lengths), "rows are appended in order"
        counts = Counter(terms(text))
        self._lengths.append(sum(counts.values()))
        self._length_array = None
        self._entries += len(counts)
        for term, tf in counts.items():
            postings = self._postings.get(term)
            if postings is None:
                postings = self._postings[term] = _Postings()
            postings.add(row, tf)

    def lengths(self) -> npt.NDArray[np.float32]:
        if self._length_array is None:
            self._length_array = np.array(self._lengths, np.float32)
        return self._length_array

    def score(self, query: list[str], mask: Mask, subset_size: int) -> Scores:
        """BM25 of every row (0 where no term matches); rows outside ``mask`` score 0."""
        scores = np.zeros(len(self._lengths), np.float32)
        if subset_size == 0:
            return scores
        lengths = self.lengths()
        avgdl = float(lengths[mask].mean()) or 1.0
        for term in query:
            postings = self._postings.get(term)
            if postings is None:
                continue
            rows, tfs = postings.arrays()
            keep = mask[rows]
            rows, tfs = rows[keep], tfs[keep]
            if rows.size == 0:
                continue
            idf = np.log(1.0 + (subset_size - rows.size + 0.5) / (rows.size + 0.5))
            norm = K1 * (1.0 - B + B * lengths[rows] / avgdl)
            scores[rows] += np.float32(idf) * tfs * (K1 + 1.0) / (tfs + norm)
        return scores
