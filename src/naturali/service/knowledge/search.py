"""Knowledge search (docs/spec/search-api.md): which stores take part, fetch or rank, results.

Filters are turned into a row mask before either leg runs, so a subset is ranked within
itself and nothing outside the project (or outside the filters) can change a rank. The query
is never stored or logged.
"""

from __future__ import annotations

import functools
import hashlib
import heapq
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from naturali.contracts.resources import (
    DocumentKnowledgeResult,
    Explanation,
    KnowledgeResult,
    MemoryKnowledgeResult,
    TermMatch,
)
from naturali.errors import InvalidRequest
from naturali.model import Chunk, Document, Grant, Memory, MemoryStore, SourceType, User
from naturali.ports.storage import Storage
from naturali.retrieval.hybrid import PRODUCT, Asked, Ranked, Ranking, rank
from naturali.retrieval.index import ProjectIndex, Selection
from naturali.retrieval.indexes.registry import IndexRegistry
from naturali.retrieval.owners import OwnerAttrs
from naturali.retrieval.second_stage import SecondStage
from naturali.retrieval.vector_leg.vectors import ScanPool
from naturali.service.knowledge.query_vectors import QueryVectors, Vector
from naturali.service.memory.memories import Memories
from naturali.service.platform.auth import Auth
from naturali.service.requests import SearchRequest
from naturali.text.languages import language
from naturali.text.tokens import matched_spans

K = TypeVar("K")


@dataclass(frozen=True)
class Participation:
    documents: bool
    memories: bool


def participation(request: SearchRequest) -> Participation:
    """docs/DESIGN.md "Search": a store takes part when its switch is on and there is a query or a
    selector for that store."""
    if not (request.include_documents or request.include_memories):
        raise InvalidRequest(
            "include_documents and include_memories cannot both be false",
            code="no_sources",
            param="include_documents",
        )
    selectors = (
        request.query,
        request.document_paths,
        request.document_ids,
        request.memory_store_ids,
        request.tags,
    )
    if all(s is None for s in selectors):
        raise InvalidRequest(
            "give at least one of query, document_paths, document_ids, memory_store_ids or tags",
            code="missing_selector",
            param="query",
        )
    has_query = request.query is not None
    documents = request.include_documents and (
        has_query
        or any(s is not None for s in (request.document_paths, request.document_ids, request.tags))
    )
    memories = request.include_memories and (
        has_query or request.memory_store_ids is not None or request.tags is not None
    )
    return Participation(documents, memories)


@dataclass
class _Hits:
    """The store's rows a search's results are made of, as read so far: chunks by seq,
    documents by id, memories by (store id, memory id)."""

    chunks: dict[int, Chunk] = field(default_factory=dict)
    documents: dict[str, Document] = field(default_factory=dict)
    memories: dict[tuple[str, str], Memory] = field(default_factory=dict)

    def read(
        self, storage: Storage, project_id: str, rows: list[tuple[int, OwnerAttrs | None]]
    ) -> None:
        """Add the rows (chunk seq, owner) not read yet; an owner of None is skipped (its row
        is being loaded). A row removed meanwhile is simply not found."""
        owned = [(seq, attrs) for seq, attrs in rows if attrs is not None]
        seqs = _new((seq for seq, _ in owned), self.chunks)
        doc_ids = _new(
            (a.owner_id for _, a in owned if a.source == SourceType.DOCUMENT), self.documents
        )
        memory_keys = _new(
            ((a.store_id, a.owner_id) for _, a in owned if a.source == SourceType.MEMORY),
            self.memories,
        )
        if seqs:
            self.chunks.update(storage.get_chunks(project_id, seqs))
        if doc_ids:
            self.documents.update(storage.get_documents(project_id, doc_ids))
        if memory_keys:
            self.memories.update(storage.get_store_memories(memory_keys))


def _new(keys: Iterable[K], known: Mapping[K, object]) -> list[K]:
    """``keys`` not in ``known``, each once, in order."""
    return [key for key in dict.fromkeys(keys) if key not in known]


