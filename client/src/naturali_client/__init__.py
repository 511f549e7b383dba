"""The Python SDK: ``naturali_client.Client(base_url=…, token=…)`` (``naturali.Client`` where
the server is installed too). Its own distribution, ``naturali-client``: httpx and pydantic,
nothing of the server; the retrievers for LangChain and LlamaIndex are its extras
(``naturali_client.langchain``, ``naturali_client.llamaindex``).

>>> client = Client(base_url="http://127.0.0.1:8600", token="nk_…")
>>> hits = client.knowledge.search_knowledge(project_id="proj_…", query="refunds", limit=5)
>>> for hit in hits.results: print(hit.score, hit.source_type, hit.content)

The names load on first use (a documented lazy import): a command that only catches the
errors does not pay for httpx and pydantic.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__all__ = [
    "Client",
    "Document",
    "DocumentKnowledgeResult",
    "Explanation",
    "KnowledgeSearchResponse",
    "Memory",
    "MemoryKnowledgeResult",
    "MemoryStore",
    "NaturaliAPIError",
    "NaturaliClientError",
    "NaturaliConnectionError",
    "NaturaliTimeoutError",
    "Passage",
    "PassageList",
    "Project",
    "TermMatch",
    "Token",
]

_HOME = {
    "Client": "_client",
    "NaturaliAPIError": "_errors",
    "NaturaliClientError": "_errors",
    "NaturaliConnectionError": "_errors",
    "NaturaliTimeoutError": "_errors",
}

if TYPE_CHECKING:
    from naturali_client._client import Client
    from naturali_client._errors import (
        NaturaliAPIError,
        NaturaliClientError,
        NaturaliConnectionError,
        NaturaliTimeoutError,
    )
    from naturali_client._models import (
        Document,
        DocumentKnowledgeResult,
        Explanation,
        KnowledgeSearchResponse,
        Memory,
        MemoryKnowledgeResult,
        MemoryStore,
        Passage,
        PassageList,
        Project,
        TermMatch,
        Token,
    )


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'naturali_client' has no attribute {name!r}")
    module = importlib.import_module(f"naturali_client.{_HOME.get(name, '_models')}")
    return getattr(module, name)
