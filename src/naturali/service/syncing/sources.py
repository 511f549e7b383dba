"""Sources of a project (``…/sources``): a Git repository its documents under a prefix mirror.
Editors and owners make, change, delete and sync them; any member reads them. Every URL is
checked against the network rules (sources/addresses.py) when it is given and again at each
sync; the sync itself is service/syncing/source_sync.py's, run by any server's SourceWorker."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from naturali.errors import InvalidRequest, NotFound
from naturali.ids import new_id
from naturali.model import Source, User, utcnow
from naturali.ports.storage import Storage
from naturali.service.platform import grants
from naturali.service.platform.auth import Auth
from naturali.service.syncing.source_requests import SourceCreate, SourceUpdate, every_seconds
from naturali.sources import addresses

MAX_SOURCES = 50  # a project's


class Sources:
    def __init__(
        self,
        storage: Storage,
        auth: Auth,
        allow: addresses.Allowlist,
        wake: Callable[[], None],
    ) -> None:
        self._storage = storage
        self._auth = auth
        self._allow = allow
        self.wake = wake  # a sync is due: the worker takes it now

    def create(self, user: User, project_id: str, request: SourceCreate) -> Source:
        grants.writable_path(user, request.path)
        if len(self._storage.list_sources(project_id)) >= MAX_SOURCES:
            raise InvalidRequest(
                f"a project has at most {MAX_SOURCES} sources",
                code="too_many_sources",
                param="url",
            )
        self._cleared(request.url, request.ref)
        now = utcnow()
        seconds = every_seconds(request.every)
        source = Source(
            id=new_id("src"),
            project_id=project_id,
            kind=request.kind,
            url=request.url,
            ref=request.ref,
            folder=(request.folder or "").strip("/"),
            path=request.path,
            include=request.include or [],
            exclude=request.exclude or [],
            every_seconds=seconds,
            created_at=now,
            updated_at=now,
            next_run_at=time.time() if seconds else None,  # a scheduled one syncs at once
        )
        self._storage.create_source(source)
        self.wake()
        return source

    def list(self, user: User, project_id: str) -> list[Source]:
        """The project's sources that write where the caller was granted."""
        return [s for s in self._storage.list_sources(project_id) if user.grant.sees_path(s.path)]

    def get(self, user: User, project_id: str, source_id: str) -> Source:
        return self._get(user, project_id, source_id)

    def update(self, user: User, project_id: str, source_id: str, request: SourceUpdate) -> Source:
        """Its settings; the documents follow at its next sync."""
        source = self._get(user, project_id, source_id)
        given = request.model_dump(exclude_unset=True)
        if given.get("path") is not None:
            grants.writable_path(user, given["path"])
        self._cleared(given.get("url"), given.get("ref"))
        if "folder" in given:
            given["folder"] = (given["folder"] or "").strip("/")
        for patterns in ("include", "exclude"):
            if patterns in given:
                given[patterns] = given[patterns] or []
        if "every" in given:
            seconds = every_seconds(given.pop("every"))
            given |= {"every_seconds": seconds, "next_run_at": time.time() if seconds else None}
        changed = replace(source, **given, updated_at=utcnow())
        self._storage.update_source(changed)
        self.wake()
        return changed

    def delete(self, user: User, project_id: str, source_id: str, keep_documents: bool) -> None:
        """The source, and unless ``keep_documents`` the documents it made."""
        source = self._get(user, project_id, source_id)
        self._storage.delete_source(project_id, source_id)
        if not keep_documents:
            for document_id, _ in made_by(self._storage, source).values():
                self._storage.delete_document(project_id, document_id)

    def sync(self, user: User, project_id: str, source_id: str) -> Source:
        """Ask the servers to sync it now (one of them takes it at once)."""
        self._get(user, project_id, source_id)
        self._storage.request_source_sync(project_id, source_id, time.time())
        self.wake()
        return self._get(user, project_id, source_id)

    def _get(self, user: User, project_id: str, source_id: str) -> Source:
        """The source, if it writes where the caller was granted (else it is not there)."""
        source = self._storage.get_source(project_id, source_id)
        if source is None or not user.grant.sees_path(source.path):
            raise NotFound(
                f"source {source_id} not found", code="source_not_found", param="source_id"
            )
        return source

    def _cleared(self, url: str | None, ref: str | None) -> None:
        """The URL and ref pass the network rules and can never be read as an option."""
        if ref is not None and addresses.option_like(ref):
            raise InvalidRequest(
                "a ref may not start with '-' or hold spaces or control characters",
                code="source_refused",
                param="ref",
            )
        try:
            if url is not None:
                addresses.check(url, self._allow)
        except addresses.Refused as exc:
            raise InvalidRequest(str(exc), code="source_refused", param="url") from exc


def made_by(storage: Storage, source: Source) -> dict[str, tuple[str, str]]:
    """The documents ``source`` made, by path: (document id, the key of their content)."""
    found: dict[str, tuple[str, str]] = {}
    after: str | None = None
    while True:
        page = storage.list_documents(source.project_id, (source.path,), after, 500)
        for document in page:
            made = document.metadata.get("source")
            if isinstance(made, dict) and made.get("id") == source.id:
                found[document.path] = (document.id, str(made.get("key", "")))
        if len(page) < 500:
            return found
        after = page[-1].path
