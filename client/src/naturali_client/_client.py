"""HTTP client over httpx; errors come back as ``NaturaliAPIError`` with the error shape."""

from __future__ import annotations

import builtins
import json
import time
from pathlib import Path
from typing import Any

import httpx

from naturali_client._errors import NaturaliAPIError
from naturali_client._models import (
    Document,
    Memory,
    MemoryStore,
    PassageList,
    Project,
    Token,
)
from naturali_client._records import Records
from naturali_client._resource import Resource
from naturali_client._search import SearchKnowledge
from naturali_client._sources import Sources


def _clean(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if v is not None}


class Knowledge(SearchKnowledge):
    """``search_knowledge`` is generated from the server's ``SearchRequest`` (``_search.py``)."""


class Tokens(Resource):
    def create(
        self,
        *,
        name: str,
        scope: str = "read",
        projects: builtins.list[str] | None = None,
        expires_in: str | None = None,
        path_prefixes: builtins.list[str] | None = None,
        memory_store_ids: builtins.list[str] | None = None,
    ) -> Token:
        """A token of the caller's (needs an admin token); ``token`` holds its secret, shown
        this once. ``path_prefixes`` and ``memory_store_ids`` limit what of each project it
        reaches (default: what the caller's token reaches; ``[]``: none)."""
        body = _clean(
            {
                "name": name,
                "scope": scope,
                "projects": projects,
                "expires_in": expires_in,
                "path_prefixes": path_prefixes,
                "memory_store_ids": memory_store_ids,
            }
        )
        return Token.model_validate(self._call("POST", "/v1/tokens", json=body))

    def list(self) -> builtins.list[Token]:
        return [Token.model_validate(t) for t in self._call("GET", "/v1/tokens")["data"]]

    def revoke(self, *, token_id: str) -> None:
        self._call("DELETE", f"/v1/tokens/{token_id}")


class Projects(Resource):
    def create(self, *, name: str, embedding_model: str | None = None) -> Project:
        """A project of the caller's; ``embedding_model``: "bge-small-en-v1.5" (English) or
        "multilingual-e5-small" (100 languages; default: the server's model)."""
        body = _clean({"name": name, "embedding_model": embedding_model})
        return Project.model_validate(self._call("POST", "/v1/projects", json=body))

    def update(self, *, project_id: str, embedding_model: str) -> Project:
        """Move the project to another embedding model: its passages are embedded again in
        the background (``chunks_to_reembed`` counts down); searches use the model it had
        until every one is done."""
        body = {"embedding_model": embedding_model}
        return Project.model_validate(self._call("PATCH", f"/v1/projects/{project_id}", json=body))

    def list(self) -> builtins.list[Project]:
        return [Project.model_validate(p) for p in self._call("GET", "/v1/projects")["data"]]

    def get(self, *, project_id: str) -> Project:
        return Project.model_validate(self._call("GET", f"/v1/projects/{project_id}"))

    def usage(self, *, project_id: str) -> dict[str, Any]:
        """What the project stores (documents, bytes, chunks, memories) and its quotas."""
        usage: dict[str, Any] = self._call("GET", f"/v1/projects/{project_id}/usage")
        return usage

    def overview(self, *, project_id: str) -> dict[str, Any]:
        """The project at a glance: what it stores, its jobs by state, its memory stores'
        sizes, the embedding model and the answering server's search index."""
        overview: dict[str, Any] = self._call("GET", f"/v1/projects/{project_id}/overview")
        return overview

    def ingest_jobs(self, *, project_id: str) -> builtins.list[dict[str, Any]]:
        """The project's ingestion jobs queued, running or failed, every page, oldest first."""
        return self._every_page(f"/v1/projects/{project_id}/ingest_jobs", {})

    def audit(
        self,
        *,
        project_id: str,
        since: str | None = None,
        until: str | None = None,
        operation: str | None = None,
    ) -> builtins.list[dict[str, Any]]:
        """The project's audit trail, every page (owners): writes from ``since``, before
        ``until``, of one ``operation`` ("POST /v1/projects/{project_id}/documents")."""
        filters = {"since": since, "until": until, "operation": operation}
        return self._every_page(f"/v1/projects/{project_id}/audit", _clean(filters))

    def list_members(self, *, project_id: str) -> builtins.list[dict[str, Any]]:
        members: list[dict[str, Any]] = self._call("GET", f"/v1/projects/{project_id}/members")[
            "data"
        ]
        return members

    def put_member(
        self,
        *,
        project_id: str,
        user_id: str,
        role: str,
        path_prefixes: builtins.list[str] | None = None,
        memory_store_ids: builtins.list[str] | None = None,
    ) -> dict[str, Any]:
        """Add a member or change one; ``path_prefixes`` and ``memory_store_ids`` limit what
        of the project they reach (default: all of it; ``[]``: none)."""
        url = f"/v1/projects/{project_id}/members/{user_id}"
        limits = {"path_prefixes": path_prefixes, "memory_store_ids": memory_store_ids}
        member: dict[str, Any] = self._call("PUT", url, json=_clean({"role": role, **limits}))
        return member

    def remove_member(self, *, project_id: str, user_id: str) -> None:
        self._call("DELETE", f"/v1/projects/{project_id}/members/{user_id}")


