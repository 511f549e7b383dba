"""A search's query starts embedding as soon as its body has arrived.

The embedding is most of a search's time, and before the route runs FastAPI parses and
validates the body, resolves the dependencies and hops to a worker thread: ~0.9 ms of a cold
search at 100k chunks in `bench/search_latency.py`'s server. Started here, on the embedding's
own thread, the query is embedded meanwhile: what HTTP adds to the service call went from
3.9–4.2 to 3.5–3.8 ms in three paired runs. This runs inside the request guard, so only an
authenticated caller can start one, as any search of theirs would (membership is checked
beside the embedding either way); a request that then fails validation has cost one embedding.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import Future

from fastapi import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from naturali.service import validation
from naturali.service.container import Services
from naturali.service.query_vectors import Vector
from naturali.service.requests import MAX_QUERY_CHARS

QUERY_AHEAD_KEY = "naturali_query_ahead"
_SEARCH_PATH = re.compile(r"^/v1/projects/[^/]+/knowledge/search$")


class QueryAhead:
    def __init__(self, app: ASGIApp, naturali: Services) -> None:
        self.app = app
        self.naturali = naturali
        self._searching = 0  # searches this app is serving now (on its event loop)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] != "POST"
            or not _SEARCH_PATH.match(scope["path"])
        ):
            await self.app(scope, receive, send)
            return
        message = await receive()
        # Never on the event loop: the model's first load (the route's thread loads it then).
        whole = message["type"] == "http.request" and not message.get("more_body", False)
        if whole and self.naturali.embedder_loaded:
            query = _query(message.get("body", b""))
            if query is not None:
                # The loop hands its GIL over to the query's model thread only when it has no
                # other search to serve meanwhile (service/embedding_pool.py).
                started = self.naturali.search.embed_ahead(query, hand_over=self._searching == 0)
                scope.setdefault("state", {})[QUERY_AHEAD_KEY] = (query, started)

        first: Message | None = message

        async def replay() -> Message:
            nonlocal first
            if first is None:
                return await receive()
            read, first = first, None
            return read

        self._searching += 1
        try:
            await self.app(scope, replay, send)
        finally:
            self._searching -= 1


def query_ahead(request: Request, query: str | None) -> Future[Vector] | None:
    """The vector this request's query started as, if it is the query the route validated."""
    started: tuple[str, Future[Vector]] | None = getattr(request.state, QUERY_AHEAD_KEY, None)
    if started is None or query is None or started[0] != query:
        return None
    return started[1]


def _query(body: bytes) -> str | None:
    """The body's query, if it is one a search could run: the route validates the rest."""
    if b'"query"' not in body:
        return None
    try:
        parsed = json.loads(body)
    except (ValueError, RecursionError):
        return None  # the route answers it
    query = parsed.get("query") if isinstance(parsed, dict) else None
    if not isinstance(query, str) or len(query) > MAX_QUERY_CHARS:
        return None
    return query if validation.has_visible(query) else None
