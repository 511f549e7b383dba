"""Rules for values every interface accepts: logical paths, tags, metadata."""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

from naturali.errors import InvalidRequest

MAX_PATH_BYTES = 1024
MAX_TAGS = 64
MAX_TAG_CHARS = 256
MAX_METADATA_BYTES = 64 * 1024
MAX_TITLE_CHARS = 512
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


# Whitespace, controls, format characters (zero-width space and joiners, BOM, bidi marks) and
# unassigned or private code points carry no text a search could match.
_INVISIBLE = frozenset({"Cc", "Cf", "Cn", "Co", "Cs", "Zs", "Zl", "Zp"})


def has_visible(text: str) -> bool:
    """Whether ``text`` has at least one character that is not blank or invisible."""
    return any(unicodedata.category(c) not in _INVISIBLE for c in text)


def logical_path(path: str, param: str = "path", *, prefix: bool = False) -> str:
    """An absolute, normalised logical path (``/handbook/support/refunds.md``).

    Prefixes (``prefix=True``) may end with ``/``; document paths may not.
    """
    if not isinstance(path, str) or not path:
        raise InvalidRequest("path must be a non-empty string", code="invalid_path", param=param)
    if len(path.encode("utf-8")) > MAX_PATH_BYTES:
        raise InvalidRequest(
            f"path is longer than {MAX_PATH_BYTES} bytes", code="invalid_path", param=param
        )
    if _CONTROL.search(path):
        raise InvalidRequest(
            "path contains NUL or control characters", code="invalid_path", param=param
        )
    if not path.startswith("/"):
        raise InvalidRequest(
            "path must be absolute (start with '/')", code="invalid_path", param=param
        )
    if "\\" in path:
        raise InvalidRequest("path must use '/' separators", code="invalid_path", param=param)
    inner = path[1:-1] if path.endswith("/") and len(path) > 1 else path[1:]
    segments = inner.split("/") if inner else []
    if not prefix and (path.endswith("/") or not segments):
        raise InvalidRequest(
            "a document path must name a file, not a folder", code="invalid_path", param=param
        )
    for segment in segments:
        if segment in ("", ".", ".."):
            raise InvalidRequest(
                "path must be normalised: no empty, '.' or '..' segments",
                code="invalid_path",
                param=param,
            )
        if segment != segment.strip():
            raise InvalidRequest(
                "path segments may not start or end with spaces", code="invalid_path", param=param
            )
    return path


def tags(value: Any, param: str = "tags") -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidRequest(
            "tags must be an object of string values", code="invalid_tags", param=param
        )
    if len(value) > MAX_TAGS:
        raise InvalidRequest(f"at most {MAX_TAGS} tags", code="invalid_tags", param=param)
    for key, item in value.items():
        if not isinstance(key, str) or not isinstance(item, str):
            raise InvalidRequest(
                "tags must map strings to strings", code="invalid_tags", param=param
            )
        if not key or len(key) > MAX_TAG_CHARS or len(item) > MAX_TAG_CHARS:
            raise InvalidRequest(
                f"tag keys must be 1–{MAX_TAG_CHARS} characters and values at most {MAX_TAG_CHARS}",
                code="invalid_tags",
                param=param,
            )
        if _CONTROL.search(key) or _CONTROL.search(item) or ":" in key:
            raise InvalidRequest(
                "tag keys may not contain ':' or control characters",
                code="invalid_tags",
                param=param,
            )
    return dict(value)


def metadata(value: Any, param: str = "metadata") -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidRequest("metadata must be a JSON object", code="invalid_metadata", param=param)
    if len(json.dumps(value).encode()) > MAX_METADATA_BYTES:
        raise InvalidRequest(
            f"metadata is larger than {MAX_METADATA_BYTES} bytes",
            code="invalid_metadata",
            param=param,
        )
    return value


def title(value: Any, param: str = "title") -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > MAX_TITLE_CHARS or _CONTROL.search(value):
        raise InvalidRequest(
            f"title must be a string of at most {MAX_TITLE_CHARS} characters without control "
            "characters",
            code="invalid_title",
            param=param,
        )
    return value.strip() or None


def json_text(value: str | None, param: str) -> Any:
    """Multipart fields carry ``metadata`` and ``tags`` as JSON text."""
    if value is None or value == "":
        return None
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise InvalidRequest(
            f"{param} must be JSON text: {exc.msg}", code="invalid_json", param=param
        ) from exc
