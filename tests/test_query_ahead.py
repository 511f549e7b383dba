"""A search's query starts embedding when its body arrives, before the route validates it
(api/query_ahead.py): the search then uses that vector instead of embedding again, and only
an authenticated caller can start one."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import anyio
import pytest

from conftest import Api, assert_error, make_api
from naturali.api.query_ahead import QueryAhead
from naturali.embed.onnx import OnnxEmbedder
from naturali.model import User
from naturali.service.requests import SearchRequest


class CountingEmbedder:
    """The session's real embedder, counting the queries it embeds."""

    def __init__(self, inner: OnnxEmbedder) -> None:
        self._inner = inner
        self.model_id = inner.model_id
        self.dimension = inner.dimension
        self.vector_weight = inner.vector_weight
        self.queries: list[str] = []
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str], *, urgent: bool = False) -> Any:
        return self._inner.embed(texts, urgent=urgent)

    def embed_query(self, text: str) -> Any:
        with self._lock:
            self.queries.append(text)
        return self._inner.embed_query(text)

    def count_tokens(self, text: str) -> int:
        return self._inner.count_tokens(text)


@pytest.fixture
def counted(tmp_path: Path, embedder: OnnxEmbedder) -> Iterator[tuple[Api, CountingEmbedder]]:
    counting = CountingEmbedder(embedder)
    # No query vector cache: every search that embeds shows in the count.
    for api in make_api(tmp_path, counting, query_vector_cache_entries=0):  # type: ignore[arg-type]
        yield api, counting


def _spy_on_search(api: Api, monkeypatch: pytest.MonkeyPatch) -> list[Future[Any] | None]:
    """The ``embedding`` each search was given by the route."""
    given: list[Future[Any] | None] = []
    search = api.naturali.search.search

    def spy(user: User, project_id: str, request: SearchRequest, **kw: Any) -> Any:
        given.append(kw.get("embedding"))
        return search(user, project_id, request, **kw)

    monkeypatch.setattr(api.naturali.search, "search", spy)
    return given


@pytest.fixture
def spied(
    counted: tuple[Api, CountingEmbedder], monkeypatch: pytest.MonkeyPatch
) -> tuple[Api, str, list[str], list[Future[Any] | None]]:
    """Two documents ingested; then the queries embedded and the vectors the route gave."""
    api, counting = counted
    project_id = api.project()
    api.doc(project_id, "/refunds.md", "# Refunds\n\nRefunds are paid within 14 days.")
    api.doc(project_id, "/tea.md", "# Tea\n\nGreen tea is brewed at 80 degrees.")
    counting.queries.clear()
    return api, project_id, counting.queries, _spy_on_search(api, monkeypatch)


def test_a_search_uses_the_vector_its_body_started(
    spied: tuple[Api, str, list[str], list[Future[Any] | None]],
) -> None:
    api, project_id, embedded, given = spied
    r = api.search(project_id, query="how long do refunds take", include_memories=False)
    assert r.status_code == 200, r.text
    # Started before the route ran, and the search embedded nothing more.
    assert len(given) == 1 and isinstance(given[0], Future)
    assert embedded == ["how long do refunds take"]
    # The same ranking as the service's own call, which embeds for itself.
    user = api.naturali.storage.oldest_user()
    assert user is not None
    request = SearchRequest(query="how long do refunds take", include_memories=False)
    direct = api.naturali.search.search(user, project_id, request)
    assert [h["chunk_id"] for h in r.json()["results"]] == [
        getattr(h, "chunk_id", None) for h in direct
    ]
    assert r.json()["results"][0]["path"] == "/refunds.md"


def test_a_fetch_starts_no_embedding(
    spied: tuple[Api, str, list[str], list[Future[Any] | None]],
) -> None:
    api, project_id, embedded, given = spied
    r = api.search(project_id, document_paths=["/"])
    assert r.status_code == 200, r.text
    assert given == [None] and embedded == []