class Search:
    def __init__(
        self,
        storage: Storage,
        auth: Auth,
        query_vectors: QueryVectors,
        indexes: IndexRegistry,
        memories: Memories,
        vector_weight: Callable[[str], float],  # a project's model's
        reconcile_budget: float,
        query_pool: Executor,
        scan_pool: ScanPool,
        second_stage: SecondStage,
    ) -> None:
        """``query_pool``: where queries are embedded while their searches go on;
        ``scan_pool``: where a large index's vector scan runs (both built in compose.py);
        ``second_stage``: the reranker ``rerank: true`` asks for, and how deep it reads."""
        self.second_stage = second_stage
        self._query_pool = query_pool
        # Queries being embedded, by project and a hash of their text: a search finds the one
        # its route began as the request arrived, or another search of the project's with the
        # same text, not a second run.
        self._embedding: dict[tuple[str, bytes], Future[Vector]] = {}
        self._embedding_lock = threading.RLock()  # a done future calls back at once
        self._scan_pool = scan_pool
        self._vector_weight = vector_weight
        self._reconcile_budget = reconcile_budget
        self._query_vectors = query_vectors
        self._storage = storage
        self._auth = auth
        self._indexes = indexes
        self._memories = memories
        # Called with each ranked search's stage timings (hybrid.rank): the HTTP API points
        # it at its metrics.
        self.observe: Callable[[dict[str, float]], None] | None = None

    def search(
        self,
        user: User,
        project_id: str,
        request: SearchRequest,
        ranking: Ranking = PRODUCT,
    ) -> list[KnowledgeResult]:
        """The passages that answer ``request``, best first (docs/spec/search-api.md). The
        query's embedding is the one the HTTP route began as the request arrived
        (``embed_ahead``), when it did."""
        taking_part = participation(request)
        asked = _asked(request, self.second_stage.depth)  # None: a fetch, no ranking
        # Embedded from here on, beside the reads that follow (membership, stores, the
        # index's sync, the lexical leg): on PostgreSQL each read is a round trip.
        embedding = self.embed_ahead(project_id, asked.text) if asked is not None else None
        # A store the caller was not granted is not there: its memories are never accepted.
        stores = {
            s.id: s
            for s in self._storage.list_memory_stores(project_id)
            if user.grant.sees_store(s.id)
        }
        if taking_part.memories:
            self._reconcile(stores.values(), request.memory_store_ids)
        timings: dict[str, float] = {}
        with self._indexes.synced(project_id) as index:
            mask = index.select(_selection(request, taking_part, stores, user.grant))
            if asked is None or embedding is None:  # (the one means the other)
                rows = _fetch_order(index, mask, stores, request.limit)
                ranked = [Ranked(row, 0.0, float("nan")) for row in rows]
            else:
                if ranking.vector_weight is None:  # the embedder's, unless evaluation set one
                    ranking = replace(ranking, vector_weight=self._vector_weight(project_id))
                pending = embedding  # embedded meanwhile, beside the lexical leg
                ranked = rank(
                    index,
                    mask,
                    asked,
                    lambda _: pending.result(),
                    ranking=ranking,
                    scan_pool=self._scan_pool,
                    timings=timings,
                )
            picked = [(r, int(index.seqs[r.row]), index.owner_of(r.row)) for r in ranked]
        # A fetch explains its results too: their place, with no leg and no terms.
        explain = (asked.terms if asked is not None else []) if request.explain else None
        results = self._results(
            project_id, picked, stores, with_similarity=asked is not None, explain=explain
        )
        return self._finished(request, asked, results, timings)

    def _finished(
        self,
        request: SearchRequest,
        asked: Asked | None,
        results: list[KnowledgeResult],
        timings: dict[str, float],
    ) -> list[KnowledgeResult]:
        """The results through the second stage when it was asked for; the stages timed."""
        if asked is not None and request.rerank:
            started = time.perf_counter()
            results = self.second_stage.reorder(asked.text, results)[: request.limit]
            timings["rerank"] = time.perf_counter() - started
        if timings and self.observe is not None:
            self.observe(timings)
        return results

    def _reconcile(self, stores: Iterable[MemoryStore], wanted: list[str] | None) -> None:
        """Index what other means wrote into the vaults of the stores taking part, within one
        budget for the whole search, however many stores take part."""
        deadline = time.monotonic() + self._reconcile_budget
        for store in stores:
            if wanted is None or store.id in wanted:
                self._memories.catch_up(store, budget=max(0.0, deadline - time.monotonic()))

    def embed_ahead(self, project_id: str, query: str) -> Future[Vector]:
        """The query's vector: at once if a recent search of the project embedded the same
        text, the one being embedded if a search of it (or the HTTP route, as the request
        arrived) began it, else embedded on another thread while the caller goes on — the
        index syncs and the lexical leg runs (onnxruntime releases the GIL). Never another
        project's: how soon it comes would tell whether that project asked the same
        (``QueryVectors``)."""
        known = self._query_vectors.recent(project_id, query)
        if known is not None:
            done: Future[Vector] = Future()
            done.set_result(known)
            return done
        key = (project_id, hashlib.sha256(query.encode()).digest())  # the text is not kept
        with self._embedding_lock:
            embedding = self._embedding.get(key)
            if embedding is None:
                embedding = self._query_pool.submit(
                    functools.partial(self._query_vectors.vector, project_id, query)
                )
                self._embedding[key] = embedding
                embedding.add_done_callback(lambda _: self._embedded(key))
        return embedding

    def _embedded(self, key: tuple[str, bytes]) -> None:
        with self._embedding_lock:
            self._embedding.pop(key, None)

    def _results(
        self,
        project_id: str,
        picked: list[tuple[Ranked, int, OwnerAttrs | None]],
        stores: dict[str, MemoryStore],
        *,
        with_similarity: bool,
        explain: list[str] | None = None,
    ) -> list[KnowledgeResult]:
        """``explain``: the query's terms, when each result should say why it ranked."""
        hits = _Hits()
        hits.read(self._storage, project_id, [(seq, attrs) for _, seq, attrs in picked])
        chunks, documents, memories = hits.chunks, hits.documents, hits.memories
        results: list[KnowledgeResult] = []
        for ranked, seq, attrs in picked:
            chunk = chunks.get(seq)
            if chunk is None or attrs is None:
                continue  # removed between the index read and now
            similarity = min(1.0, max(0.0, ranked.similarity)) if with_similarity else None
            result: KnowledgeResult
            if attrs.source == SourceType.DOCUMENT and attrs.owner_id in documents:
                result = document_result(documents[attrs.owner_id], chunk, ranked.score)
            elif (attrs.store_id, attrs.owner_id) in memories and attrs.store_id in stores:
                # (a store made since the search listed them is not in ``stores``: left out)
                memory = memories[(attrs.store_id, attrs.owner_id)]
                result = memory_result(memory, stores[attrs.store_id], chunk, ranked.score)
            else:
                continue
            if similarity is not None:
                result.similarity_score = similarity
            if explain is not None:
                result.explain = _explanation(ranked, with_similarity, result.content, explain)
            results.append(result)
        return results


