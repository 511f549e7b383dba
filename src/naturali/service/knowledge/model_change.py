"""A project moving to another embedding model: its chunks are embedded again by the new
model, a batch a step, in the background; its searches keep using the model it had (the
index holds that model's vectors, and a vector the new model made is left out of it) until no
chunk is left, then the project takes the new model and each server's index of it is rebuilt
from the new vectors at its next search. Uploads meanwhile are embedded by the model the
project has, and made again in turn."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import numpy as np

from naturali.errors import InvalidRequest
from naturali.model import Project
from naturali.ports.storage import NewVector, Storage
from naturali.service.knowledge.embedders import Embedders
from naturali.settings import PROJECT_MODELS
from naturali.text.context import in_context

log = logging.getLogger("naturali.models")

BATCH = 64  # chunks embedded again a step


class ModelChanges:
    def __init__(
        self, storage: Storage, embedders: Embedders, wake: Callable[[], None] = lambda: None
    ) -> None:
        self._storage = storage
        self._embedders = embedders
        self.wake = wake  # the thread that runs ``step`` (service/container.py)
        self._after: dict[str, int] = {}  # project → the last seq embedded again
        self._lock = threading.Lock()

    def check(self, name: str) -> None:
        """A model a project may be given is one this server can run (its extra installed)."""
        if name not in PROJECT_MODELS:
            raise InvalidRequest(
                f"embedding_model must be one of {', '.join(PROJECT_MODELS)}",
                code="invalid_model",
                param="embedding_model",
            )
        try:
            self._embedders.named(name)
        except ModuleNotFoundError as exc:
            raise InvalidRequest(
                str(exc), code="model_unavailable", param="embedding_model"
            ) from None

    def move(self, project: Project, name: str) -> Project:
        """Start moving the project to the model ``name`` (or stop a move back to the one it
        has); returns the project as it is now."""
        self.check(name)
        current = project.embedding_model or self._embedders.default_name
        target = None if name == current else name
        self._storage.set_project_models(project.id, project.embedding_model, target)
        with self._lock:
            self._after.pop(project.id, None)
        self.wake()
        found = self._storage.get_project(project.id)
        assert found is not None
        return found

    def left(self, project: Project) -> int | None:
        """How many of the project's chunks are still to embed again (None: no move)."""
        if project.embedding_model_next is None:
            return None
        model_id = self._embedders.named(project.embedding_model_next).model_id
        return self._storage.count_chunks_not_of(project.id, model_id)

    def step(self) -> bool:
        """Embed one batch of one moving project again, or finish its move; False when no
        project is moving."""
        return any(self._step(project) for project in self._storage.moving_projects())

    def _step(self, project: Project) -> bool:
        assert project.embedding_model_next is not None
        target = self._embedders.named(project.embedding_model_next)
        with self._lock:
            after = self._after.get(project.id, 0)
        chunks = self._storage.chunks_not_of(project.id, target.model_id, after, BATCH)
        if chunks:
            vectors = target.embed([in_context(c.text, c.context) for c in chunks])
            self._storage.set_vectors(
                [
                    NewVector(c.project_id, c.seq, np.ascontiguousarray(v, np.float32).tobytes())
                    for c, v in zip(chunks, vectors, strict=True)
                ],
                target.model_id,
            )
            with self._lock:
                self._after[project.id] = chunks[-1].seq
            return True
        if self._storage.count_chunks_not_of(project.id, target.model_id):
            with self._lock:  # written before the cursor meanwhile: once more from the start
                self._after[project.id] = 0
            return True
        self._storage.set_project_models(project.id, project.embedding_model_next, None)
        self._embedders.forget(project.id)
        log.info("project %s moved to %s", project.id, project.embedding_model_next)
        return True
