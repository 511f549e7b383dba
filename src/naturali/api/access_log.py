"""The access log: method, path, status and time — never the query string, where filters such
as ``path_prefix`` travel (queries and filters are never logged; bodies are never logged)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("naturali.access")
Recorder = Callable[[str, str, int, float], None]


class AccessLog:
    """Logs each answer and hands it to ``record`` (the metrics) with its route's template."""

    def __init__(self, app: ASGIApp, record: Recorder | None = None) -> None:
        self.app = app
        self.record = record

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            elapsed = time.perf_counter() - started
            request_id = scope.get("state", {}).get("request_id", "-")
            path, ms = scope["path"], elapsed * 1000
            log.info("%s %s %s %d %.1fms", request_id, scope["method"], path, status, ms)
            if self.record is not None:
                self.record(scope["method"], _route(scope), status, elapsed)


def _route(scope: Scope) -> str:
    """The route's template (``/v1/projects/{project_id}``): a bounded label, never the ids."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    if isinstance(path, str):
        return path
    return "/ui" if scope["path"].startswith("/ui") else "unmatched"
