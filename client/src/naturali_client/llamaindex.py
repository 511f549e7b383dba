"""``NaturaliRetriever`` for LlamaIndex: a ``BaseRetriever`` whose nodes are a naturali
project's search hits, scored, with their provenance in ``metadata`` (``pip install
'naturali-client[llamaindex]'``).

    from naturali_client.llamaindex import NaturaliRetriever
    retriever = NaturaliRetriever(project_id="proj_…", limit=5)
    retriever.retrieve("how long do refunds take?")
"""

from __future__ import annotations

import asyncio
from typing import Any

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from naturali_client._hits import hits


class NaturaliRetriever(BaseRetriever):
    """A naturali project's hybrid search as a LlamaIndex retriever; ``search`` holds any
    other search_knowledge parameter (document_paths, tags, rerank…)."""

    def __init__(
        self,
        project_id: str,
        *,
        base_url: str | None = None,
        token: str | None = None,
        limit: int = 10,
        search: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.project_id, self.base_url, self.token = project_id, base_url, token
        self.limit, self.search = limit, dict(search or {})

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        found = hits(
            self.project_id, query_bundle.query_str, self.limit, self.search, self.base_url,
            self.token,
        )  # fmt: skip
        return [_node(text, meta, score) for text, meta, score in found]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return await asyncio.to_thread(self._retrieve, query_bundle)


def _node(text: str, metadata: dict[str, Any], score: float) -> NodeWithScore:
    # The node's id is the hit's chunk or memory: the same passage is the same node.
    node_id = str(metadata.get("chunk_id") or metadata.get("memory_id") or "")
    node = TextNode(text=text, metadata=metadata, **({"id_": node_id} if node_id else {}))
    return NodeWithScore(node=node, score=score)
