"""Fusing the vector and lexical legs.

Both legs are scored for every candidate (the union of each leg's top candidates), each
normalised by min–max over that union, and blended ``α·vector + (1−α)·lexical``, α
lowered for a query whose lexical leg is confident (``query_alpha``).
Unlike reciprocal rank fusion, this keeps how far apart candidates are in each leg, which
measured better on SciFact (see docs/benchmarks.md, "Quality: SciFact"). α is the embedding model's
``vector_weight``, chosen on SciFact's train queries, never on its test queries; ALPHA, equal
weights, is for a model not measured.
Reciprocal rank fusion, the baseline it is measured against, lives in ``bench/rankings.py``.

The blend is then taken once more with the query vector moved toward the documents it ranked
first (``fed_back``: Rocchio's pseudo-relevance feedback): what the lexical leg agreed on
reaches the vector leg, and a passage near both the question and its best answers rises.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

ALPHA = 0.5
# How much of the vector's share moves to the lexical leg when its best passage saturates
# every query term (``query_alpha``): chosen on SciFact train and LoCoMo-dev's turns as
# documents, where it held on both (docs/benchmarks.md, "Quality: SciFact").
CONFIDENT_SHIFT = 0.4

# Feedback: the query vector moves toward the mean of the fused ranking's FEEDBACK_ROWS best
# documents by FEEDBACK_WEIGHT of it. Chosen on the four development collections together: it
# brought MED's hybrid to within 0.005 of its vector leg (0.809 → 0.821) and the mean up 0.005
# (docs/quality.md).
FEEDBACK_ROWS = 2
FEEDBACK_WEIGHT = 0.3

# The cross-encoder's share when it reorders the fused ranking's top (``rerank: true``):
# alone it lowered every development collection (its MS MARCO training reads a scientific
# claim or a long question badly); a fifth of the blend raised them all (docs/quality.md).
RERANK_WEIGHT = 0.2
# Over conversation turns it reads better: when the top is all memories, half the blend
# (LoCoMo-dev recall@10 at depth 20: 0.751 → 0.758, four conversations of five up; alone 0.755).
MEMORY_RERANK_WEIGHT = 0.5

Floats = npt.NDArray[np.float32]


def _minmax(values: Floats) -> Floats:
    low, high = float(values.min()), float(values.max())
    if high - low < 1e-9:
        return np.ones_like(values) if high > 0 else np.zeros_like(values)
    return ((values - low) / (high - low)).astype(np.float32)


def blend(
    vector: Floats,
    lexical: Floats,
    alpha: float = ALPHA,
    vector_ok: npt.NDArray[np.bool_] | None = None,
) -> Floats:
    """Fused scores for candidates whose per-leg scores are ``vector`` and ``lexical``.

    ``vector_ok`` marks the candidates whose cosine reached ``min_similarity``: the others
    take part through the lexical leg alone (vector share 0), and the vector range is taken
    over the eligible ones only, so a candidate under the floor cannot move the ranking."""
    if vector.size == 0:
        return vector
    if vector_ok is None:
        vector_part = _minmax(vector)
    else:
        vector_part = np.zeros_like(vector)
        if vector_ok.any():
            vector_part[vector_ok] = _minmax(vector[vector_ok])
    return (alpha * vector_part + (1.0 - alpha) * _minmax(lexical)).astype(np.float32)


def query_alpha(
    alpha: float, best_bm25: float, bound: float, shift: float = CONFIDENT_SHIFT
) -> float:
    """The vector leg's share for one query: ``alpha``, less ``shift`` × the square
    of how close the lexical leg's best passage comes to the most BM25 the query can give.
    A passage that literally holds the query's rare terms is a strong signal the vector leg
    may miss (an identifier, a release name); squared, the shift stays small until it is."""
    if bound <= 0.0:
        return alpha
    confidence = min(1.0, best_bm25 / bound)
    return max(0.0, alpha - shift * confidence * confidence)


def fed_back(query: Floats, best: Floats, weight: float = FEEDBACK_WEIGHT) -> Floats:
    """``query`` moved toward the mean of ``best`` (unit rows) by ``weight``, unit length."""
    moved = query + weight * best.mean(axis=0)
    norm = float(np.linalg.norm(moved))
    return (moved / norm if norm > 0 else query).astype(np.float32)


def second_stage(fused: Floats, rerank: Floats, weight: float = RERANK_WEIGHT) -> Floats:
    """The order the second stage gives the fused ranking's top: its fused scores and the
    cross-encoder's, each min–max normalised over that top, blended."""
    if fused.size == 0:
        return fused
    return ((1.0 - weight) * _minmax(fused) + weight * _minmax(rerank)).astype(np.float32)
