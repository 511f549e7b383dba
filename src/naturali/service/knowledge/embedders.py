"""Which embedder a project's passages and questions go through: the model it chose when it
was made (``embedding_model``), or the server's. Each model is loaded on first use, once per
process. A project's choice is read from the catalogue and remembered for a second, so a
change made on another server is followed within one."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from naturali.model import Project
from naturali.ports.embedder import Embedder
from naturali.ports.storage import Storage

REMEMBER_SECONDS = 1.0


class Embedders:
    def __init__(
        self,
        storage: Storage,
        load_default: Callable[[], Embedder],
        load_named: Callable[[str], Embedder],
        default_name: str | None,
    ) -> None:
        """``default_name``: the server's model by name, when it is one a project may choose
        too (a project naming it shares its embedder)."""
        self._storage = storage
        self._load_default = load_default
        self._load_named = load_named
        self.default_name = default_name
        self._default: Embedder | None = None
        self._named: dict[str, Embedder] = {}
        self._lock = threading.Lock()
        self._models: dict[str, tuple[str | None, float]] = {}

    @property
    def loaded(self) -> bool:
        return self._default is not None

    def default(self) -> Embedder:
        """The server's embedder, loaded on first use."""
        if self._default is None:
            with self._lock:
                if self._default is None:
                    self._default = self._load_default()
        return self._default

    def named(self, name: str | None) -> Embedder:
        """The embedder of a model by name (None, or the server's own: the server's)."""
        if name is None or name == self.default_name:
            return self.default()
        with self._lock:
            if name not in self._named:
                self._named[name] = self._load_named(name)
            return self._named[name]

    def of(self, project_id: str) -> Embedder:
        """The embedder the project's vectors are made with now."""
        return self.named(self.model(project_id))

    def name_of(self, project: Project) -> str:
        """The name of the model the project's vectors are made with now."""
        return project.embedding_model or self.default_name or self.default().model_id

    def model(self, project_id: str) -> str | None:
        """The model the project chose (None: the server's), read at most once a second."""
        now = time.monotonic()
        known = self._models.get(project_id)
        if known is not None and now - known[1] < REMEMBER_SECONDS:
            return known[0]
        project = self._storage.get_project(project_id)
        name = project.embedding_model if project is not None else None
        self._models[project_id] = (name, now)
        return name

    def forget(self, project_id: str) -> None:
        """The project's model changed here: read it again."""
        self._models.pop(project_id, None)

    def queued(self) -> int:
        """Passage batches waiting, over every loaded model (for metrics)."""
        loaded = [self._default] if self._default is not None else []
        return sum(e.queued() for e in [*loaded, *self._named.values()])
