"""Opaque paging cursors: the last item's sort key of a page, so the next page starts after
it however the list changed between the two calls."""

from __future__ import annotations

import base64
import json

from naturali.errors import InvalidRequest

MAX_PAGE_SIZE = 100


def check_limit(limit: int, most: int = MAX_PAGE_SIZE) -> None:
    if not 1 <= limit <= most:
        raise InvalidRequest(
            f"limit must be between 1 and {most}", code="invalid_limit", param="limit"
        )


def encode_cursor(after: str) -> str:
    return base64.urlsafe_b64encode(json.dumps({"after": after}).encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> str:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        value = json.loads(base64.urlsafe_b64decode(padded.encode()))["after"]
        if not isinstance(value, str):
            raise ValueError
        return value
    except (ValueError, KeyError, TypeError) as exc:
        raise InvalidRequest("invalid cursor", code="invalid_cursor", param="cursor") from exc
