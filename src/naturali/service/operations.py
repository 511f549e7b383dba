"""The operation catalogue: every knowledge operation declared once — its name, request
model, result model, required role, where it lives over HTTP, and the service method that
runs it. The HTTP routes (api/operation_routes.py), the MCP tools and the CLI's ``knowledge``
commands are generated from it, with its descriptions; the SDK is checked against it
(tests/test_catalogue.py).

The catalogue covers the records tools of a memory store (docs/spec/retrieval-and-dates.md),
the project's knowledge search (docs/spec/search-api.md) and the reads an agent needs to act on
a hit (a document's passages, the project's documents and stores); the rest of the CRUD of
projects, members, documents, stores and memories is listed in ``service/resources.py`` for
the same checks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from naturali.contracts import records as results
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

if TYPE_CHECKING:  # the CLI loads the catalogue for its commands without the service stack
    from naturali.service.container import Services

Role = Literal["any", "read", "write", "owner"]  # "any": every signed-in user
PROJECT = "/v1/projects/{project_id}"
STORE_BASE = PROJECT + "/memory_stores/{memory_store_id}/knowledge"


@dataclass(frozen=True)
class Target:
    """Whose data an operation acts on: a project, and for the records tools its store."""

    project_id: str
    store_id: str


Runner = Callable[["Services", User, Target, Any], BaseModel]


@dataclass(frozen=True)
class Operation:
    name: str
    doc: str  # what the operation does, for agents and for --help
    request: type[req.Strict]
    result: type[BaseModel]
    role: Role
    method: Literal["GET", "POST"]
    path: str  # absolute, with {project_id}, {memory_store_id} and maybe one field's slot
    run: Runner
    cli: str  # the ``naturali knowledge`` command
    sdk: str  # the Python SDK method, as ``group.method``
    tag: str = "records"  # its group in the OpenAPI schema and the TypeScript SDK
    http_name: str | None = None  # its OpenAPI operation id, when not ``name``
    path_field: str | None = None  # the request field that fills the path's last slot
    # The field the CLI takes as its positional argument: what the command is about (a query,
    # an id, an entity), never a date — dates are options everywhere (--since, --date).
    argument: str | None = None
    # Begun as a request arrives, before the operation waits for one of the API's search
    # lanes (api/search_lanes.py), so the wait overlaps it; None: no lane, the thread pool.
    ahead: Callable[[Services, Target, Any], object] | None = None


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


def _store(
    method: Callable[[Services], Callable[[User, str, str, Any], BaseModel]],
) -> Runner:
    """A store operation's runner: the service method called with the request."""

    def run(services: Services, user: User, target: Target, request: Any) -> BaseModel:
        return method(services)(user, target.project_id, target.store_id, request)

    return run


def _store_by(
    method: Callable[[Services], Callable[[User, str, str, str], BaseModel]], field: str
) -> Runner:
    """A store operation whose service method takes one field of the request."""

    def run(services: Services, user: User, target: Target, request: Any) -> BaseModel:
        return method(services)(user, target.project_id, target.store_id, getattr(request, field))

    return run


def _record_at(services: Services, user: User, target: Target, request: Any) -> BaseModel:
    return services.records.record(
        user, target.project_id, target.store_id, request.id, request.asOf
    )


def _resume(services: Services, user: User, target: Target, request: Any) -> BaseModel:
    return services.mutations.resume(user, target.project_id, target.store_id)