def _spy_on_starts(api: Api, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The queries the middleware starts embedding, recorded as it starts them; the model is
    loaded first, since nothing starts before it is."""
    api.naturali.embedder()
    started: list[str] = []
    embed_ahead = api.naturali.search.embed_ahead

    def spy(query: str, *, hand_over: bool = True) -> Future[Any]:
        started.append(query)
        return embed_ahead(query, hand_over=hand_over)

    monkeypatch.setattr(api.naturali.search, "embed_ahead", spy)
    return started


def test_an_anonymous_caller_cannot_start_one(
    counted: tuple[Api, CountingEmbedder], monkeypatch: pytest.MonkeyPatch
) -> None:
    api, counting = counted
    project_id = api.project()
    started = _spy_on_starts(api, monkeypatch)
    for token in ("", "nk_not-a-token"):
        r = api.http.post(
            f"/v1/projects/{project_id}/knowledge/search",
            json={"query": "anything at all"},
            headers={"Authorization": f"Bearer {token}"} if token else {},
        )
        assert_error(r, 401)
    assert started == [] and counting.queries == []


@pytest.mark.parametrize(
    ("body", "starts"),
    [
        (b'{"query": "refunds", "unknown": 1}', ["refunds"]),  # the route refuses it after
        (b'{"query": "   "}', []),  # blank
        (b'{"query": 5}', []),
        (b'["query"]', []),
        (b'{"query": "refunds"', []),  # not JSON
        (b'{"query": "refunds", "a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", []),  # too deep
    ],
)
def test_a_body_the_route_refuses_is_refused_as_before(
    counted: tuple[Api, CountingEmbedder],
    monkeypatch: pytest.MonkeyPatch,
    body: bytes,
    starts: list[str],
) -> None:
    api, _ = counted
    project_id = api.project()
    started = _spy_on_starts(api, monkeypatch)
    r = api.post(
        f"/v1/projects/{project_id}/knowledge/search",
        content=body,
        headers={"Content-Type": "application/json"},
    )
    assert_error(r, 400)
    assert started == starts


def test_the_models_first_load_is_left_to_the_route(
    counted: tuple[Api, CountingEmbedder], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loading the model takes seconds: it must not happen on the event loop."""
    api, counting = counted
    project_id = api.project()
    assert not api.naturali.embedder_loaded
    given = _spy_on_search(api, monkeypatch)
    for _ in range(2):
        r = api.search(project_id, query="refunds")
        assert r.status_code == 200, r.text
    assert given[0] is None and isinstance(given[1], Future)
    # The project is empty, so neither search waited for its vector: the model's threads may
    # still be starting on them when the second answer arrives.
    given[1].result(timeout=60)
    deadline = time.monotonic() + 60
    while len(counting.queries) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert counting.queries == ["refunds", "refunds"]


async def _search_body() -> dict[str, Any]:
    """An ASGI ``receive`` of a search body, for the middleware called directly."""
    return {"type": "http.request", "body": b'{"query": "refunds"}', "more_body": False}


async def _ignore(message: Any) -> None:
    """An ASGI ``send`` that drops the answer."""


def test_the_loop_hands_its_gil_over_only_when_no_other_search_is_in_progress(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lone search's event loop waits for the query's model thread to begin
    (service/embedding_pool.py); with another search in progress it goes on serving."""
    api.naturali.embedder()
    hand_overs: list[bool] = []

    def embed_ahead(query: str, *, hand_over: bool = True) -> Future[Any]:
        hand_overs.append(hand_over)
        done: Future[Any] = Future()
        done.set_result(None)
        return done

    monkeypatch.setattr(api.naturali.search, "embed_ahead", embed_ahead)
    release = anyio.Event()

    async def route(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await release.wait()

    middleware = QueryAhead(route, api.naturali)
    scope = {"type": "http", "method": "POST", "path": "/v1/projects/p1/knowledge/search"}

    async def searches() -> None:
        async with anyio.create_task_group() as tasks:
            for expected in (1, 2):
                tasks.start_soon(middleware, dict(scope), _search_body, _ignore)
                while len(hand_overs) < expected:
                    await anyio.sleep(0.001)
            release.set()
        await middleware(dict(scope), _search_body, _ignore)  # both have ended

    anyio.run(searches)
    assert hand_overs == [True, False, True]


def test_a_well_formed_search_is_answered_before_fastapis_routing_as_the_route_answers_it(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search whose body validates is answered by the middleware (FastAPI's routing and
    dependencies cost the event loop most of its CPU for a search); every answer — results, a
    service's error, a body the route refuses — is the route's own, byte for byte."""
    import naturali.api.query_ahead as query_ahead_module

    project_id = api.project()
    api.doc(project_id, "/refunds.md", "Refunds are processed within five business days.")
    api.doc(project_id, "/oncall.md", "The on-call engineer answers pages in fifteen minutes.")
    answered_here: list[str] = []
    answered = query_ahead_module.answered

    async def counted(svc: Any, user: Any, project: str, body: Any, ahead: Any, **kw: Any) -> bytes:
        answered_here.append(project)
        return await answered(svc, user, project, body, ahead, **kw)

    monkeypatch.setattr(query_ahead_module, "answered", counted)
    asks: list[tuple[str, dict[str, Any]]] = [
        (project_id, {"query": "how long do refunds take", "limit": 2, "explain": True}),
        (project_id, {"document_paths": ["/"]}),  # a fetch
        ("proj_unknown", {"query": "refunds"}),  # the service's 404
        (project_id, {"query": "x", "include_documents": False, "include_memories": False}),
        (project_id, {"query": "x", "unknown": 1}),  # refused by validation: the route's 400
        (project_id, {"query": "x", "document_paths": ["relative/"]}),  # a validator's error
    ]
    here = [api.search(project, **body) for project, body in asks]
    assert answered_here == [project_id, project_id, "proj_unknown", project_id]
    assert [r.status_code for r in here] == [200, 200, 404, 400, 400, 400]
    assert [h["path"] for h in here[0].json()["results"]] == ["/refunds.md", "/oncall.md"]

    monkeypatch.setattr(query_ahead_module, "_valid", lambda parsed: None)  # all by the route
    by_route = [api.search(project, **body) for project, body in asks]
    assert len(answered_here) == 4
    for mine, route in zip(here, by_route, strict=True):
        assert mine.status_code == route.status_code
        assert mine.headers["content-type"] == route.headers["content-type"]
        assert mine.content == route.content


def test_a_search_body_of_another_content_type_goes_to_the_route(api: Api) -> None:
    """Only a JSON body is answered before the route: the route decides what else means."""
    project_id = api.project()
    body = b'{"query": "refunds"}'
    url = f"/v1/projects/{project_id}/knowledge/search"
    plain = api.post(url, content=body, headers={"Content-Type": "text/plain"})
    assert_error(plain, 400)
    charset = api.post(
        url, content=body, headers={"Content-Type": "application/json; charset=utf-8"}
    )
    assert charset.status_code == 200 and charset.json() == {"results": []}


def _ways(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each search the middleware answered was answered on the event loop's thread."""
    import naturali.api.query_ahead as query_ahead_module

    ways: list[bool] = []
    answered = query_ahead_module.answered

    async def spy(svc: Any, user: Any, project: str, body: Any, ahead: Any, **kw: Any) -> bytes:
        ways.append(kw.get("inline", False))
        return await answered(svc, user, project, body, ahead, **kw)

    monkeypatch.setattr(query_ahead_module, "answered", spy)
    return ways


def test_a_lone_quick_search_is_answered_on_the_event_loop_as_a_lane_answers_it(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a documents-only search of an index in memory and current, on the embedded store
    (api/search_answer.py): a memory store's reconcile, an index's load or sync, or a round
    trip to PostgreSQL would hold every other request meanwhile."""
    project_id = api.project()
    api.doc(project_id, "/refunds.md", "Refunds are processed within five business days.")
    ways = _ways(monkeypatch)
    ask = {"query": "how long do refunds take", "include_memories": False, "explain": True}
    first = api.search(project_id, **ask)  # loads and syncs the index
    again = api.search(project_id, **ask)
    api.doc(project_id, "/oncall.md", "The on-call engineer answers pages in fifteen minutes.")
    after_a_write = api.search(project_id, **ask)  # the index must sync first
    with_memories = api.search(project_id, query="how long do refunds take")
    embedded = api.naturali.settings.database_url is None
    assert ways == [False, embedded, False, False]
    for r in (first, again, after_a_write, with_memories):
        assert r.status_code == 200, r.text
    assert again.content == first.content  # the same answer either way

    monkeypatch.setattr(api.naturali.search, "answers_quickly", lambda *a: False)
    by_lane = api.search(project_id, **ask)
    assert ways[-1] is False
    assert by_lane.content == api.search(project_id, **ask).content
    if embedded:
        monkeypatch.undo()
        ways = _ways(monkeypatch)
        assert api.search(project_id, **ask).content == by_lane.content
        assert ways == [True]


def test_a_search_beside_another_request_in_flight_goes_to_a_lane(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The event loop answers a search itself only when it serves nothing else: any request
    still in flight (here one held in the route) sends the next search to a lane."""
    from naturali.api.guard import USER_KEY

    project_id = api.project()
    api.doc(project_id, "/refunds.md", "Refunds are processed within five business days.")
    api.search(project_id, query="refunds", include_memories=False)  # the index, loaded
    monkeypatch.setattr(api.naturali.search, "answers_quickly", lambda *a: True)
    ways = _ways(monkeypatch)
    release = anyio.Event()

    async def route(scope: Any, receive: Any, send: Any) -> None:
        await release.wait()

    middleware = QueryAhead(route, api.naturali)
    owner = api.naturali.auth.authenticate(api.token)
    search = {
        "type": "http",
        "method": "POST",
        "path": f"/v1/projects/{project_id}/knowledge/search",
        "headers": [(b"content-type", b"application/json")],
        "state": {USER_KEY: owner},
    }
    other = {"type": "http", "method": "GET", "path": "/v1/projects", "headers": []}

    async def requests() -> None:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(middleware, other, _search_body, _ignore)  # held in the route
            await anyio.sleep(0.01)
            await middleware(dict(search), _search_body, _ignore)
            release.set()
        await middleware(dict(search), _search_body, _ignore)  # alone again

    anyio.run(requests)
    assert ways == [False, True]