class Documents(Resource):
    def create_text(
        self,
        *,
        project_id: str,
        path: str,
        content: str,
        title: str | None = None,
        metadata: dict[str, Any] | None = None,
        tags: dict[str, str] | None = None,
    ) -> Document:
        body = _clean(
            {"path": path, "content": content, "title": title, "metadata": metadata, "tags": tags}
        )
        return Document.model_validate(
            self._call("POST", f"/v1/projects/{project_id}/documents", json=body)
        )

    def upload(
        self,
        *,
        project_id: str,
        file: str | Path,
        path: str,
        title: str | None = None,
        metadata: dict[str, Any] | None = None,
        tags: dict[str, str] | None = None,
    ) -> Document:
        fields = {"path": path, "title": title, "metadata": metadata, "tags": tags}
        url = f"/v1/projects/{project_id}/documents"
        return Document.model_validate(self._send("POST", url, file, None, fields))

    def replace(
        self,
        *,
        project_id: str,
        document_id: str,
        file: str | Path | None = None,
        content: str | None = None,
        path: str | None = None,
        title: str | None = None,
        metadata: dict[str, Any] | None = None,
        tags: dict[str, str] | None = None,
    ) -> Document:
        """A new version of a document from a file or text (none if unchanged); omitted
        fields keep their values."""
        fields = {"path": path, "title": title, "metadata": metadata, "tags": tags}
        url = f"/v1/projects/{project_id}/documents/{document_id}"
        return Document.model_validate(self._send("PUT", url, file, content, fields))

    def _send(
        self,
        method: str,
        url: str,
        file: str | Path | None,
        content: str | None,
        fields: dict[str, Any],
    ) -> Any:
        """A file with its fields as a form (objects as JSON text), or text as JSON."""
        if (file is None) == (content is None):
            raise ValueError("pass a file or content")
        if file is None:
            return self._call(method, url, json=_clean({**fields, "content": content}))
        form = {k: json.dumps(v) if isinstance(v, dict) else v for k, v in fields.items()}
        source = Path(file)
        with source.open("rb") as fh:
            return self._call(method, url, data=_clean(form), files={"file": (source.name, fh)})

    def get(self, *, project_id: str, document_id: str) -> Document:
        return Document.model_validate(
            self._call("GET", f"/v1/projects/{project_id}/documents/{document_id}")
        )

    def wait(
        self, *, project_id: str, document_id: str, timeout: float = 600.0, poll: float = 0.5
    ) -> Document:
        """The document once its newest upload is ready; ``NaturaliAPIError`` with the job's
        error if it failed, ``TimeoutError`` if it is still processing after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while True:
            document = self.get(project_id=project_id, document_id=document_id)
            if document.status == "ready":
                return document
            if document.status == "failed":
                raise NaturaliAPIError(422, document.error or {"message": "ingestion failed"})
            if time.monotonic() > deadline:
                raise TimeoutError(f"document {document_id} is still processing")
            time.sleep(poll)

    def list(self, *, project_id: str, path_prefix: str | None = None) -> builtins.list[Document]:
        url = f"/v1/projects/{project_id}/documents"
        found = self._every_page(url, _clean({"path_prefix": path_prefix}))
        return [Document.model_validate(d) for d in found]

    def page(
        self,
        *,
        project_id: str,
        path_prefix: str | None = None,
        cursor: str | None = None,
        limit: int = 20,
    ) -> dict[str, Any]:
        """One page of the project's documents by path (``list`` reads every page): ``data``
        and the ``next_cursor`` to pass for the next."""
        params = _clean({"path_prefix": path_prefix, "cursor": cursor, "limit": limit})
        page: dict[str, Any] = self._call(
            "GET", f"/v1/projects/{project_id}/documents", params=params
        )
        return page

    def folders(self, *, project_id: str, prefix: str = "/") -> dict[str, Any]:
        """The folders directly under ``prefix`` with their documents and chunks (every
        page), and ``documents_here``: those directly in it."""
        path = f"/v1/projects/{project_id}/documents/folders"
        pages = list(self._pages(path, {"prefix": prefix}))
        folders = [folder for page in pages for folder in page["data"]]
        return {**pages[0], "data": folders, "next_cursor": None}

    def passages(
        self,
        *,
        project_id: str,
        document_id: str,
        around: str | None = None,
        start: int = 0,
        limit: int = 50,
    ) -> PassageList:
        """A run of the document's passages, from ``start`` or centred on the chunk ``around``
        (a search hit's ``chunk_id``)."""
        params = _clean({"around": around, "start": start, "limit": limit})
        path = f"/v1/projects/{project_id}/documents/{document_id}/passages"
        return PassageList.model_validate(self._call("GET", path, params=params))

    def delete(self, *, project_id: str, document_id: str) -> None:
        self._call("DELETE", f"/v1/projects/{project_id}/documents/{document_id}")


class MemoryStores(Resource):
    def create(
        self, *, project_id: str, name: str, tags: dict[str, str] | None = None
    ) -> MemoryStore:
        body = _clean({"name": name, "tags": tags})
        return MemoryStore.model_validate(
            self._call("POST", f"/v1/projects/{project_id}/memory_stores", json=body)
        )

    def create_memory(
        self,
        *,
        project_id: str,
        memory_store_id: str,
        content: str,
        tags: dict[str, str] | None = None,
        title: str | None = None,
    ) -> Memory:
        body = _clean({"content": content, "tags": tags, "title": title})
        url = f"/v1/projects/{project_id}/memory_stores/{memory_store_id}/memories"
        return Memory.model_validate(self._call("POST", url, json=body))

    def list(self, *, project_id: str) -> builtins.list[MemoryStore]:
        data = self._call("GET", f"/v1/projects/{project_id}/memory_stores")["data"]
        return [MemoryStore.model_validate(m) for m in data]

    def get(self, *, project_id: str, memory_store_id: str) -> MemoryStore:
        url = f"/v1/projects/{project_id}/memory_stores/{memory_store_id}"
        return MemoryStore.model_validate(self._call("GET", url))

    def update(
        self,
        *,
        project_id: str,
        memory_store_id: str,
        name: str | None = None,
        tags: dict[str, str] | None = None,
    ) -> MemoryStore:
        url = f"/v1/projects/{project_id}/memory_stores/{memory_store_id}"
        body = _clean({"name": name, "tags": tags})
        return MemoryStore.model_validate(self._call("PATCH", url, json=body))

    def delete(self, *, project_id: str, memory_store_id: str) -> None:
        self._call("DELETE", f"/v1/projects/{project_id}/memory_stores/{memory_store_id}")

    def list_memories(self, *, project_id: str, memory_store_id: str) -> builtins.list[Memory]:
        url = f"/v1/projects/{project_id}/memory_stores/{memory_store_id}/memories"
        return [Memory.model_validate(m) for m in self._call("GET", url)["data"]]

    def get_memory(self, *, project_id: str, memory_store_id: str, memory_id: str) -> Memory:
        url = f"/v1/projects/{project_id}/memory_stores/{memory_store_id}/memories/{memory_id}"
        return Memory.model_validate(self._call("GET", url))

    def update_memory(
        self,
        *,
        project_id: str,
        memory_store_id: str,
        memory_id: str,
        content: str | None = None,
        tags: dict[str, str] | None = None,
        title: str | None = None,
    ) -> Memory:
        url = f"/v1/projects/{project_id}/memory_stores/{memory_store_id}/memories/{memory_id}"
        body = _clean({"content": content, "tags": tags, "title": title})
        return Memory.model_validate(self._call("PATCH", url, json=body))

    def delete_memory(self, *, project_id: str, memory_store_id: str, memory_id: str) -> None:
        url = f"/v1/projects/{project_id}/memory_stores/{memory_store_id}/memories/{memory_id}"
        self._call("DELETE", url)


class Client:
    """``Client(base_url, token)``; resources: ``knowledge``, ``projects``, ``documents``,
    ``memory_stores``, ``records``, ``sources``."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: float = 120.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self._http = httpx.Client(
            base_url=base_url.rstrip("/"),
            timeout=timeout,
            transport=transport,
            headers={"Authorization": f"Bearer {token}"},
        )
        self.knowledge = Knowledge(self._http)
        self.projects = Projects(self._http)
        self.tokens = Tokens(self._http)
        self.documents = Documents(self._http)
        self.memory_stores = MemoryStores(self._http)
        self.records = Records(self._http)
        self.sources = Sources(self._http)

    def request(self, method: str, url: str, **kwargs: Any) -> Any:
        """A raw call to any route; errors raise NaturaliAPIError."""
        return Resource(self._http)._call(method, url, **kwargs)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
