"""Shared fixtures: a real embedder (loaded once), a fresh data dir per test, an in-process
HTTP client, and helpers to make users with roles."""

from __future__ import annotations

import io
import os
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from naturali.api.app import create_app
from naturali.catalogue import TOOLS
from naturali.compose import build_services
from naturali.embed.onnx import OnnxEmbedder
from naturali.ports.embedder import Vectors
from naturali.service.container import Services
from naturali.service.memory.stores import OpenStore
from naturali.settings import Settings
from postgres import PostgresServer


@pytest.fixture(scope="session")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> OnnxEmbedder:
    embedder = OnnxEmbedder(threads=2, cache_dir=tmp_path_factory.mktemp("models"))
    assert embedder.query_model_loaded.wait(120)  # the default model's queries: no build
    return embedder


EmbedCall = tuple[list[str], bool]  # the texts of one ``embed`` call, and whether urgent


@pytest.fixture
def embed_calls(embedder: OnnxEmbedder, monkeypatch: pytest.MonkeyPatch) -> list[EmbedCall]:
    """Every call of the shared embedder's ``embed`` while the test runs, as it is made
    (each still embedded by the real model)."""
    calls: list[EmbedCall] = []
    embed = embedder.embed

    def recording(texts: Sequence[str], *, urgent: bool = False) -> Vectors:
        calls.append((list(texts), urgent))
        return embed(texts, urgent=urgent)

    monkeypatch.setattr(embedder, "embed", recording)
    return calls


@dataclass
class Api:
    """An in-process client with the owner's token, plus the service behind it."""

    http: TestClient
    naturali: Services
    token: str

    def headers(self, token: str | None = None) -> dict[str, str]:
        return {"Authorization": f"Bearer {token or self.token}"}

    def post(self, url: str, token: str | None = None, **kw: Any) -> Any:
        return self.http.post(url, headers={**self.headers(token), **kw.pop("headers", {})}, **kw)

    def get(self, url: str, token: str | None = None, **kw: Any) -> Any:
        return self.http.get(url, headers={**self.headers(token), **kw.pop("headers", {})}, **kw)

    def put(self, url: str, token: str | None = None, **kw: Any) -> Any:
        return self.http.put(url, headers={**self.headers(token), **kw.pop("headers", {})}, **kw)

    def patch(self, url: str, token: str | None = None, **kw: Any) -> Any:
        return self.http.patch(url, headers={**self.headers(token), **kw.pop("headers", {})}, **kw)

    def delete(self, url: str, token: str | None = None, **kw: Any) -> Any:
        return self.http.delete(url, headers={**self.headers(token), **kw.pop("headers", {})}, **kw)

    def project(self, name: str = "test", token: str | None = None) -> str:
        response = self.post("/v1/projects", token, json={"name": name})
        assert response.status_code == 201, response.text
        return str(response.json()["id"])

    def user(self, name: str = "someone") -> tuple[str, str]:
        user, token = self.naturali.users.create(name)
        return user.id, token

    def member(self, project_id: str, role: str) -> str:
        user_id, token = self.user(role)
        r = self.put(f"/v1/projects/{project_id}/members/{user_id}", json={"role": role})
        assert r.status_code == 200, r.text
        return token

    def ready(self, project_id: str, document_id: str, timeout: float = 120) -> dict[str, Any]:
        """The document once it is no longer processing (a large one embeds in the background)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            document = dict(self.get(f"/v1/projects/{project_id}/documents/{document_id}").json())
            if document["status"] != "processing":
                return document
            time.sleep(0.1)
        raise AssertionError("still processing")

    def doc(self, project_id: str, path: str, content: str, **fields: Any) -> dict[str, Any]:
        body = {"path": path, "content": content, **fields}
        r = self.post(f"/v1/projects/{project_id}/documents", json=body)
        assert r.status_code == 201, r.text
        return dict(r.json())

    def upload(self, project_id: str, path: str, data: bytes, filename: str, **fields: str) -> Any:
        files = {"file": (filename, io.BytesIO(data))}
        return self.post(
            f"/v1/projects/{project_id}/documents", files=files, data={"path": path, **fields}
        )

    def search(self, project_id: str, token: str | None = None, **body: Any) -> Any:
        return self.post(f"/v1/projects/{project_id}/knowledge/search", token, json=body)


BACKENDS = ["sqlite", "postgres"]


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    server = PostgresServer()
    yield server
    server.stop()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """The settings of one backend: the embedded SQLite store, or a fresh PostgreSQL
    database on the session's real server. Tests on ``api`` run on both."""
    if request.param == "sqlite":
        yield {}
        return
    server: PostgresServer = request.getfixturevalue("postgres")
    url = server.new_database()
    yield {"database_url": url}
    server.drop(url)


def make_api(
    tmp_path: Path,
    embedder: OnnxEmbedder,
    backend: dict[str, Any] | None = None,
    token: str | None = None,
    **settings: Any,
) -> Iterator[Api]:
    """A server on ``tmp_path``'s data dir; ``token``: the owner's, when it restarts one."""
    naturali = build_services(
        Settings(data_dir=tmp_path / "data", **(backend or {}), **settings), embedder=embedder
    )
    try:
        token = naturali.bootstrap() or token
        assert token
        with TestClient(create_app(naturali), raise_server_exceptions=False) as http:
            http.event_hooks["response"].append(validate_result)
            yield Api(http, naturali, token)
    finally:
        naturali.close()


_ROUTES = [
    (op.method, re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", op.path) + "$"), op.result)
    for op in TOOLS
]


def validate_result(response: httpx.Response) -> None:
    """Every 200 of a catalogue operation, in every test, is checked against its result model
    (extra fields are refused by the models, so an undocumented field fails too)."""
    if response.status_code != 200:
        return
    for method, path, result in _ROUTES:
        if response.request.method == method and path.match(response.request.url.path):
            response.read()
            result.model_validate(response.json())
            return


@pytest.fixture
def api(tmp_path: Path, embedder: OnnxEmbedder, backend: dict[str, Any]) -> Iterator[Api]:
    yield from make_api(tmp_path, embedder, backend)


def assert_error(response: Any, status: int, code: str | None = None) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"type", "code", "message", "param"}
    assert body["error"]["message"]
    if code:
        assert body["error"]["code"] == code, body
    return dict(body["error"])


class StoreVault:
    """A project with one memory store whose vault the test writes files into."""

    def __init__(self, api: Api) -> None:
        from records_vault import write

        self._write = write
        self.api = api
        self.project = api.project()
        r = api.post(f"/v1/projects/{self.project}/memory_stores", json={"name": "kb"})
        self.store = r.json()["id"]
        self.path: Path = api.naturali.memories.vault(self.store)
        self.base = f"/v1/projects/{self.project}/memory_stores/{self.store}/knowledge"

    def write(self, record_id: str, body: str = "", **front: Any) -> Path:
        return self._write(self.path, record_id, body, **front)

    def call(self, route: str, status: int = 200, **body: Any) -> dict[str, Any]:
        """POST a records or dates tool of this store; the response, checked for ``status``."""
        r = self.api.post(f"{self.base}/{route}", json=body)
        assert r.status_code == status, r.text
        return dict(r.json())


def open_store(naturali: Services, store_id: str) -> OpenStore:
    """A store's open resources as the server keeps them between calls: while fewer stores
    than ``open_stores`` are open, the same object stays open after its last caller."""
    with naturali.stores.opened(store_id) as opened:
        return opened


def open_files() -> list[str]:
    """What this process's descriptors are open on (``/proc/self/fd``)."""
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            out.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            continue  # the listing's own, closed by now
    return out
