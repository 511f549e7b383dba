"""The knowledge tools of a project: its search (docs/spec/search-api.md) and the reads an
agent needs to act on a hit (a document's passages, the project's documents and stores)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from naturali.catalogue.operation import PROJECT, Operation, Target
from naturali.contracts.resources import (
    DocumentList,
    DocumentOut,
    KnowledgeSearchResponse,
    MemoryStoreList,
    MemoryStoreOut,
    Passage,
    PassageList,
)
from naturali.model import User
from naturali.service import requests as req

if TYPE_CHECKING:
    from naturali.service.container import Services


def _search(
    services: Services, user: User, target: Target, request: req.SearchRequest
) -> KnowledgeSearchResponse:
    # The service built and validated each result: no second validation pass.
    results = services.search.search(user, target.project_id, request)
    return KnowledgeSearchResponse.model_construct(results=results)


def _embed_query(services: Services, target: Target, request: req.SearchRequest) -> object:
    """The query's embedding, begun: the search finds it under way (Search.embed_ahead)."""
    if request.query is None:
        return None
    return services.search.embed_ahead(target.project_id, request.query)


def _documents(
    services: Services, user: User, target: Target, request: req.DocumentsRequest
) -> DocumentList:
    page = services.documents.list(
        user, target.project_id, request.path_prefix, request.cursor, request.limit
    )
    return DocumentList(
        data=[DocumentOut.of(d) for d in page.documents], next_cursor=page.next_cursor
    )


def _passages(
    services: Services, user: User, target: Target, request: req.PassagesRequest
) -> PassageList:
    page = services.documents.passages(
        user,
        target.project_id,
        request.document_id,
        around=request.around,
        start=request.start,
        limit=request.limit,
    )
    passages = [
        Passage(
            chunk_id=c.id, ordinal=c.ordinal, page=c.page, content=c.text, read_by=page.read_by(c)
        )
        for c in page.passages
    ]
    return PassageList(data=passages, start=page.start, total=page.total)


def _stores(
    services: Services, user: User, target: Target, request: req.StoresRequest
) -> MemoryStoreList:
    stores = services.memories.list_stores(user, target.project_id)
    return MemoryStoreList(data=[MemoryStoreOut.of(s) for s in stores])


KNOWLEDGE: tuple[Operation, ...] = (
    Operation(
        "knowledge_search",
        (
            "Find what answers a question across the project's documents and memories, ranked "
            "by meaning and by words. Start here for any question asked in your own words; use "
            "knowledge_grep for exact words in records, knowledge_lookup for a record you can "
            "name, the timeline tools for dates. Returns results best first, each with score "
            "and content: a document passage with path, page, document_id and chunk_id (read "
            "it in context with knowledge_passages), or a memory with memory_id (a record id: "
            "knowledge_record reads it whole). Without a query the call is a fetch: results in "
            "a stable order (documents by path, version, chunk order; then memories by store "
            "name, memory id, chunk order), no similarity_score."
        ),
        req.SearchRequest,
        KnowledgeSearchResponse,
        "read",
        "POST",
        "/v1/projects/{project_id}/knowledge/search",
        _search,
        cli="search",
        sdk="knowledge.search_knowledge",
        tag="knowledge",
        http_name="search_knowledge",  # the search spec's name for it
        ahead=_embed_query,
    ),
    Operation(
        "knowledge_passages",
        (
            "A document's passages in order, or those around one passage: pass a search hit's "
            "document_id and its chunk_id as around to read what comes before and after it "
            "(a table's header, the steps before, the section it belongs to) before you "
            "answer or cite. Returns passages (chunk_id, ordinal, page, content, read_by), "
            "start and total."
        ),
        req.PassagesRequest,
        PassageList,
        "read",
        "GET",
        PROJECT + "/documents/{document_id}/passages",
        _passages,
        cli="passages",
        sdk="documents.passages",
        tag="documents",
        http_name="list_passages",
        path_field="document_id",
        argument="document_id",
    ),
    Operation(
        "knowledge_documents",
        (
            "The project's documents by path, a page at a time (follow next_cursor): what "
            "there is to search, and whether each is ready. Use it to scope knowledge_search "
            "to some documents (document_paths, document_ids) or to see what was uploaded. "
            "Returns id, path, title, status, pages and passages of each."
        ),
        req.DocumentsRequest,
        DocumentList,
        "read",
        "GET",
        PROJECT + "/documents",
        _documents,
        cli="documents",
        sdk="documents.page",
        tag="documents",
        http_name="list_documents",
    ),
    Operation(
        "knowledge_stores",
        (
            "The project's memory stores (id, name, tags): where memories and records live. "
            "Use a store's id to scope knowledge_search (memory_store_ids)."
        ),
        req.StoresRequest,
        MemoryStoreList,
        "read",
        "GET",
        PROJECT + "/memory_stores",
        _stores,
        cli="stores",
        sdk="memory_stores.list",
        tag="memory stores",
        http_name="list_stores",
    ),
)
