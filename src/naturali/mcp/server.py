"""The MCP tools of one memory store, registered from the operation catalogue: each tool's
parameters are its request model's fields (the spec's camelCase names), its description the
model's docstring. Agent tools get short list rows; writes and reads otherwise return the
API's responses."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field, ValidationError

from naturali.catalogue import BY_NAME, TOOLS
from naturali.catalogue.operation import Operation
from naturali.contracts.records import CompleteHit, list_row
from naturali.mcp.backend import Backend, BackendError, explain
from naturali.service.invalid_input import invalid_request
from naturali.service.memory.record_requests import RecordAt

INSTRUCTIONS = (
    "A project's documents and one memory store's knowledge records. Ask knowledge_search "
    "first (by meaning, over documents and memories); read a document hit in context with "
    "knowledge_passages. In the store: knowledge_grep for exact words, knowledge_lookup for an "
    "id, title or alias, knowledge_records for a complete list, the timeline and chronicle "
    "tools for dates. Save what you learn with knowledge_save (name other records by id), "
    "replace a claim that changed with knowledge_correct. Writes take a requestId; updates "
    "need the expectedRevision and expectedHash you last read. Cite a hit by its path and page "
    "(documents) or its citation (records)."
)
RECORD_DATES = ("occurred_at", "due_at", "valid_until", "recorded_at", "updated_at")
DOCUMENT_FIELDS = ("id", "path", "title", "status", "page_count", "chunk_count", "updated_at")
SEARCH_FIELDS = (
    "source_type",
    "score",
    "similarity_score",
    "path",
    "page",
    "title",
    "document_id",
    "chunk_id",
    "memory_id",
    "memory_store_id",
    "memory_store_name",
)


def _rows(response: dict[str, Any], backend: Backend) -> dict[str, Any]:
    """Agent tools get list rows: short, with what is needed to cite and page."""
    out = {k: v for k, v in response.items() if k not in ("hits", "coverage", "freshness")}
    out["hits"] = [list_row(CompleteHit.model_validate(h)).wire() for h in response.get("hits", [])]
    coverage = response.get("coverage") or {}
    if coverage.get("complete") is False:
        out["invalidFiles"] = len(coverage.get("issues", []))
    return out


def _inventory(response: dict[str, Any], backend: Backend) -> dict[str, Any]:
    return {k: v for k, v in response.items() if k != "freshness"}


def _search(response: dict[str, Any], backend: Backend) -> dict[str, Any]:
    results = []
    for result in response["results"]:
        row = _short(result)
        if result["source_type"] == "memory":
            row |= _record_facts(backend, result["memory_store_id"], result["memory_id"])
        results.append(row)
    return {"results": results}


def _short(result: dict[str, Any]) -> dict[str, Any]:
    out = {k: result[k] for k in SEARCH_FIELDS if k in result}
    out["content"] = (result.get("content") or "")[:600]
    if result.get("explain") is not None:  # asked for: why it ranked there
        out["explain"] = result["explain"]
    return out


def _record_facts(backend: Backend, store_id: str, record_id: str) -> dict[str, Any]:
    """What a memory hit is — its record's title, kind, type, lifecycle, dates and what to
    cite — which the search's result (the spec's shape) does not carry. A record withdrawn
    since the search was answered is left as the search gave it."""
    try:
        record = backend.call(
            BY_NAME["knowledge_record"], RecordAt.model_validate({"id": record_id}), store_id
        )
    except BackendError:
        return {}
    front = record.get("frontMatter") or {}
    facts: dict[str, Any] = {
        k: record[k] for k in ("title", "kind", "type", "lifecycle") if k in record
    }
    facts |= {k: str(front[k]) for k in RECORD_DATES if front.get(k) is not None}
    facts["citation"] = record.get("citation")
    return facts


def _documents(response: dict[str, Any], backend: Backend) -> dict[str, Any]:
    rows = [{k: d.get(k) for k in DOCUMENT_FIELDS} for d in response["data"]]
    return {"data": rows, "next_cursor": response.get("next_cursor")}


def _whole(response: dict[str, Any], backend: Backend) -> dict[str, Any]:
    return response


# How a tool shows an operation's response to an agent, where it differs from the API's.
VIEWS: dict[str, Callable[[dict[str, Any], Backend], dict[str, Any]]] = {
    "knowledge_grep": _rows,
    "knowledge_lookup": _rows,
    "knowledge_records": _inventory,
    "knowledge_search": _search,
    "knowledge_documents": _documents,
}


class _Server(MCPServer):
    """The SDK checks a tool's arguments against its signature before the tool runs, and
    says what failed in pydantic's words; this says it in ours, as HTTP and the CLI do."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            operation = next((o for o in TOOLS if o.name == name), None)
            if not isinstance(cause, ValidationError) or operation is None:
                raise
            message = explain(invalid_request(cause.errors()), operation)
            raise ToolError(f"Error executing tool {name}: {message}") from cause


LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]


def build(backend: Backend, name: str = "naturali", log_level: LogLevel = "WARNING") -> MCPServer:
    """An MCP server with one tool per catalogue operation. Quiet by default: the SDK's
    level is the whole process's, and at INFO every HTTP call to a server is a line on
    stderr."""
    server: MCPServer = _Server(name, instructions=_instructions(backend), log_level=log_level)
    for operation in TOOLS:
        server.add_tool(_tool(operation, backend), name=operation.name, description=operation.doc)
    return server


def _instructions(backend: Backend) -> str:
    """The instructions, with what the project's model reads: an English model's project is
    asked in English; a multilingual one's in any language."""
    model = backend.model()
    if model is None:
        return INSTRUCTIONS
    reads = "questions in any of 100 languages" if "multilingual" in model else "English"
    return f"{INSTRUCTIONS} This project is embedded with {model}: ask in {reads}."


def _tool(operation: Operation, backend: Backend) -> Callable[..., dict[str, Any]]:
    """A function whose signature is the operation's request fields, so the SDK derives the
    tool's input schema from the request model itself."""
    view = VIEWS.get(operation.name, _whole)

    def tool(**params: Any) -> dict[str, Any]:
        given = {k: v for k, v in params.items() if v is not None}
        try:
            request = operation.request.model_validate(given)
            return view(backend.call(operation, request), backend)
        except ValidationError as exc:
            raise ToolError(explain(invalid_request(exc.errors()), operation)) from exc
        except BackendError as exc:
            raise ToolError(str(exc)) from exc

    tool.__name__ = operation.name
    tool.__signature__ = _signature(operation)  # type: ignore[attr-defined]
    return tool


def _signature(operation: Operation) -> inspect.Signature:
    fields = operation.request.model_fields
    required = [n for n, f in fields.items() if f.is_required()]
    optional = [n for n, f in fields.items() if not f.is_required()]
    parameters = []
    for field_name in required + optional:
        info = fields[field_name]
        described = Field(description=info.description, examples=info.examples)
        annotation: Any = Annotated[info.annotation, *info.metadata, described]
        default = inspect.Parameter.empty if info.is_required() else info.get_default()
        parameters.append(
            inspect.Parameter(
                field_name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
            )
        )
    return inspect.Signature(parameters, return_annotation=dict[str, Any])
