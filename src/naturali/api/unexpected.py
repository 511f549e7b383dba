"""An unexpected exception is answered here, outermost, with the one error shape (500).

Starlette's own handler for ``Exception`` answers and then re-raises, so that the server logs
it; uvicorn then closes the connection. The client's next request on that keep-alive
connection — one that had nothing to do with the failure — then died with a reset. Here the
exception is logged and answered, and the connection stays open. A write that ran out of
disk space half-way (its transaction rolled back) is answered 507, not 500.
"""

from __future__ import annotations

import logging

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from naturali.api.errors import error_response
from naturali.service.platform.disk import full, is_disk_full

log = logging.getLogger("naturali.api")


class AnswerUnexpected:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception as exc:
            if started:  # part of an answer is out: only closing the connection can say so
                raise
            if is_disk_full(exc):
                log.error("a write ran out of disk space: %s", exc)
                refused = full("it ran out of space during this write")
                response = error_response(507, refused.type, refused.code, refused.message)
            else:
                log.exception("unhandled error")
                response = error_response(
                    500, "api_error", "internal_error", "internal server error"
                )
            await response(scope, receive, send)