OPERATIONS: tuple[Operation, ...] = (
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
    Operation(
        "knowledge_grep",
        (
            "Records of this store that contain given words (BM25 over title, aliases, body). "
            "Use it for names, codes and exact terms; knowledge_search finds by meaning across "
            'documents too. Every token must match unless mode is "any"; "phrase" wants them '
            "in order. Returns hits best first (id, title, kind, type, snippet, citation); "
            'superseded wording returns the current record with "via".'
        ),
        req.GrepRequest,
        results.GrepResult,
        "read",
        "POST",
        STORE_BASE + "/grep",
        _store(lambda services: services.records.grep),
        cli="grep",
        sdk="records.grep",
        argument="query",
    ),
    Operation(
        "knowledge_lookup",
        (
            "The record with this exact id (case-sensitive), full title or alias, never fuzzy. "
            "Use it to resolve a name to an id before naming it in a save (entities, from, to); "
            "knowledge_grep when you know only some words. Returns status found, ambiguous or "
            "missing, with the matching records."
        ),
        req.LookupRequest,
        results.LookupResult,
        "read",
        "POST",
        STORE_BASE + "/lookup",
        _store(lambda services: services.records.lookup),
        cli="lookup",
        sdk="records.lookup",
        argument="query",
    ),
    Operation(
        "knowledge_records",
        (
            "Every available record, by id, a page at a time, optionally of one kind, type or tag. "
            'Use it to answer "all the …" or "how many …": ranked search never proves a list '
            "complete. Returns rows (id, title, kind, type, summary) and total."
        ),
        req.RecordsRequest,
        results.RecordsResult,
        "read",
        "POST",
        STORE_BASE + "/records",
        _store(lambda services: services.records.inventory),
        cli="records",
        sdk="records.records",
    ),
    Operation(
        "knowledge_record",
        (
            "One record whole, by id: front matter, body, revision, sha256 and all evidence. Use "
            "it to read a hit before citing or updating it (a save takes its revision and sha256 "
            "as expectedRevision and expectedHash)."
        ),
        req.RecordAt,
        results.RecordResult,
        "read",
        "GET",
        STORE_BASE + "/records/{record_id}",
        _record_at,
        cli="record",
        sdk="records.record",
        path_field="id",
        argument="id",
    ),
    Operation(
        "knowledge_timeline",
        (
            "Dated records in date order, optionally about one entity, of one type or in a range. "
            'Use it for "what happened with X" and "when"; chronicle_day for one day or week. '
            'kind is the exact record.type (decision, event, meeting). group "source" with an '
            "entity gives one row per dated source. Returns rows with their date and citation."
        ),
        req.TimelineRequest,
        results.TimelineResult,
        "read",
        "POST",
        STORE_BASE + "/timeline",
        _store(lambda services: services.dates.timeline),
        cli="timeline",
        sdk="records.timeline",
        tag="dates",
    ),
    Operation(
        "knowledge_chronicle_day",
        (
            "What is dated on one day, or its Monday–Sunday week, in an IANA time zone (UTC by "
            "default); kind is the exact record.type. Returns rows in time order."
        ),
        req.ChronicleDayRequest,
        results.TimelineResult,
        "read",
        "POST",
        STORE_BASE + "/chronicle/day",
        _store(lambda services: services.dates.chronicle_day),
        cli="chronicle-day",
        sdk="records.chronicle_day",
        tag="dates",
    ),
    Operation(
        "knowledge_chronicle_since",
        (
            "What happened in an occurrence-time range, oldest first (not what was recorded "
            "recently); kind is the exact record.type. Returns rows in time order."
        ),
        req.ChronicleSinceRequest,
        results.TimelineResult,
        "read",
        "POST",
        STORE_BASE + "/chronicle/since",
        _store(lambda services: services.dates.chronicle_since),
        cli="chronicle-since",
        sdk="records.chronicle_since",
        tag="dates",
    ),
    Operation(
        "knowledge_chronicle_last_seen",
        (
            "The latest dated record about an entity at or before a time (default now): "
            '"when did we last hear of X". Returns lastSeen, or null.'
        ),
        req.LastSeenRequest,
        results.LastSeenResult,
        "read",
        "POST",
        STORE_BASE + "/chronicle/last_seen",
        _store(lambda services: services.dates.last_seen),
        cli="last-seen",
        sdk="records.last_seen",
        tag="dates",
        argument="entity",
    ),
    Operation(
        "knowledge_save",
        (
            "Write a record: a page (person, project, meeting …), a claim (fact, decision, "
            "commitment …) or a relationship. To create, give record.kind and record.type; to "
            "update, the record's id with the expectedRevision and expectedHash you last read "
            "and only the fields that change. Name other records by id (knowledge_lookup finds "
            "one), give dates you know as YYYY-MM-DD in occurred_at/due_at and leave out those "
            "you do not. requestId makes a retry safe. To replace a claim that was wrong or has "
            "changed, use knowledge_correct. Returns the receipt: the record's id, revision, "
            "sha256, and warnings for fields naturali does not read."
        ),
        req.SaveRequest,
        results.Receipt,
        "write",
        "POST",
        STORE_BASE + "/save",
        _store(lambda services: services.mutations.save),
        cli="save",
        sdk="records.save",
    ),
    Operation(
        "knowledge_correct",
        (
            "Supersede a claim or relationship with a replacement (a decision reversed, a fact "
            "changed): the old one stays in history, marked superseded, and searches find the "
            "new one. Give the id, the expectedRevision and expectedHash you read, the "
            "replacement record and a reason. Returns the receipt of both records."
        ),
        req.CorrectRequest,
        results.Receipt,
        "write",
        "POST",
        STORE_BASE + "/correct",
        _store(lambda services: services.mutations.correct),
        cli="correct",
        sdk="records.correct",
        argument="id",
    ),
    Operation(
        "knowledge_withdraw",
        (
            "Withdraw a record that should never have been written, with a reason: it leaves "
            "every query and stays in history. To record a change of mind, use "
            "knowledge_correct. Returns the receipt."
        ),
        req.WithdrawRequest,
        results.Receipt,
        "write",
        "POST",
        STORE_BASE + "/withdraw",
        _store(lambda services: services.mutations.withdraw),
        cli="withdraw",
        sdk="records.withdraw",
        argument="id",
    ),
    Operation(
        "knowledge_resume",
        "Finish interrupted writes and retry pending Git commits; returns what it completed.",
        req.ResumeRequest,
        results.ResumeResult,
        "write",
        "POST",
        STORE_BASE + "/resume",
        _resume,
        cli="resume",
        sdk="records.resume",
    ),
    Operation(
        "knowledge_mutation",
        (
            "A write's receipt by its requestId: whether it is indexed (searchable) and its Git "
            "commit."
        ),
        req.MutationRef,
        results.Receipt,
        "read",
        "GET",
        STORE_BASE + "/mutations/{requestId}",
        _store_by(lambda services: services.mutations.mutation, "requestId"),
        cli="mutation",
        sdk="records.mutation",
        path_field="requestId",
        argument="requestId",
    ),
    Operation(
        "knowledge_history",
        "A record's revisions, oldest first, each with its receipt: how it came to say this.",
        req.RecordRef,
        results.HistoryResult,
        "read",
        "GET",
        STORE_BASE + "/records/{record_id}/history",
        _store_by(lambda services: services.mutations.history, "id"),
        cli="history",
        sdk="records.history",
        path_field="id",
        argument="id",
    ),
)

BY_NAME = {op.name: op for op in OPERATIONS}
