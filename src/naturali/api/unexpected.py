"""An unexpected exception is answered here, outermost, with the one error shape (500).

Starlette's own handler for ``Exception`` answers and then re-raises, so that the server logs
it; uvicorn then closes the connection. The client's next request on that keep-alive
connection — one that had nothing to do with the failure — then died with a reset. Here the
exception is logged and answered, and the connection stays open.
"""

from __future__ import annotations

import logging

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from naturali.api.errors import error_response

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
        except Exception:
            if started:  # part of an answer is out: only closing the connection can say so
                raise
            log.exception("unhandled error")
            response = error_response(500, "api_error", "internal_error", "internal server error")
            await response(scope, receive, send)
