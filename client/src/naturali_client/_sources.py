"""``client.sources``: Git repositories a project's documents mirror, synced by the server."""

from __future__ import annotations

import builtins
import time
from typing import Any

from naturali_client._models import Source
from naturali_client._resource import Resource


class Sources(Resource):
    def create(
        self,
        *,
        project_id: str,
        url: str,
        kind: str = "git",
        path: str = "/",
        ref: str | None = None,
        folder: str | None = None,
        include: builtins.list[str] | None = None,
        exclude: builtins.list[str] | None = None,
        every: str | None = None,
    ) -> Source:
        """Mirror a repository under ``path``; ``every`` ("1h") syncs it on a schedule."""
        given: dict[str, Any] = {"kind": kind, "url": url, "path": path, "ref": ref}
        given["folder"] = folder
        given |= {"include": include, "exclude": exclude, "every": every}
        body = {k: v for k, v in given.items() if v is not None}
        return Source.model_validate(self._call("POST", self._url(project_id), json=body))

    def list(self, *, project_id: str) -> builtins.list[Source]:
        data = self._call("GET", self._url(project_id))["data"]
        return [Source.model_validate(s) for s in data]

    def get(self, *, project_id: str, source_id: str) -> Source:
        return Source.model_validate(self._call("GET", self._url(project_id, source_id)))

    def update(self, *, project_id: str, source_id: str, **changes: Any) -> Source:
        """Change settings (``url``, ``ref``, ``folder``, ``include``, ``exclude``,
        ``every``; None clears an optional one)."""
        url = self._url(project_id, source_id)
        return Source.model_validate(self._call("PATCH", url, json=changes))

    def delete(self, *, project_id: str, source_id: str, keep_documents: bool = False) -> None:
        params = {"keep_documents": "true" if keep_documents else "false"}
        self._call("DELETE", self._url(project_id, source_id), params=params)

    def sync(self, *, project_id: str, source_id: str, wait: float | None = None) -> Source:
        """Ask for a sync now; with ``wait``, return once it is recorded (at most ``wait`` s)."""
        before = self.get(project_id=project_id, source_id=source_id).last_run
        url = self._url(project_id, source_id) + "/sync"
        source = Source.model_validate(self._call("POST", url))
        deadline = time.monotonic() + (wait or 0)
        while wait is not None and time.monotonic() < deadline:
            source = self.get(project_id=project_id, source_id=source_id)
            if source.last_run and not source.sync_requested and source.last_run != before:
                return source
            time.sleep(0.2)
        return source

    @staticmethod
    def _url(project_id: str, source_id: str | None = None) -> str:
        base = f"/v1/projects/{project_id}/sources"
        return f"{base}/{source_id}" if source_id else base
