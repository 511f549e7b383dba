"""Ranking within a filtered subset of a project's index: vector leg, lexical leg, fusion."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from naturali.retrieval import conversation, fusion
from naturali.retrieval.conversation import Conversation
from naturali.retrieval.fusion import CONFIDENT_SHIFT
from naturali.retrieval.index import ProjectIndex
from naturali.retrieval.vectors import LegScan, Nearest, ScanPool
from naturali.text.tokens import names, query_terms

Signals = Literal["hybrid", "vector", "lexical"]
CANDIDATES_PER_LEG = 100


@dataclass(frozen=True)
class Ranking:
    """How results are ranked: both signals fused (the product), or one signal alone (for
    evaluation); ``fusion`` is the product's score blend or reciprocal-rank fusion (the
    baseline it is measured against)."""

    signals: Signals = "hybrid"
    fusion: Literal["blend", "rrf"] = "blend"
    vector_weight: float | None = None  # the blend's; None: the embedder's (the service's)
    confident_shift: float = CONFIDENT_SHIFT  # fusion.query_alpha; 0: a fixed α
    conversation: Conversation | None = Conversation()  # memories' re-scoring; None: off


PRODUCT = Ranking()


@dataclass(frozen=True)
class Asked:
    """What a ranked search asks, read once from its request: the query's text, its terms as
    the lexical leg reads them, the names memories are matched against (``tokens.names``),
    how many results to rank, and the cosine below which vector candidates are dropped."""

    text: str
    terms: list[str]
    names: tuple[str, ...]
    depth: int
    min_similarity: float | None = None

    @classmethod
    def of(cls, text: str, depth: int, min_similarity: float | None = None) -> Asked:
        return cls(text, query_terms(text), tuple(names(text)), depth, min_similarity)


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


@dataclass(frozen=True)
class _Legs:
    """Each leg's candidates, best first, every row's BM25 (empty for the vector alone) and
    the most BM25 the query could reach (``LexicalScores.bound``)."""

    vector: npt.NDArray[np.int64]
    lexical: npt.NDArray[np.int64]
    bm25: npt.NDArray[np.float32]
    bound: float = 0.0


def rank(
    index: ProjectIndex,
    mask: npt.NDArray[np.bool_],
    asked: Asked,
    query_vector: Callable[[npt.NDArray[np.int64]], npt.NDArray[np.float32]],
    *,
    ranking: Ranking = PRODUCT,
    scan_pool: ScanPool | None = None,
    timings: dict[str, float] | None = None,
) -> list[Ranked]:
    """The rows of ``mask`` that best answer ``asked``, ``asked.depth`` of them at most.
    ``query_vector`` is asked for only after the lexical leg has run, so the caller can embed
    the query concurrently with it; it is given the lexical leg's candidates, best first
    (none for the vector leg alone). ``timings``, when given, receives the seconds of each
    stage: lexical, query_embedding (what was left to wait for), vector, fusion."""
    limit, min_similarity = asked.depth, asked.min_similarity
    subset = int(np.count_nonzero(mask))
    if subset == 0:
        return []
    started = time.perf_counter()
    pool = max(CANDIDATES_PER_LEG, limit)
    scan = index.vector_leg.scan(mask, pool) if ranking.signals != "lexical" else None
    bm25, bound, lexical_candidates = np.zeros(0, np.float32), 0.0, np.empty(0, np.int64)
    if ranking.signals != "vector":
        bm25, bound = index.lexical.score(asked.terms, mask, subset)
        hits = np.flatnonzero(bm25 > 0)  # zero outside the mask
        lexical_candidates = _top(hits, bm25[hits], pool)
    lexical = time.perf_counter()
    query = query_vector(lexical_candidates)
    embedded = time.perf_counter()
    nearest = _vector_leg(scan, query, scan_pool, min_similarity)
    vector = time.perf_counter()
    legs = _Legs(nearest.rows, lexical_candidates, bm25, bound)
    candidates, similarity = _candidates(index, ranking, legs, nearest, query)
    fused = _fused(ranking, candidates, similarity, legs, min_similarity)
    if ranking.conversation is not None and ranking.signals == "hybrid":
        fused = conversation.rescored(
            index, mask, candidates, fused, asked.names, ranking.conversation
        )
    order = np.lexsort((index.seqs[candidates], -fused))[:limit]
    if timings is not None:
        _timed(timings, (started, lexical, embedded, vector, time.perf_counter()))
    vector_at, lexical_at = _positions(legs.vector), _positions(legs.lexical)
    return [
        Ranked(
            row,
            float(fused[i]),
            float(similarity[i]),
            vector_at.get(row),
            lexical_at.get(row),
            float(bm25[row]) if bm25.size else None,
        )
        for i in order
        for row in (int(candidates[i]),)
    ]


def _vector_leg(
    scan: LegScan | None,
    query: npt.NDArray[np.float32],
    scan_pool: ScanPool | None,
    min_similarity: float | None,
) -> Nearest:
    """The vector leg's candidates, those under ``min_similarity`` left out."""
    if scan is None:
        return Nearest(np.empty(0, np.int64), np.empty(0, np.float32))
    nearest = scan.nearest(query, scan_pool)
    if min_similarity is None:
        return nearest
    eligible = nearest.cosines >= min_similarity
    return Nearest(nearest.rows[eligible], nearest.cosines[eligible])


