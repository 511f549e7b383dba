"""The second stage (``rerank: true``): a cross-encoder (the ``Reranker`` port) reads the query
with each of the fused ranking's top results, and its score is blended with the fused one
(``fusion.second_stage``) to order them — the last step of ranking, beside the rest of it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from naturali.contracts.resources import KnowledgeResult
from naturali.ports.reranker import Reranker
from naturali.retrieval import fusion


@dataclass
class SecondStage:
    """``rerank: true``: the cross-encoder (loaded on first use) and how many of the fused
    ranking's top candidates it rescores."""

    reranker: Callable[[], Reranker]
    depth: int

    def reorder(self, query: str, results: list[KnowledgeResult]) -> list[KnowledgeResult]:
        """The top ``depth`` results reordered by their fused score blended with the
        reranker's (``fusion.second_stage``; a larger share of it over memories alone), then
        the rest as they were. The rescored keep the scores of the places they take (the
        ranking is the contract, the number is not: docs/spec/search-api.md), so scores still
        fall as results go."""
        head, tail = results[: self.depth], results[self.depth :]
        scores = self.reranker().score(query, [r.content or "" for r in head])
        places = [r.score for r in head]
        memories_only = all(r.source_type == "memory" for r in head)
        weight = fusion.MEMORY_RERANK_WEIGHT if memories_only else fusion.RERANK_WEIGHT
        blended = fusion.second_stage(np.array(places, np.float32), scores, weight)
        order = sorted(range(len(head)), key=lambda i: (-float(blended[i]), i))
        reordered = [head[i] for i in order]
        for result, i, place in zip(reordered, order, places, strict=True):
            result.score = place
            if result.explain is not None:
                result.explain.rerank = float(scores[i])
        return reordered + tail
