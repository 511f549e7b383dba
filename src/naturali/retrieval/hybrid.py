"""Ranking within a filtered subset of a project's index: vector leg, lexical leg, fusion."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from naturali.model import SourceType
from naturali.retrieval import conversation, fusion
from naturali.retrieval.conversation import Conversation
from naturali.retrieval.fusion import CONFIDENT_SHIFT, FEEDBACK_WEIGHT
from naturali.retrieval.index import ProjectIndex
from naturali.retrieval.owners import SOURCE_CODE
from naturali.retrieval.vector_leg.vectors import LegScan, Nearest, ScanPool
from naturali.text.tokens import names, query_term_counts

CANDIDATES_PER_LEG = 100


@dataclass(frozen=True)
class Pool:
    """The candidates a fusion scores: ``rows`` (sorted) with their ``cosines``, each leg's
    candidates best first, every row's BM25 (zero outside the mask), and which of ``rows`` are
    memories."""

    rows: npt.NDArray[np.int64]
    cosines: npt.NDArray[np.float32]
    vector: npt.NDArray[np.int64]
    lexical: npt.NDArray[np.int64]
    bm25: npt.NDArray[np.float32]
    bound: float  # the most BM25 the query could reach (``LexicalScores.bound``)
    memory: npt.NDArray[np.bool_]


Fuse = Callable[[Pool], npt.NDArray[np.float32]]


@dataclass(frozen=True)
class Ranking:
    """How results are ranked: the product's blend of both legs (its weight, its shift for a
    confident lexical leg), taken again with the query fed back, then memories re-scored by
    their conversation. ``fuse`` replaces the blend and its feedback with another scoring of
    the pool: what the benches measure the product against (bench/rankings.py)."""

    vector_weight: float | None = None  # the blend's; None: the embedder's (the service's)
    confident_shift: float = CONFIDENT_SHIFT  # fusion.query_alpha; 0: a fixed α
    feedback_weight: float = FEEDBACK_WEIGHT  # fusion.fed_back; 0: the first blend stands
    conversation: Conversation | None = Conversation()  # memories' re-scoring; None: off
    fuse: Fuse | None = None


PRODUCT = Ranking()


@dataclass(frozen=True)
class Asked:
    """What a ranked search asks, read once from its request: the query's text, its terms as
    the lexical leg reads them, the names memories are matched against (``tokens.names``),
    how many results to rank, and the cosine below which vector candidates are dropped."""

    text: str
    said: Counter[str]  # each term, with how often the query says it
    names: tuple[str, ...]
    depth: int
    min_similarity: float | None = None

    @classmethod
    def of(cls, text: str, depth: int, min_similarity: float | None = None) -> Asked:
        return cls(text, query_term_counts(text), tuple(names(text)), depth, min_similarity)

    @property
    def terms(self) -> list[str]:
        return list(self.said)


@dataclass(frozen=True)
class Ranked:
    """A ranked row: its fused score and cosine, and why it ranked there — its 1-based rank
    in each leg's candidates (None when that leg did not propose it), its BM25 score, and its
    cosine with the query fed back, which the fusion weighed (None: a memory, or no feedback)."""

    row: int
    score: float
    similarity: float
    vector_rank: int | None = None
    lexical_rank: int | None = None
    bm25: float | None = None
    fed_back_cosine: float | None = None


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
    depth = max(CANDIDATES_PER_LEG, limit)
    scan = index.vector_leg.scan(mask, depth)
    bm25, bound = index.lexical.score(asked.said, mask, subset)
    hits = np.flatnonzero(bm25 > 0)  # zero outside the mask
    lexical_candidates = _top(hits, bm25[hits], depth)
    lexical = time.perf_counter()
    query = query_vector(lexical_candidates)
    embedded = time.perf_counter()
    nearest = _vector_leg(scan, query, scan_pool, min_similarity)
    vector = time.perf_counter()
    # The vector leg's cosines are known from its rescoring: only the lexical leg's
    # candidates are scored here.
    rows, cosines = _union(
        (nearest.rows, nearest.cosines),
        (lexical_candidates, index.vector_leg.cosines(lexical_candidates, query)),
    )
    memory = index.source[rows] == SOURCE_CODE[SourceType.MEMORY]
    pool = Pool(rows, cosines, nearest.rows, lexical_candidates, bm25, bound, memory)
    fused, fed = _fused(index, ranking, pool, query, min_similarity)
    if ranking.conversation is not None:
        fused = conversation.rescored(
            index, mask, rows, memory, fused, asked.names, ranking.conversation
        )
    order = np.lexsort((index.seqs[rows], -fused))[:limit]
    if timings is not None:
        _timed(timings, (started, lexical, embedded, vector, time.perf_counter()))
    vector_at, lexical_at = _positions(pool.vector), _positions(pool.lexical)
    return [
        Ranked(
            row,
            float(fused[i]),
            float(cosines[i]),
            vector_at.get(row),
            lexical_at.get(row),
            float(bm25[row]),
            None if fed is None or np.isnan(fed[i]) else float(fed[i]),
        )
        for i in order
        for row in (int(rows[i]),)
    ]


def _vector_leg(
    scan: LegScan,
    query: npt.NDArray[np.float32],
    scan_pool: ScanPool | None,
    min_similarity: float | None,
) -> Nearest:
    """The vector leg's candidates, those under ``min_similarity`` left out."""
    nearest = scan.nearest(query, scan_pool)
    if min_similarity is None:
        return nearest
    eligible = nearest.cosines >= min_similarity
    return Nearest(nearest.rows[eligible], nearest.cosines[eligible])


