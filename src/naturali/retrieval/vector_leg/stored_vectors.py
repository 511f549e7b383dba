"""The vector leg of a project whose vectors the store searches (PostgreSQL's pgvector HNSW),
not this server's memory: selected per project from ``database_vector_rows`` chunks on, so
that a project past one server's memory is still searched (docs/scale.md).

The leg means what the server's own leg means: the top k of the rows a search's filter
leaves, by float32 cosine. The graph knows nothing of the filter, so it is asked for enough
rows that k of them pass it — its share of the project's rows, with room — and a filter that
leaves few rows (or one that left fewer than k of them in the graph's answer) is answered
exactly among its own rows instead: a filter that keeps 1% still finds that 1%'s top k. The
cosines the store returns are of the float32 vectors themselves: only which rows the graph
visits is approximate (recall in bench/scale.py).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from naturali.ports.vector_search import VectorSearch
from naturali.retrieval.vector_leg.vectors import Mask, Matrix, Nearest, Rows, ScanPool, best

if TYPE_CHECKING:
    from naturali.retrieval.index import ProjectIndex

# A filter leaving at most this many rows, or under this share of them, is answered exactly
# among its rows: reading 20k vectors by key costs the store less than a graph search asked
# for 1/share as many rows as it needs.
EXACT_ROWS = 20_000
EXACT_SHARE = 0.05
_ROOM = 1.5  # rows asked of the graph beyond k / share: the filter's share varies by region


class StoredVectors:
    """The vector leg of ``index``'s project answered by ``search`` (the store)."""

    def __init__(self, search: VectorSearch, index: ProjectIndex) -> None:
        self._search, self._index = search, index

    def scan(self, mask: Mask, k: int) -> StoredScan:
        return StoredScan(self, mask, k)

    def cosines(self, rows: Rows, query: Matrix) -> npt.NDArray[np.float32]:
        """Float32 cosines of ``rows``; 0 for a row another model embedded (as in memory)."""
        index = self._index
        seqs = [int(s) for s in index.seqs[rows]]
        found = self._search.vector_cosines(index.project_id, index.model_id, query, seqs)
        return np.array([found.get(s, 0.0) for s in seqs], np.float32)

    def exact(self, rows: Rows) -> Matrix:
        """The float32 vectors of ``rows``; zeros for a row another model embedded."""
        index = self._index
        seqs = [int(s) for s in index.seqs[rows]]
        found = self._search.vectors(index.project_id, index.model_id, seqs)
        out = np.zeros((len(seqs), index.dimension), np.float32)
        for i, seq in enumerate(seqs):
            if seq in found:
                out[i] = found[seq]
        return out

    def nearest(self, query: Matrix, mask: Mask, k: int) -> Nearest:
        """The top ``k`` of ``mask``: from the graph, or exactly among few rows."""
        index, subset = self._index, int(np.count_nonzero(mask))
        if subset == 0:
            return Nearest(np.empty(0, np.int64), np.empty(0, np.float32))
        if subset > EXACT_ROWS and subset >= EXACT_SHARE * mask.size:
            limit = math.ceil(k * mask.size / subset * _ROOM)
            pairs = self._search.nearest_vectors(index.project_id, index.model_id, query, limit)
            rows, cosines = self._rows(pairs, mask)
            if rows.size >= k or len(pairs) < limit:  # k passed, or the graph has no more
                return best(rows, cosines, k)
        within = [int(s) for s in index.seqs[: index.n][mask]]
        pairs = self._search.nearest_vectors(
            index.project_id, index.model_id, query, k, within=within
        )
        return best(*self._rows(pairs, mask), k)

    def _rows(
        self, pairs: list[tuple[int, float]], mask: Mask
    ) -> tuple[Rows, npt.NDArray[np.float32]]:
        """The index's rows of the store's ``(seq, cosine)`` pairs that ``mask`` keeps (a
        chunk added since the index last synced has none)."""
        seqs = np.array([seq for seq, _ in pairs], np.int64)
        cosines = np.array([cosine for _, cosine in pairs], np.float32)
        rows, found = self._index.rows_of(seqs)
        keep = found & mask[rows]
        return rows[keep], cosines[keep]


class StoredScan:
    """One search's top k over a mask, asked of the store once the query vector exists."""

    def __init__(self, leg: StoredVectors, mask: Mask, k: int) -> None:
        self._leg, self._mask, self._k = leg, mask, k

    def nearest(self, query: Matrix, pool: ScanPool | None = None) -> Nearest:
        return self._leg.nearest(query, self._mask, self._k)
