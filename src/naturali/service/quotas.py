"""Per-project quotas on what a project stores — bytes of its documents' current versions,
documents, chunks, memories — counted in the catalog, so shared by every server. A write
that would go over one is refused (409 ``quota_exceeded``, naming the quota) before anything
is written. With a quota set, the check and the write it admits are one step under the
project's lock (``reserve``: a file lock on SQLite, an advisory lock on PostgreSQL), so
writers racing on any number of servers never take a project past it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields

from naturali.errors import Conflict
from naturali.model import ProjectUsage
from naturali.ports.storage import Storage


@dataclass(frozen=True)
class QuotaLimits:
    """0: no quota."""

    bytes: int = 0
    documents: int = 0
    chunks: int = 0
    memories: int = 0

    @property
    def any(self) -> bool:
        return any(getattr(self, f.name) for f in fields(self))


class Quotas:
    def __init__(self, storage: Storage, limits: QuotaLimits) -> None:
        self._storage = storage
        self.limits = limits

    def usage(self, project_id: str) -> ProjectUsage:
        return self._storage.project_usage(project_id)

    @contextmanager
    def reserve(
        self,
        project_id: str,
        *,
        documents: int = 0,
        bytes: int = 0,  # noqa: A002 - the quota's own name
        chunks: int = 0,
        memories: int = 0,
    ) -> Iterator[None]:
        """Check, then hold the project until the write in this block is made."""
        if not self.limits.any:
            yield
            return
        with self._storage.project_lock(project_id):
            self.check(
                project_id, documents=documents, bytes=bytes, chunks=chunks, memories=memories
            )
            yield

    def check(
        self,
        project_id: str,
        *,
        documents: int = 0,
        bytes: int = 0,  # noqa: A002 - the quota's own name
        chunks: int = 0,
        memories: int = 0,
    ) -> None:
        """Refuse a write that would take the project over a quota."""
        if not self.limits.any:
            return
        used = self._storage.project_usage(project_id)
        adding = {"documents": documents, "bytes": bytes, "chunks": chunks, "memories": memories}
        for name, more in adding.items():
            limit = getattr(self.limits, name)
            now = getattr(used, name)
            if limit and more > 0 and now + more > limit:
                raise Conflict(
                    f"the project's quota of {limit} {name} would be exceeded: {now} used, "
                    f"this write adds {more}",
                    code="quota_exceeded",
                    param=name,
                )
