"""The indexes one server holds in memory, least recently searched first, within a memory
budget: a search marks its project's index the most recent, and the least recently searched
others are dropped while all of them exceed the budget (a dropped one is reloaded from its
snapshot, or the store, by its next search)."""

from __future__ import annotations

import threading

from naturali.model import IndexState
from naturali.retrieval.index import ProjectIndex


class IndexCache:
    def __init__(self, budget: int) -> None:
        self.budget = budget
        # What the budget dropped since start: indexes, and their bytes (GET /metrics).
        self.evictions = 0
        self.evicted_bytes = 0
        # Least recently searched first: a dict keeps insertion order, and a search moves
        # its project to the end.
        self._indexes: dict[str, ProjectIndex] = {}
        # Each loaded index's size when it was last searched, and their sum: a search adds up
        # its own, not every loaded one's (a thousand of them cost a search 15 ms).
        self._sizes: dict[str, int] = {}
        self.held = 0
        self._lock = threading.Lock()

    def get(self, project_id: str) -> ProjectIndex | None:
        with self._lock:
            return self._indexes.get(project_id)

    def __contains__(self, project_id: str) -> bool:
        with self._lock:
            return project_id in self._indexes

    def put(self, project_id: str, index: ProjectIndex) -> bool:
        """Hold ``index`` unless another one of the project's is held already."""
        with self._lock:
            return self._indexes.setdefault(project_id, index) is index

    def items(self) -> list[tuple[str, ProjectIndex]]:
        with self._lock:
            return list(self._indexes.items())

    def touch(self, project_id: str, index: ProjectIndex) -> list[tuple[str, ProjectIndex]]:
        """Mark the project most recently searched; the indexes the budget dropped for it."""
        dropped: list[tuple[str, ProjectIndex]] = []
        with self._lock:
            self._indexes.pop(project_id, None)
            self._indexes[project_id] = index
            size = index.memory_bytes()
            self.held += size - self._sizes.get(project_id, 0)
            self._sizes[project_id] = size
            while self.held > self.budget:
                victim = next(iter(self._indexes))  # the least recently searched
                if victim == project_id:
                    break
                dropped.append((victim, self._indexes.pop(victim)))
                evicted = self._sizes.pop(victim)
                self.held -= evicted
                self.evictions += 1
                self.evicted_bytes += evicted
        return dropped

    def loaded(self) -> dict[str, int]:
        """Projects whose index is in memory, least recently searched first, with its size."""
        with self._lock:
            return {p: i.memory_bytes() for p, i in self._indexes.items()}

    def state(self, project_id: str) -> IndexState:
        """How the project's index is held now, without loading it."""
        index = self.get(project_id)
        if index is None:
            return IndexState(loaded=False, budget_bytes=self.budget)
        return IndexState(
            loaded=True,
            budget_bytes=self.budget,
            rows=index.n - index.dead,
            memory_bytes=index.memory_bytes(),
            mapped_bytes=index.mapped_bytes(),
            vector_leg="database" if index.stored_vectors is not None else "memory",
        )

    def clear(self) -> None:
        with self._lock:
            self._indexes.clear()
            self._sizes.clear()
            self.held = 0
