"""What both retrievers do: search a project through the SDK and turn each hit into text
with its provenance. ``base_url`` and ``token`` default to the environment every naturali
client reads (``NATURALI_BASE_URL``, ``NATURALI_TOKEN``)."""

from __future__ import annotations

import os
from typing import Any

from naturali_client import Client

DEFAULT_BASE_URL = "http://127.0.0.1:8600"


def hits(
    project_id: str,
    query: str,
    limit: int,
    search: dict[str, Any],
    base_url: str | None,
    token: str | None,
) -> list[tuple[str, dict[str, Any], float]]:
    """The search's results as (text, metadata, score), best first; ``search`` holds any
    other parameter of ``search_knowledge`` (document_paths, tags, rerank, explain…)."""
    url = base_url or os.environ.get("NATURALI_BASE_URL") or DEFAULT_BASE_URL
    secret = token or os.environ.get("NATURALI_TOKEN")
    if not secret:
        raise ValueError("a token is needed: pass token= or set NATURALI_TOKEN")
    with Client(base_url=url, token=secret) as client:
        found = client.knowledge.search_knowledge(
            project_id=project_id, query=query, limit=limit, **search
        )
    return [(hit.content or "", provenance(hit), hit.score) for hit in found.results]


def provenance(hit: Any) -> dict[str, Any]:
    """Where a hit came from, to cite it: its source type, ids, path and page (documents),
    store and title (memories), its score and similarity; ``None`` fields left out."""
    return dict(hit.model_dump(mode="json", exclude={"content"}, exclude_none=True))