def _timed(timings: dict[str, float], ends: tuple[float, ...]) -> None:
    stages = ("lexical", "query_embedding", "vector", "fusion")
    timings.update((s, b - a) for s, a, b in zip(stages, ends, ends[1:], strict=False))


def _candidates(
    index: ProjectIndex,
    ranking: Ranking,
    legs: _Legs,
    nearest: Nearest,
    query: npt.NDArray[np.float32],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """The rows to fuse, sorted, with their float32 cosines."""
    if ranking.signals == "hybrid":
        # The vector leg's cosines are known from its rescoring: only the lexical leg's
        # candidates are scored here.
        lexical = index.vector_leg.cosines(legs.lexical, query)
        return _union((legs.vector, nearest.cosines), (legs.lexical, lexical))
    if ranking.signals == "vector":
        return legs.vector, nearest.cosines
    return legs.lexical, index.vector_leg.cosines(legs.lexical, query)


def _fused(
    ranking: Ranking,
    candidates: npt.NDArray[np.int64],
    similarity: npt.NDArray[np.float32],
    legs: _Legs,
    min_similarity: float | None,
) -> npt.NDArray[np.float32]:
    """Each candidate's score: one leg's own score, or both legs fused."""
    if ranking.signals == "vector":
        return similarity
    if ranking.signals == "lexical":
        return legs.bm25[candidates]
    if ranking.fusion == "rrf":
        return fusion.rrf(_ranks(candidates, legs.vector), _ranks(candidates, legs.lexical))
    vector_ok = None if min_similarity is None else similarity >= min_similarity
    alpha = fusion.ALPHA if ranking.vector_weight is None else ranking.vector_weight
    lexical = legs.bm25[candidates]
    if lexical.size:
        alpha = fusion.query_alpha(alpha, float(lexical.max()), legs.bound, ranking.confident_shift)
    return fusion.blend(similarity, lexical, alpha, vector_ok)


def _union(
    *legs: tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """The legs' rows, sorted and each once (as ``np.union1d``), with their cosines."""
    rows = np.concatenate([leg_rows for leg_rows, _ in legs])
    cosines = np.concatenate([leg_cosines for _, leg_cosines in legs])
    union, first = np.unique(rows, return_index=True)
    return union, cosines[first]


def _positions(ranked: npt.NDArray[np.int64]) -> dict[int, int]:
    """Row → 1-based rank among a leg's candidates."""
    return dict(zip(ranked.tolist(), range(1, ranked.size + 1), strict=True))


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
    positions = dict(zip(ranked.tolist(), range(ranked.size), strict=True))
    return np.array([positions.get(c, -1) for c in candidates.tolist()], np.int64)