def _explanation(
    ranked: Ranked, with_similarity: bool, content: str | None, terms: list[str]
) -> Explanation:
    """Why a result ranked where it did (fetch mode has no legs: every reason is null)."""
    return Explanation(
        vector_rank=ranked.vector_rank,
        cosine=ranked.similarity if with_similarity else None,
        lexical_rank=ranked.lexical_rank,
        bm25=ranked.bm25,
        fed_back_cosine=ranked.fed_back_cosine if with_similarity else None,
        fused=ranked.score,
        matches=[
            TermMatch(start=start, end=end, term=term)
            for start, end, term in matched_spans(content or "", terms)
        ],
        language=language(content) if content else None,
    )


def document_result(document: Document, chunk: Chunk, score: float) -> DocumentKnowledgeResult:
    return DocumentKnowledgeResult(
        source_type="document",
        document_id=document.id,
        chunk_id=chunk.id,
        document_version=document.version,
        page=chunk.page,
        file_id=document.file_id,
        project_id=document.project_id,
        path=document.path,
        filename=document.filename,
        size=document.size,
        title=document.title,
        metadata=document.metadata,
        tags=document.tags,
        content=chunk.text,
        score=score,
        created_at=document.created_at,
        updated_at=document.updated_at,
    )


def memory_result(
    memory: Memory, store: MemoryStore, chunk: Chunk, score: float
) -> MemoryKnowledgeResult:
    return MemoryKnowledgeResult(
        source_type="memory",
        memory_id=memory.id,
        memory_store_id=store.id,
        memory_store_name=store.name,
        content=chunk.text,
        score=score,
        created_at=memory.created_at,
        updated_at=memory.updated_at,
    )


def _asked(request: SearchRequest, rerank_depth: int) -> Asked | None:
    """What a search with a query asks (the second stage reads ``rerank_depth`` of the fused
    ranking); None for a fetch."""
    if request.query is None:
        return None
    depth = max(request.limit, rerank_depth) if request.rerank else request.limit
    return Asked.of(request.query, depth, request.min_similarity)


def _selection(
    request: SearchRequest,
    taking_part: Participation,
    stores: dict[str, MemoryStore],
    grant: Grant,
) -> Selection:
    """What the request's filters and participation let the search return, within the
    caller's grant: its path prefixes and stores narrow the request's ``document_paths`` and
    ``memory_store_ids`` as the caller's own would (before ranking, the paths by the same
    bisection of the sorted paths)."""
    given = dict(request)  # the fields as given, not copied (as model_dump would) each search
    documents, memories = taking_part.documents, taking_part.memories
    if not grant.whole:  # (most searches: nothing to narrow)
        paths, wanted = request.document_paths, request.memory_store_ids
        asked = Grant(
            tuple(paths) if paths is not None else None,
            tuple(wanted) if wanted is not None else None,
        )
        within = grant.narrowed(asked)
        if grant.paths is not None:
            given["document_paths"] = within.paths
            documents = documents and bool(within.paths)
        if grant.stores is not None:
            given["memory_store_ids"] = within.stores
            memories = memories and bool(within.stores)
    return Selection.of(
        given,
        documents=documents,
        memories=memories,
        store_tags={s.id: frozenset(s.tags.items()) for s in stores.values()},
    )


def _fetch_order(
    index: ProjectIndex,
    mask: npt.NDArray[np.bool_],
    stores: dict[str, MemoryStore],
    limit: int,
) -> list[int]:
    """Fetch mode's stable order: documents by path, version, chunk order; then memories by
    store name, memory id, chunk order. Rows are appended in chunk order, so row breaks ties."""

    def key(row: int) -> tuple[Any, ...]:
        attrs = index.owner_of(row)
        if attrs is None:
            return (2, "", "", row)
        if attrs.source == SourceType.DOCUMENT:
            return (0, attrs.path, "", row)
        store = stores.get(attrs.store_id)
        return (1, store.name if store else "", attrs.owner_id, row)

    return heapq.nsmallest(limit, (int(r) for r in np.flatnonzero(mask)), key=key)
