"""The outermost layer of every ``/v1`` request: who is calling, and how much they may send.

An anonymous caller must not be able to make the server read, buffer or parse anything, so
the token is checked before a byte of the body is read, and every body is counted while it
streams — chunked or not, whatever ``Content-Length`` claims. JSON bodies have a small limit
of their own and are read whole (bounded) so that text no UTF-8 can encode — invalid bytes, or
a ``\\ud800`` escape without its pair — is refused here, once, for every field of every route.
Uploads (multipart) stream through with ``max_upload_bytes``.
"""

from __future__ import annotations

import json
import re

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from naturali.api.errors import naturali_error_response
from naturali.api.rate_limits import RateLimits
from naturali.errors import InvalidRequest, NaturaliError, PayloadTooLarge
from naturali.service.container import Services
from naturali.service.platform.auth import hash_token
from naturali.service.validation import find_unencodable

USER_KEY = "naturali_user"
MULTIPART_FRAMING = 64 * 1024
# A \u escape of a surrogate, with the run of backslashes before it (an even run is text).
_SURROGATE_ESCAPE = re.compile(rb"(\\+)u[dD][89a-fA-F][0-9a-fA-F]{2}")


class BodyTooLarge(PayloadTooLarge):
    pass


class RequestGuard:
    def __init__(self, app: ASGIApp, naturali: Services) -> None:
        self.app = app
        self.naturali = naturali
        self.json_limit = naturali.settings.max_json_bytes
        self.upload_limit = naturali.settings.max_upload_bytes + MULTIPART_FRAMING
        settings = naturali.settings
        self.limits = RateLimits(settings.rate_limit, settings.searches_in_flight)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/v1/"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v for k, v in scope["headers"]}
        try:
            bearer = _bearer(headers.get("authorization"))
            user = self.naturali.auth.authenticate(bearer)
            key = hash_token(bearer or "")
            self.limits.hit(key)
            scope.setdefault("state", {})[USER_KEY] = user
            multipart = headers.get("content-type", b"").startswith(b"multipart/")
            limit = self.upload_limit if multipart else self.json_limit
            _check_declared(headers.get("content-length"), limit)
            if not multipart and scope["method"] in ("POST", "PUT", "PATCH", "DELETE"):
                body = await _read_all(receive, limit)
                _check_text(body, headers.get("content-type", b""))
                receive = _replay(body)
            else:
                receive = _counting(receive, limit)
        except NaturaliError as exc:
            await naturali_error_response(exc)(scope, receive, send)
            return
        if scope["method"] != "POST" or not scope["path"].endswith("/knowledge/search"):
            await self.app(scope, receive, send)
            return
        try:
            self.limits.begin_search(key)
        except NaturaliError as exc:
            await naturali_error_response(exc)(scope, receive, send)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self.limits.end_search(key)


def _bearer(value: bytes | None) -> str | None:
    if value is None:
        return None
    scheme, _, token = value.decode("latin-1").partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def _too_large(limit: int) -> BodyTooLarge:
    return BodyTooLarge(f"the request body is larger than {limit} bytes", code="body_too_large")


def _check_declared(length: bytes | None, limit: int) -> None:
    if length is not None and length.isdigit() and int(length) > limit:
        raise _too_large(limit)


async def _read_all(receive: Receive, limit: int) -> bytes:
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)
        parts.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(parts)


def _replay(body: bytes) -> Receive:
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


def _counting(receive: Receive, limit: int) -> Receive:
    size = 0

    async def counted() -> Message:
        nonlocal size
        message = await receive()
        size += len(message.get("body", b""))
        if size > limit:
            raise _too_large(limit)
        return message

    return counted


def _check_text(body: bytes, content_type: bytes) -> None:
    """JSON text must be UTF-8, and no string in it may hold a lone surrogate."""
    if not body or b"json" not in content_type:
        return
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _invalid_text(f"the body is not valid UTF-8 (byte {exc.start})", None) from exc
    if b"\\u" not in body or not any(len(m.group(1)) % 2 for m in _SURROGATE_ESCAPE.finditer(body)):
        return
    try:
        where = find_unencodable(json.loads(body))
    except (ValueError, RecursionError):
        return  # not JSON after all: the route says so
    if where is not None:
        raise _invalid_text(
            f"{where or 'the body'} holds a lone surrogate, which no UTF-8 text can",
            where or None,
        )


def _invalid_text(message: str, param: str | None) -> InvalidRequest:
    return InvalidRequest(message, code="invalid_text", param=param)
