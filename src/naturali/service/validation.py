"""Rules for values every interface accepts: logical paths, tags, metadata."""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

from naturali.errors import InvalidRequest
from naturali.text.unicode import encodable
from naturali.text.unicode import find_unencodable as find_unencodable  # for the API guard

MAX_PATH_BYTES = 1024
MAX_TAGS = 64
MAX_TAG_CHARS = 256
MAX_METADATA_BYTES = 64 * 1024
MAX_TITLE_CHARS = 512
MAX_CONTENT_CHARS = 100_000  # a memory's content, a record's body
MAX_FIELD_DEPTH = 16  # nesting of a record's front-matter values
# One-line values (paths, names, tags, titles): no control characters at all, and not the
# line separators YAML reads as line breaks (a title with U+0085 would come back changed).
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# Text (bodies, content, multi-line field values): tabs and line breaks only.
_TEXT_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029]")


# Whitespace, controls, format characters (zero-width space and joiners, BOM, bidi marks) and
# unassigned or private code points carry no text a search could match.
_INVISIBLE = frozenset({"Cc", "Cf", "Cn", "Co", "Cs", "Zs", "Zl", "Zp"})


def one_line(value: str, param: str, code: str) -> str:
    """A one-line value (a name, a title): UTF-8 encodable, no control characters."""
    if _CONTROL.search(value) or not encodable(value):
        raise InvalidRequest(
            f"{param} holds a lone surrogate or a control character", code=code, param=param
        )
    return value


def text(value: Any, param: str, *, max_chars: int = MAX_CONTENT_CHARS) -> str:
    """Multi-line text a record or memory keeps: UTF-8 encodable, bounded, no control
    characters but tabs and line breaks."""
    if not isinstance(value, str):
        raise InvalidRequest(f"{param} must be a string", code="invalid_text", param=param)
    if len(value) > max_chars:
        raise InvalidRequest(
            f"{param} is longer than {max_chars} characters", code="too_long", param=param
        )
    if not encodable(value) or _TEXT_CONTROL.search(value):
        raise InvalidRequest(
            f"{param} holds a lone surrogate or a control character",
            code="invalid_text",
            param=param,
        )
    return value


def record_fields(fields: dict[str, Any], param: str) -> None:
    """Front-matter values a client sends: every string encodable and free of control
    characters (one-line ones of line breaks too), nested at most MAX_FIELD_DEPTH deep."""
    pending: list[tuple[str, Any, int]] = [(f"{param}.{k}", v, 1) for k, v in fields.items()]
    while pending:
        path, item, depth = pending.pop()
        if depth > MAX_FIELD_DEPTH:
            raise InvalidRequest(
                f"{param} is nested deeper than {MAX_FIELD_DEPTH} levels",
                code="too_deep",
                param=path,
            )
        if isinstance(item, str):
            single = path.split(".")[1] in ("title", "type", "aliases", "tags", "kind", "id")
            if not encodable(item) or (_CONTROL if single else _TEXT_CONTROL).search(item):
                raise InvalidRequest(
                    f"{path} holds a lone surrogate or a control character",
                    code="invalid_text",
                    param=path,
                )
        elif isinstance(item, dict):
            for key, child in item.items():
                if not isinstance(key, str) or not encodable(key) or _CONTROL.search(key):
                    raise InvalidRequest(f"{path} has a bad key", code="invalid_text", param=path)
                pending.append((f"{path}.{key}", child, depth + 1))
        elif isinstance(item, list):
            pending.extend((f"{path}.{i}", c, depth + 1) for i, c in enumerate(item))


def _depth(value: Any) -> int:
    deepest = 0
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        deepest = max(deepest, depth)
        if isinstance(item, dict):
            pending.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            pending.extend((child, depth + 1) for child in item)
    return deepest


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
    if _CONTROL.search(path) or not encodable(path):
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
        if not encodable(key + item) or _CONTROL.search(key + item) or ":" in key:
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
    if _depth(value) > MAX_FIELD_DEPTH * 2:
        raise InvalidRequest(
            f"metadata is nested deeper than {MAX_FIELD_DEPTH * 2} levels",
            code="invalid_metadata",
            param=param,
        )
    bad = find_unencodable(value)
    if bad is not None:
        raise InvalidRequest(
            f"metadata.{bad} holds a lone surrogate", code="invalid_metadata", param=param
        )
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
    if not isinstance(value, str) or len(value) > MAX_TITLE_CHARS:
        raise InvalidRequest(
            f"title must be a string of at most {MAX_TITLE_CHARS} characters",
            code="invalid_title",
            param=param,
        )
    return one_line(value, param, "invalid_title").strip() or None


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
