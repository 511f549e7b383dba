"""The operation catalogue: every knowledge operation declared once — its name, request
model, result model, required role, where it lives over HTTP, and the service method that
runs it. The HTTP routes (api/operation_routes.py), the MCP tools and the CLI's ``knowledge``
commands are generated from it, with its descriptions; the SDK is checked against it
(tests/test_catalogue.py).

The catalogue covers the records tools of a memory store (docs/spec/retrieval-and-dates.md)
and the project's knowledge search (docs/spec/search-api.md); the CRUD of projects, members,
documents, stores and memories is listed in ``RESOURCES`` for the same checks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from naturali.contracts import records as results
from naturali.contracts.resources import KnowledgeSearchResponse
from naturali.model import User
from naturali.service import requests as req

if TYPE_CHECKING:  # the CLI loads the catalogue for its commands without the service stack
    from naturali.service.container import Services

Role = Literal["any", "read", "write", "owner"]  # "any": every signed-in user
STORE_BASE = "/v1/projects/{project_id}/memory_stores/{memory_store_id}/knowledge"


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
    ahead: Callable[[Services, Any], object] | None = None


def _search(
    services: Services, user: User, target: Target, request: req.SearchRequest
) -> KnowledgeSearchResponse:
    # The service built and validated each result: no second validation pass.
    results = services.search.search(user, target.project_id, request)
    return KnowledgeSearchResponse.model_construct(results=results)


def _embed_query(services: Services, request: req.SearchRequest) -> object:
    """The query's embedding, begun: the search finds it under way (Search.embed_ahead)."""
    return services.search.embed_ahead(request.query) if request.query is not None else None


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
            "One query across a project's documents and memories, ranked (semantic and "
            "keyword), with provenance. Without a query the call is a fetch: results in a "
            "stable order (documents by path, version, chunk order; then memories by store "
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
        "knowledge_grep",
        (
            "Keyword search (BM25 over title, aliases, body). Every token must match unless mode is"
            ' "any"; "phrase" wants them in order. Superseded wording returns the current '
            'record with "via".'
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
            "Exact id (case-sensitive), full title or alias (never fuzzy): status found, ambiguous "
            "or missing."
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
            "The exhaustive inventory of available records, by id (ranked search never proves an "
            "inventory complete)."
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
        "One record whole: front matter, body, revision, sha256 and all evidence.",
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
            "Dated records; kind is the exact record.type (decision, event, meeting). group "
            '"source" with an entity gives one row per dated source.'
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
            "One day, or its Monday–Sunday week, in an IANA time zone (UTC by default); kind is the"
            " exact record.type."
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
        "What happened in an occurrence-time range, oldest first; kind is the exact record.type.",
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
        "The latest dated context for an entity at or before a time (default now).",
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
            "Create a record (record: kind, type, title, aliases, tags, body, …), or update one: "
            "give its id with the expectedRevision and expectedHash you read."
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
        "Supersede a claim or relationship with a corrected replacement.",
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
        "Withdraw a record with a reason: it leaves every query and stays in history.",
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
        "Finish interrupted writes and retry pending Git commits.",
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
        "A write's publication receipt: indexed, git.state, git.commit.",
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
        "A record's revisions with their receipts.",
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


@dataclass(frozen=True)
class Resource:
    """A CRUD operation of the documents-and-memories API: its route and its SDK method."""

    name: str
    method: str
    path: str
    role: Role
    sdk: str


_P = "/v1/projects/{project_id}"
RESOURCES: tuple[Resource, ...] = (
    Resource("list_projects", "GET", "/v1/projects", "any", "projects.list"),
    Resource("create_project", "POST", "/v1/projects", "any", "projects.create"),
    Resource("list_tokens", "GET", "/v1/tokens", "any", "tokens.list"),
    Resource("create_token", "POST", "/v1/tokens", "any", "tokens.create"),
    Resource("revoke_token", "DELETE", "/v1/tokens/{token_id}", "any", "tokens.revoke"),
    Resource("get_project", "GET", _P, "read", "projects.get"),
    Resource("project_usage", "GET", _P + "/usage", "read", "projects.usage"),
    Resource("project_overview", "GET", _P + "/overview", "read", "projects.overview"),
    Resource("ingest_jobs", "GET", _P + "/ingest_jobs", "read", "projects.ingest_jobs"),
    Resource("document_folders", "GET", _P + "/documents/folders", "read", "documents.folders"),
    Resource("project_audit", "GET", _P + "/audit", "owner", "projects.audit"),
    Resource("list_members", "GET", _P + "/members", "read", "projects.list_members"),
    Resource("put_member", "PUT", _P + "/members/{user_id}", "owner", "projects.put_member"),
    Resource(
        "remove_member", "DELETE", _P + "/members/{user_id}", "owner", "projects.remove_member"
    ),
    Resource("create_document", "POST", _P + "/documents", "write", "documents.create_text"),
    Resource("list_documents", "GET", _P + "/documents", "read", "documents.list"),
    Resource("get_document", "GET", _P + "/documents/{document_id}", "read", "documents.get"),
    Resource(
        "list_passages",
        "GET",
        _P + "/documents/{document_id}/passages",
        "read",
        "documents.passages",
    ),
    Resource(
        "update_document", "PUT", _P + "/documents/{document_id}", "write", "documents.replace"
    ),
    Resource(
        "delete_document", "DELETE", _P + "/documents/{document_id}", "write", "documents.delete"
    ),
    Resource("create_store", "POST", _P + "/memory_stores", "write", "memory_stores.create"),
    Resource("list_stores", "GET", _P + "/memory_stores", "read", "memory_stores.list"),
    Resource(
        "get_store", "GET", _P + "/memory_stores/{memory_store_id}", "read", "memory_stores.get"
    ),
    Resource(
        "update_store",
        "PATCH",
        _P + "/memory_stores/{memory_store_id}",
        "write",
        "memory_stores.update",
    ),
    Resource(
        "delete_store",
        "DELETE",
        _P + "/memory_stores/{memory_store_id}",
        "owner",
        "memory_stores.delete",
    ),
    Resource(
        "create_memory",
        "POST",
        _P + "/memory_stores/{memory_store_id}/memories",
        "write",
        "memory_stores.create_memory",
    ),
    Resource(
        "list_memories",
        "GET",
        _P + "/memory_stores/{memory_store_id}/memories",
        "read",
        "memory_stores.list_memories",
    ),
    Resource(
        "get_memory",
        "GET",
        _P + "/memory_stores/{memory_store_id}/memories/{memory_id}",
        "read",
        "memory_stores.get_memory",
    ),
    Resource(
        "update_memory",
        "PATCH",
        _P + "/memory_stores/{memory_store_id}/memories/{memory_id}",
        "write",
        "memory_stores.update_memory",
    ),
    Resource(
        "delete_memory",
        "DELETE",
        _P + "/memory_stores/{memory_store_id}/memories/{memory_id}",
        "write",
        "memory_stores.delete_memory",
    ),
    Resource("create_source", "POST", _P + "/sources", "write", "sources.create"),
    Resource("list_sources", "GET", _P + "/sources", "read", "sources.list"),
    Resource("get_source", "GET", _P + "/sources/{source_id}", "read", "sources.get"),
    Resource("update_source", "PATCH", _P + "/sources/{source_id}", "write", "sources.update"),
    Resource("delete_source", "DELETE", _P + "/sources/{source_id}", "write", "sources.delete"),
    Resource("sync_source", "POST", _P + "/sources/{source_id}/sync", "write", "sources.sync"),
)
