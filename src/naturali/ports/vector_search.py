"""The store's own nearest-vector search (PostgreSQL's pgvector), a port of its own: the
vector leg of a project too large for a server to hold its vectors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt


class VectorSearch(Protocol):
    """Nearest chunks by their vectors, answered by the store itself (PostgreSQL's pgvector):
    the vector leg of a project too large for a server to hold its vectors
    (retrieval/vector_leg/stored_vectors.py). Cosines are inner products: the vectors are unit
    length."""

    def nearest_vectors(
        self,
        project_id: str,
        model_id: str,
        query: npt.NDArray[np.float32],
        limit: int,
        within: Sequence[int] | None = None,
    ) -> list[tuple[int, float]]:
        """Seqs and cosines of the project's ``limit`` chunks nearest ``query`` among those of
        ``model_id``, best first: by its approximate index (``index_vectors``) when there is
        one, or exactly among the seqs ``within``."""
        ...

    def vector_cosines(
        self, project_id: str, model_id: str, query: npt.NDArray[np.float32], seqs: Sequence[int]
    ) -> dict[int, float]:
        """The cosines with ``query`` of these chunks' vectors, of those ``model_id`` made, by
        seq (a chunk another model embedded is left out)."""
        ...

    def vectors(
        self, project_id: str, model_id: str, seqs: Sequence[int]
    ) -> dict[int, npt.NDArray[np.float32]]:
        """These chunks' vectors, of those ``model_id`` made, by seq."""
        ...

    def index_vectors(self, project_id: str, model_id: str, dimension: int) -> None:
        """Build the project's approximate index of its ``model_id`` vectors unless it has one
        (minutes for a million; searches meanwhile read every vector, exactly)."""
        ...