def _timed(timings: dict[str, float], ends: tuple[float, ...]) -> None:
    stages = ("lexical", "query_embedding", "vector", "fusion")
    timings.update((s, b - a) for s, a, b in zip(stages, ends, ends[1:], strict=False))


def _fused(
    index: ProjectIndex,
    ranking: Ranking,
    pool: Pool,
    query: npt.NDArray[np.float32],
    min_similarity: float | None,
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32] | None]:
    """The pool's fused scores, and the fed-back cosines they weighed (``_fed_back``)."""
    if ranking.fuse:
        return ranking.fuse(pool), None
    fused = _blend(ranking, pool, min_similarity)
    if not ranking.feedback_weight:
        return fused, None
    return _fed_back(index, ranking, pool, fused, query, min_similarity)


def _blend(
    ranking: Ranking,
    pool: Pool,
    min_similarity: float | None,
    vector_scores: npt.NDArray[np.float32] | None = None,
) -> npt.NDArray[np.float32]:
    """The product's fusion: both legs' scores blended, α lowered for a query whose lexical
    leg is confident; a candidate under ``min_similarity`` counts for its lexical score.
    ``vector_scores``: the vector part's scores when not the pool's cosines (``_fed_back``)."""
    vector_ok = None if min_similarity is None else pool.cosines >= min_similarity
    alpha = fusion.ALPHA if ranking.vector_weight is None else ranking.vector_weight
    lexical = pool.bm25[pool.rows]
    if lexical.size:
        alpha = fusion.query_alpha(alpha, float(lexical.max()), pool.bound, ranking.confident_shift)
    vector = pool.cosines if vector_scores is None else vector_scores
    return fusion.blend(vector, lexical, alpha, vector_ok)


def _fed_back(
    index: ProjectIndex,
    ranking: Ranking,
    pool: Pool,
    fused: npt.NDArray[np.float32],
    query: npt.NDArray[np.float32],
    min_similarity: float | None,
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32] | None]:
    """The blend again, the vector part of its documents their cosines with the query moved
    toward the documents the first blend ranked best (``fusion.fed_back``), and those cosines
    (NaN for a memory). Memories keep theirs: a question about a conversation often spans
    several of its turns, and moving it toward the two best narrowed it (LoCoMo-dev
    multi-hop 0.480 → 0.465)."""
    documents = ~pool.memory
    if not documents.any():
        return fused, None
    rows = pool.rows[documents]
    best = rows[np.argsort(-fused[documents], kind="stable")[: fusion.FEEDBACK_ROWS]]
    moved = fusion.fed_back(query, index.vector_leg.exact(best), ranking.feedback_weight)
    fed = np.full(pool.rows.size, np.nan, np.float32)
    fed[documents] = index.vector_leg.cosines(rows, moved)
    return _blend(ranking, pool, min_similarity, np.where(documents, fed, pool.cosines)), fed


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
