"""Query vectors already computed: a repeated question (an agent retrying, several agents
asking the same thing) costs no model run, still the largest part of a search's CPU (~4 of
~11 ms with the int8 query model).

Keyed by the embedder's model, the project searched and a SHA-256 of the exact query text, so
the text itself is not kept (docs/spec/search-api.md: the query is never stored or logged);
only the most recently used ``entries`` vectors are held (1.5 KiB each at 384 dimensions). The
project is in the key because an answer from the cache comes ~5-12 ms sooner than one that
ran the model: shared between projects, how fast a search answered would tell its caller
whether another team had just asked the same question.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from naturali.ports.embedder import Embedder

Vector = npt.NDArray[np.float32]


class QueryVectors:
    def __init__(self, embedder: Callable[[str], Embedder], entries: int) -> None:
        self._embedder = embedder
        self._entries = entries
        self._recent: OrderedDict[tuple[str, str, bytes], Vector] = OrderedDict()
        self._lock = threading.Lock()

    def recent(self, project_id: str, query: str) -> Vector | None:
        """The vector of a text a search of the project embedded lately, without running the
        model; else None."""
        return self._known(self._key(self._embedder(project_id), project_id, query))

    def vector(self, project_id: str, query: str) -> Vector:
        embedder = self._embedder(project_id)
        key = self._key(embedder, project_id, query)
        known = self._known(key)
        if known is not None:
            return known
        vector: Vector = embedder.embed_query(query)
        vector.flags.writeable = False  # shared between searches
        if self._entries > 0:
            with self._lock:
                self._recent[key] = vector
                while len(self._recent) > self._entries:
                    self._recent.popitem(last=False)
        return vector

    @staticmethod
    def _key(embedder: Embedder, project_id: str, query: str) -> tuple[str, str, bytes]:
        return (embedder.model_id, project_id, hashlib.sha256(query.encode()).digest())

    def _known(self, key: tuple[str, str, bytes]) -> Vector | None:
        with self._lock:
            known = self._recent.get(key)
            if known is not None:
                self._recent.move_to_end(key)
            return known
