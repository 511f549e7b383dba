"""The Python SDK: ``naturali.Client(base_url=…, token=…)``.

>>> client = Client(base_url="http://127.0.0.1:8600", token="nk_…")
>>> hits = client.knowledge.search_knowledge(project_id="proj_…", query="refunds", limit=5)
>>> for hit in hits.results: print(hit.score, hit.source_type, hit.content)
"""

from naturali.client._client import (
    Client,
    NaturaliAPIError,
    NaturaliClientError,
    NaturaliConnectionError,
    NaturaliTimeoutError,
)
from naturali.client._models import (
    Document,
    DocumentKnowledgeResult,
    KnowledgeSearchResponse,
    Memory,
    MemoryKnowledgeResult,
    MemoryStore,
    Project,
)

__all__ = [
    "Client",
    "Document",
    "DocumentKnowledgeResult",
    "KnowledgeSearchResponse",
    "Memory",
    "MemoryKnowledgeResult",
    "MemoryStore",
    "NaturaliAPIError",
    "NaturaliClientError",
    "NaturaliConnectionError",
    "NaturaliTimeoutError",
    "Project",
]
