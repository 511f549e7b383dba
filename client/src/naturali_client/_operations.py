"""How a client calls a knowledge operation's route from its method, path and fields: the
path's slots filled (the project, the store, and the one field a GET carries in its path),
the other fields a POST's JSON body or a GET's query string. The CLI and the MCP server over
HTTP call through it; the SDK's own methods are generated with the same rules."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

_SLOT = re.compile(r"\{(\w+)\}")


def http_call(
    method: str,
    path: str,
    path_field: str | None,
    ids: dict[str, str],
    fields: dict[str, Any],
) -> tuple[str, dict[str, Any]]:
    """The URL and the request's other arguments (``json`` or ``params``) of one call.
    ``ids``: the project's and the store's (``project_id``, ``memory_store_id``); ``fields``:
    the request's set fields, by the names the operation gives them."""
    fields = dict(fields)
    slot = str(fields.pop(path_field)) if path_field is not None else ""
    url = _SLOT.sub(lambda m: quote(ids.get(m.group(1), slot), safe=""), path)
    if method == "GET":
        return url, {"params": fields} if fields else {}
    return url, {"json": fields}
