"""Identifiers: a prefix plus 16 random alphanumerics (``proj_V1StGXR8Z5jdHi6B``)."""

from __future__ import annotations

import secrets
import string

_ALPHABET = string.ascii_letters + string.digits


def new_id(prefix: str) -> str:
    return prefix + "_" + "".join(secrets.choice(_ALPHABET) for _ in range(16))


def new_token() -> str:
    """A bearer secret; only its hash is ever stored."""
    return "nk_" + secrets.token_urlsafe(32)
