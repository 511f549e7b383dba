"""A search's query starts embedding as soon as its body has arrived, and a well-formed
search is answered here, before FastAPI's routing.

The embedding is most of a search's time, and before the route runs FastAPI parses and
validates the body, resolves the dependencies and hops to a worker thread: ~0.9 ms of a cold
search at 100k chunks in `bench/search_latency.py`'s server. Started here, on the embedding's
own thread, the query is embedded meanwhile: what HTTP adds to the service call went from
3.9–4.2 to 3.5–3.8 ms in three paired runs. This runs inside the request guard, so only an
authenticated caller can start one, as any search of theirs would (membership is checked
beside the embedding either way); a request that then fails validation has cost one embedding.

FastAPI's routing and dependencies then cost the event loop, one thread for the whole server,
most of its CPU for a search (36 routes matched in turn, four levels of dependencies solved;
cProfile of the loop's thread). So a search whose JSON body validates as the route's
``SearchRequest`` (the route's own check: parsed, then validated in Python mode) is answered
here, by the route's own ``search_answer.answered``; anything else — a body that does not
validate, another content type, a caller the guard did not name — goes on to the route, which
answers it as it always has, errors included. The route stays the operation's one definition
(OpenAPI, the SDKs).
A repeated search, one client, three pairs against the route alone: the server's CPU 5.72–5.86
→ 4.88–5.04 ms a search.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import Future
from typing import Any

from fastapi import Request
from pydantic import ValidationError
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from naturali.api.errors import naturali_error_response, validation_error_response
from naturali.api.guard import USER_KEY
from naturali.api.search_answer import answered
from naturali.errors import NaturaliError
from naturali.model import User
from naturali.service import validation
from naturali.service.container import Services
from naturali.service.query_vectors import Vector
from naturali.service.requests import MAX_QUERY_CHARS, SearchRequest

QUERY_AHEAD_KEY = "naturali_query_ahead"
_SEARCH_PATH = re.compile(r"^/v1/projects/(?P<project_id>[^/]+)/knowledge/search$")


class QueryAhead:
    def __init__(self, app: ASGIApp, naturali: Services) -> None:
        self.app = app
        self.naturali = naturali
        self._searching = 0  # searches this app is serving now (on its event loop)
        self._serving = 0  # HTTP requests of any kind, likewise

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self._serving += 1
        try:
            await self._serve(scope, receive, send)
        finally:
            self._serving -= 1

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = _SEARCH_PATH.match(scope["path"])
        if path is None or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        message = await receive()
        whole = message["type"] == "http.request" and not message.get("more_body", False)
        parsed = _parsed(message.get("body", b"")) if whole else None
        query = _query(parsed)
        started: Future[Vector] | None = None
        # Never on the event loop: the model's first load (the route's thread loads it then).
        if query is not None and self.naturali.embedder_loaded:
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

        user: User | None = scope.get("state", {}).get(USER_KEY)
        body = _valid(parsed) if user is not None and _is_json(scope) else None
        self._searching += 1
        try:
            if user is None or body is None:
                await self.app(scope, replay, send)
                return
            ahead = started if started is not None and body.query == query else None
            inline = self._serving == 1 and self.naturali.search.answers_quickly(
                path["project_id"], body
            )
            response = await self._answer(user, path["project_id"], body, ahead, inline)
            await response(scope, replay, send)
        finally:
            self._searching -= 1

    async def _answer(
        self,
        user: User,
        project_id: str,
        body: SearchRequest,
        ahead: Future[Vector] | None,
        inline: bool,
    ) -> Response:
        """The route's answer, errors in the one shape as its exception handlers give them
        (api/errors.py); anything unexpected goes on to the outer layers, as from the route.
        ``inline``: answered on the event loop's thread (search_answer.py)."""
        try:
            payload = await answered(self.naturali, user, project_id, body, ahead, inline=inline)
        except NaturaliError as exc:
            return naturali_error_response(exc)
        except ValidationError as exc:
            return validation_error_response(exc)
        return Response(payload, media_type="application/json")


def query_ahead(request: Request, query: str | None) -> Future[Vector] | None:
    """The vector this request's query started as, if it is the query the route validated."""
    started: tuple[str, Future[Vector]] | None = getattr(request.state, QUERY_AHEAD_KEY, None)
    if started is None or query is None or started[0] != query:
        return None
    return started[1]


def _parsed(body: bytes) -> Any:
    """The body as JSON, or None when it is not (the route answers it)."""
    if not body:
        return None
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def _query(parsed: Any) -> str | None:
    """The body's query, if it is one a search could run: the route validates the rest."""
    query = parsed.get("query") if isinstance(parsed, dict) else None
    if not isinstance(query, str) or len(query) > MAX_QUERY_CHARS:
        return None
    return query if validation.has_visible(query) else None


def _is_json(scope: Scope) -> bool:
    """``Content-Type: application/json`` (parameters allowed), as the route reads a body."""
    for name, value in scope.get("headers", ()):
        if name.lower() == b"content-type":
            return bool(value.split(b";")[0].strip().lower() == b"application/json")
    return False


def _valid(parsed: Any) -> SearchRequest | None:
    """The body as the route validates it (FastAPI: ``validate_python`` of the parsed JSON,
    ``from_attributes``), or None for the route to answer with its error."""
    if not isinstance(parsed, dict):
        return None
    try:
        return SearchRequest.model_validate(parsed, from_attributes=True)
    except (ValidationError, NaturaliError):  # a validator's own error: the route gives it
        return None
