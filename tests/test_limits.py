"""Rate limits per token (429 with Retry-After, this server's own count) and quotas per
project (409 quota_exceeded, nothing written; counted in the catalog, so on both backends),
with the project's usage readable."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Api, assert_error, make_api
from naturali.embed.onnx import OnnxEmbedder


@pytest.fixture
def limited(tmp_path: Path, embedder: OnnxEmbedder, backend: dict[str, Any]) -> Iterator[Api]:
    yield from make_api(tmp_path / "limited", embedder, backend, rate_limit="5/minute")


@pytest.fixture
def one_search(tmp_path: Path, embedder: OnnxEmbedder, backend: dict[str, Any]) -> Iterator[Api]:
    yield from make_api(tmp_path / "one", embedder, backend, searches_in_flight=1)


@pytest.fixture
def quoted(tmp_path: Path, embedder: OnnxEmbedder, backend: dict[str, Any]) -> Iterator[Api]:
    quotas = {"quota_documents": 2, "quota_bytes": 1000, "quota_memories": 1}
    yield from make_api(tmp_path / "quoted", embedder, backend, **quotas)


def test_a_token_over_its_rate_gets_429_with_retry_after(limited: Api) -> None:
    answers = [limited.get("/v1/projects") for _ in range(7)]
    assert [a.status_code for a in answers[:5]] == [200] * 5
    refused = answers[5]
    assert_error(refused, 429, "rate_limited")
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    _, other = limited.user("other")
    assert limited.get("/v1/projects", other).status_code == 200  # per token


def test_searches_in_flight_per_token(one_search: Api) -> None:
    api = one_search
    project = api.project()
    guard_limits = _guard(api).limits
    guard_limits.begin_search(_key(api.token))  # one of its searches is running
    try:
        r = api.search(project, query="x")
        assert_error(r, 429, "too_many_searches")
        assert r.headers["Retry-After"] == "1"
    finally:
        guard_limits.end_search(_key(api.token))
    assert api.search(project, query="x").status_code == 200


def test_a_write_over_a_quota_is_refused_and_changes_nothing(quoted: Api) -> None:
    project = quoted.project()
    url = f"/v1/projects/{project}/documents"
    assert quoted.post(url, json={"path": "/a.md", "content": "Refunds in five days."}).is_success
    big = quoted.post(url, json={"path": "/big.md", "content": "x " * 600})
    assert assert_error(big, 409, "quota_exceeded")["param"] == "bytes"
    assert quoted.post(url, json={"path": "/b.md", "content": "Second."}).is_success
    third = quoted.post(url, json={"path": "/c.md", "content": "Third."})
    assert assert_error(third, 409, "quota_exceeded")["param"] == "documents"
    paths = [d["path"] for d in quoted.get(url).json()["data"]]
    assert paths == ["/a.md", "/b.md"]
    store = quoted.post(f"/v1/projects/{project}/memory_stores", json={"name": "kb"}).json()
    memories = f"/v1/projects/{project}/memory_stores/{store['id']}/memories"
    assert quoted.post(memories, json={"content": "Acme prefers credit."}).is_success
    over = quoted.post(memories, json={"content": "A second memory."})
    assert assert_error(over, 409, "quota_exceeded")["param"] == "memories"
    usage = quoted.get(f"/v1/projects/{project}/usage").json()
    assert usage["documents"] == 2 and usage["memories"] == 1 and usage["chunks"] >= 3
    assert usage["bytes"] == len("Refunds in five days.") + len("Second.")
    assert usage["quotas"] == {"bytes": 1000, "documents": 2, "chunks": 0, "memories": 1}


def _guard(api: Api) -> Any:
    """The app's request guard (the middleware stack is built on the first request)."""
    app: Any = api.http.app
    layer = app.middleware_stack
    while layer is not None and type(layer).__name__ != "RequestGuard":
        layer = getattr(layer, "app", None)
    assert layer is not None
    return layer


def _key(token: str) -> str:
    from naturali.service.platform.auth import hash_token

    return hash_token(token)


def test_a_quota_holds_under_racing_writers_on_two_servers(
    tmp_path: Path, embedder: OnnxEmbedder, backend: dict[str, Any]
) -> None:
    """16 writers at once, half through each of two servers (on SQLite, two services on one
    data dir), against a quota 4 memories away: exactly 4 are kept."""
    apis = make_api(tmp_path / "a", embedder, backend, quota_memories=8)
    api = next(apis)
    try:
        _race(api, tmp_path, embedder, backend)
    finally:
        apis.close()


def _race(api: Api, tmp_path: Path, embedder: OnnxEmbedder, backend: dict[str, Any]) -> None:
    import threading

    from fastapi.testclient import TestClient

    from naturali.api.app import create_app
    from naturali.compose import build_services
    from naturali.settings import Settings

    project = api.project()
    store = api.post(f"/v1/projects/{project}/memory_stores", json={"name": "kb"}).json()["id"]
    url = f"/v1/projects/{project}/memory_stores/{store}/memories"
    for n in range(4):
        assert api.post(url, json={"content": f"Memory {n}."}).is_success
    other = Settings(data_dir=tmp_path / "a" / "data", quota_memories=8, **backend)
    if backend:  # PostgreSQL: a second server with its own data dir and cache
        other = Settings(data_dir=tmp_path / "b", quota_memories=8, **backend)
    second = build_services(other, embedder=embedder)
    statuses: list[int] = []
    barrier = threading.Barrier(16)
    try:
        with TestClient(create_app(second)) as http:
            clients = [api.http, http]

            def write(n: int) -> None:
                barrier.wait()
                r = clients[n % 2].post(
                    url, json={"content": f"Racing {n}."}, headers=api.headers()
                )
                statuses.append(r.status_code)

            threads = [threading.Thread(target=write, args=(n,)) for n in range(16)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
    finally:
        second.close()
    assert sorted(statuses) == [201] * 4 + [409] * 12
    assert api.get(f"/v1/projects/{project}/usage").json()["memories"] == 8
