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
    def reserve(self, project_id: str, adding: ProjectUsage) -> Iterator[None]:
        """Refuse a write that would take the project over a quota; else hold the project
        until the write in this block is made."""
        if not self.limits.any:
            yield
            return
        with self._storage.project_lock(project_id):
            used = self._storage.project_usage(project_id)
            for quota in fields(ProjectUsage):
                limit, now = getattr(self.limits, quota.name), getattr(used, quota.name)
                more = getattr(adding, quota.name)
                if limit and more > 0 and now + more > limit:
                    raise Conflict(
                        f"the project's quota of {limit} {quota.name} would be exceeded: {now} "
                        f"used, this write adds {more}",
                        code="quota_exceeded",
                        param=quota.name,
                    )
            yield
