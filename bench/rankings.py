"""The rankings the product's fusion is measured against, as scorings of the candidate pool
(``Ranking(fuse=…)``): one leg alone, and reciprocal rank fusion. They live here, not in
the product, because only the benches rank this way."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from naturali.retrieval.hybrid import Pool, Ranking

RRF_K = 60
Scores = npt.NDArray[np.float32]


def vector_alone(pool: Pool) -> Scores:
    """The cosine: the pool holds the vector leg's best, so its top is the leg's."""
    return pool.cosines


def lexical_alone(pool: Pool) -> Scores:
    """The BM25 score: the pool holds the lexical leg's best, so its top is the leg's."""
    return pool.bm25[pool.rows]


def rrf(pool: Pool) -> Scores:
    """Reciprocal rank fusion of the legs' candidate ranks (absent from a leg: no share)."""
    score = np.zeros(pool.rows.shape, np.float32)
    for leg in (pool.vector, pool.lexical):
        at = dict(zip(leg.tolist(), range(leg.size), strict=True))
        for i, row in enumerate(pool.rows.tolist()):
            if row in at:
                score[i] += 1.0 / (RRF_K + 1 + at[row])
    return score


VECTOR = Ranking(fuse=vector_alone, conversation=None)
LEXICAL = Ranking(fuse=lexical_alone, conversation=None)
RRF = Ranking(fuse=rrf)
