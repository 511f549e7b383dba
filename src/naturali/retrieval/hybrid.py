"""Ranking within a filtered subset of a project's index: vector leg, lexical leg, fusion."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from naturali.retrieval import fusion
from naturali.retrieval.index import ProjectIndex

Signals = Literal["hybrid", "vector", "lexical"]
CANDIDATES_PER_LEG = 100
# Above this share of rows, one full matrix product beats gathering the subset first.
_FULL_SCAN_SHARE = 0.3


@dataclass(frozen=True)
class Ranking:
    """How results are ranked: both signals fused (the product), or one signal alone (for
    evaluation); ``fusion`` is the product's score blend or reciprocal-rank fusion (the
    baseline it is measured against)."""

    signals: Signals = "hybrid"
    fusion: Literal["blend", "rrf"] = "blend"


PRODUCT = Ranking()


@dataclass(frozen=True)
class Ranked:
    """A ranked row: its fused score and cosine, and why it ranked there — its 1-based rank
    in each leg's candidates (None when that leg did not propose it) and its BM25 score."""

    row: int
    score: float
    similarity: float
    vector_rank: int | None = None
    lexical_rank: int | None = None
    bm25: float | None = None


def rank(
    index: ProjectIndex,
    mask: npt.NDArray[np.bool_],
    query_vector: Callable[[], npt.NDArray[np.float32]],
    query_terms: list[str],
    limit: int,
    min_similarity: float | None = None,
    ranking: Ranking = PRODUCT,
) -> list[Ranked]:
    """``query_vector`` is asked for only after the lexical leg has run, so the caller can
    embed the query concurrently with it."""
    rows = np.flatnonzero(mask)
    if rows.size == 0:
        return []
    pool = max(CANDIDATES_PER_LEG, limit)
    lexical = np.zeros(0, np.float32)
    lexical_candidates = np.empty(0, np.int64)
    if ranking.signals != "vector":
        lexical = index.lexical.score(query_terms, mask, int(rows.size))
        hits = np.flatnonzero(lexical > 0)  # zero outside the mask
        lexical_candidates = _top(hits, lexical[hits], pool)
    similarity = _cosine(index, mask, rows, query_vector())
    vector_candidates = np.empty(0, np.int64)
    if ranking.signals != "lexical":
        eligible = rows if min_similarity is None else rows[similarity[rows] >= min_similarity]
        vector_candidates = _top(eligible, similarity[eligible], pool)
    if ranking.signals == "vector":
        fused, candidates = similarity[vector_candidates], vector_candidates
    elif ranking.signals == "lexical":
        fused, candidates = lexical[lexical_candidates], lexical_candidates
    else:
        candidates = np.union1d(vector_candidates, lexical_candidates)
        if ranking.fusion == "rrf":
            fused = fusion.rrf(
                _ranks(candidates, vector_candidates), _ranks(candidates, lexical_candidates)
            )
        else:
            vector_ok = None if min_similarity is None else similarity[candidates] >= min_similarity
            fused = fusion.blend(similarity[candidates], lexical[candidates], vector_ok=vector_ok)
    order = np.lexsort((index.seqs[candidates], -fused))[:limit]
    vector_at = _positions(vector_candidates)
    lexical_at = _positions(lexical_candidates)
    return [
        Ranked(
            row,
            float(fused[i]),
            float(similarity[row]),
            vector_at.get(row),
            lexical_at.get(row),
            float(lexical[row]) if lexical.size else None,
        )
        for i in order
        for row in (int(candidates[i]),)
    ]


def _positions(ranked: npt.NDArray[np.int64]) -> dict[int, int]:
    """Row → 1-based rank among a leg's candidates."""
    return {int(row): i + 1 for i, row in enumerate(ranked)}


def _cosine(
    index: ProjectIndex,
    mask: npt.NDArray[np.bool_],
    rows: npt.NDArray[np.int64],
    query_vector: npt.NDArray[np.float32],
) -> npt.NDArray[np.float32]:
    """Cosine of every row in ``rows`` (vectors are unit length); other entries are -inf."""
    n = mask.size
    if rows.size >= _FULL_SCAN_SHARE * n:
        sims = index.vectors[:n] @ query_vector
        sims[~mask] = -np.inf
        return sims
    sims = np.full(n, -np.inf, np.float32)
    sims[rows] = index.vectors[rows] @ query_vector
    return sims


def _top(
    rows: npt.NDArray[np.int64], scores: npt.NDArray[np.float32], k: int
) -> npt.NDArray[np.int64]:
    if rows.size <= k:
        return rows[np.argsort(-scores, kind="stable")]
    part = np.argpartition(-scores, k - 1)[:k]
    return rows[part[np.argsort(-scores[part], kind="stable")]]


def _ranks(
    candidates: npt.NDArray[np.int64], ranked: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    positions = {int(row): i for i, row in enumerate(ranked)}
    return np.array([positions.get(int(c), -1) for c in candidates], np.int64)
