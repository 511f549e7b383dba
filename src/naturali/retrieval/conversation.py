"""Memories ranked as turns of a conversation: a turn is read with the turns written beside
it, and a question that names someone prefers the memories that name them.

An agent's memories are often the turns of a dialogue, and a question's answer is often spread
over a turn and its reply, or attributed to a speaker the question names. Both signals re-score
the fused candidates that are memories (documents are left as they were):

- context: a memory gains ``NEIGHBOUR_WEIGHT`` × the mean fused score of its neighbours — the
  memories of its store written just before and after it (adjacent rows of the search's
  subset) — when they are candidates too;
- names: each capitalised word of the question (``tokens.names``) a memory does not contain
  scales its score down, to ``UNNAMED_FACTOR`` when it contains none of them.

Both were chosen on LoCoMo-dev's five conversations (``bench/memory.py`` prints every variant
tried, per question category); neither needs a model at query time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from naturali.model import SourceType
from naturali.retrieval.index import ProjectIndex

Rows = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Conversation:
    neighbour_weight: float = 0.15
    unnamed_factor: float = 0.8


def rescored(
    index: ProjectIndex,
    mask: npt.NDArray[np.bool_],
    candidates: Rows,
    memory: npt.NDArray[np.bool_],
    fused: Floats,
    names: Sequence[str],
    weights: Conversation,
) -> Floats:
    """``fused`` (the candidates' scores, ``candidates`` sorted) with the memories among them
    (``memory``) re-scored."""
    if not memory.any():
        return fused
    out = fused.copy()
    if weights.neighbour_weight:
        out[memory] += (
            weights.neighbour_weight * _neighbour_mean(index, mask, candidates, memory, fused)
        )[memory]
    if names and weights.unnamed_factor != 1.0:
        rows = candidates[memory]
        named = np.mean([index.lexical.containing(name, rows) for name in names], axis=0)
        factor = weights.unnamed_factor + (1.0 - weights.unnamed_factor) * named
        out[memory] *= factor.astype(np.float32)
    return out


def _neighbour_mean(
    index: ProjectIndex,
    mask: npt.NDArray[np.bool_],
    candidates: Rows,
    memory: npt.NDArray[np.bool_],
    fused: Floats,
) -> Floats:
    """Each memory candidate's mean of its two neighbours' fused scores (0 for a neighbour
    that is no candidate, or is no memory of the same store; 0 for every other candidate)."""
    subset = np.flatnonzero(mask)
    at = np.searchsorted(subset, candidates)
    total = np.zeros(candidates.size, np.float32)
    for step in (-1, 1):
        place = at + step
        inside = (place >= 0) & (place < subset.size)
        neighbour = np.full(candidates.size, -1, np.int64)
        neighbour[inside] = subset[place[inside]]
        where = np.searchsorted(candidates, neighbour)
        where = np.minimum(where, candidates.size - 1)
        found = memory & inside & (candidates[where] == neighbour)
        for i in np.flatnonzero(found):
            if _same_store(index, int(candidates[i]), int(neighbour[i])):
                total[i] += fused[where[i]]
    return (total / 2).astype(np.float32)


def _same_store(index: ProjectIndex, row: int, other: int) -> bool:
    a, b = index.owner_of(row), index.owner_of(other)
    return (
        a is not None
        and b is not None
        and a.source == b.source == SourceType.MEMORY
        and a.store_id == b.store_id
    )
