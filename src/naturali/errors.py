"""The one error family every layer raises; interfaces map it to their own conventions.

The HTTP API renders it as ``{"error": {"type", "code", "message", "param"}}``, the CLI as a
message and a non-zero exit code, the SDK re-raises it from that shape.
"""

from __future__ import annotations

import re

# A library's message may quote an object's repr ("cannot identify image file <_io.BytesIO
# object at 0x7f…>"): a reader learns nothing from it but the server's memory layout.
_REPR = re.compile(r"\s*<[\w.]+ object at 0x[0-9a-fA-F]+>")


class NaturaliError(Exception):
    """Base error: a stable ``type`` and ``code``, a human message (never an object's repr)
    and the offending parameter."""

    status = 500
    type = "api_error"

    def __init__(self, message: str, *, code: str | None = None, param: str | None = None) -> None:
        message = _REPR.sub("", message)
        super().__init__(message)
        self.message = message
        self.code = code or self.type
        self.param = param

    def to_dict(self) -> dict[str, str | None]:
        return {"type": self.type, "code": self.code, "message": self.message, "param": self.param}


class InvalidRequest(NaturaliError):
    status = 400
    type = "invalid_request_error"


class Unauthenticated(NaturaliError):
    status = 401
    type = "authentication_error"


class Forbidden(NaturaliError):
    status = 403
    type = "permission_error"


class NotFound(NaturaliError):
    status = 404
    type = "not_found_error"


class Conflict(NaturaliError):
    status = 409
    type = "conflict_error"


class PayloadTooLarge(NaturaliError):
    status = 413
    type = "payload_too_large"


class UnsupportedMediaType(NaturaliError):
    status = 415
    type = "unsupported_media_type"


class InsufficientStorage(NaturaliError):
    """The server's disk is (nearly) full: the write was not made; searches still answer."""

    status = 507
    type = "api_error"


class TooManyRequests(NaturaliError):
    """Over a rate or concurrency limit: try again after ``retry_after`` seconds."""

    status = 429
    type = "rate_limit_error"

    def __init__(self, message: str, *, code: str, retry_after: int) -> None:
        super().__init__(message, code=code)
        self.retry_after = retry_after
