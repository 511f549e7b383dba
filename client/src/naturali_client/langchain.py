"""``NaturaliRetriever`` for LangChain: a ``BaseRetriever`` whose documents are a naturali
project's search hits, with their provenance in ``metadata`` (``pip install
'naturali-client[langchain]'``).

    from naturali_client.langchain import NaturaliRetriever
    retriever = NaturaliRetriever(project_id="proj_…", limit=5, search={"rerank": True})
    retriever.invoke("how long do refunds take?")
"""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import Field

from naturali_client._hits import hits


class NaturaliRetriever(BaseRetriever):
    """A naturali project's hybrid search as a LangChain retriever."""

    project_id: str
    base_url: str | None = Field(None, description="Default: NATURALI_BASE_URL.")
    token: str | None = Field(None, description="Default: NATURALI_TOKEN.")
    limit: int = Field(10, ge=1, le=100)
    search: dict[str, Any] = Field(
        default_factory=dict,
        description="Any other search_knowledge parameter: document_paths, document_ids, "
        "memory_store_ids, tags, include_documents, include_memories, min_similarity, "
        "rerank, explain.",
    )

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        found = hits(self.project_id, query, self.limit, self.search, self.base_url, self.token)
        return [Document(page_content=text, metadata=meta) for text, meta, _ in found]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        found = await asyncio.to_thread(
            hits, self.project_id, query, self.limit, self.search, self.base_url, self.token
        )
        return [Document(page_content=text, metadata=meta) for text, meta, _ in found]
