"""Text that UTF-8 can carry: Python strings may hold lone surrogates (a JSON ``\\ud800``
escape, a YAML ``"\\udc00"``), which no response, file or database can encode."""

from __future__ import annotations

from typing import Any


def encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def find_unencodable(value: Any) -> str | None:
    """The dotted path of the first string (or key) in a JSON-like value that UTF-8 cannot
    encode, "" for the value itself; None when there is none. Iterative, so no nesting depth
    can exhaust the stack."""
    pending: list[tuple[str, Any]] = [("", value)]
    while pending:
        path, item = pending.pop()
        if isinstance(item, str):
            if not encodable(item):
                return path
        elif isinstance(item, dict):
            for key, child in item.items():
                name = f"{path}.{key}" if path else str(key)
                if not encodable(str(key)):
                    return path
                pending.append((name, child))
        elif isinstance(item, list):
            pending.extend((f"{path}.{i}" if path else str(i), c) for i, c in enumerate(item))
    return None
