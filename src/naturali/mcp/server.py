"""The MCP tools, bound to one memory store: the records tools with the spec's camelCase
parameters, list rows for agents, tool errors that say what to fix, the write tools, and
``knowledge_search`` (the hybrid search of the same project)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from naturali.mcp.backend import Backend, BackendError
from naturali.retrieval.citations import list_row

Query = Annotated[
    str, Field(min_length=1, max_length=500, description="1–64 word tokens within 500 characters")
]
Limit = Annotated[int, Field(ge=1, le=50, description="1–50 results (default 20)")]
Offset = Annotated[int, Field(ge=0, le=500, description="0–500; follow nextOffset")]
Lifecycle = Literal["active", "superseded", "all"]
Kind = Literal["page", "claim", "relationship"]
DateBound = Annotated[
    str,
    Field(
        max_length=64,
        description=(
            "YYYY-MM-DD or an ISO timestamp with seconds and a zone, e.g. 2026-11-03T10:00:00Z"
        ),
    ),
]
TimeField = Literal["occurred_at", "recorded_at", "updated_at", "due_at"]
Snapshot = Annotated[
    str,
    Field(max_length=64, description="The snapshot of the first page; if it changed, restart"),
]
RequestId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=128,
        pattern=r"^[A-Za-z0-9._:-]+$",
        description="Your id for this write; retry with the same id",
    ),
]
Hash = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$", description="sha256 you last read")]


def _clean(**params: Any) -> dict[str, Any]:
    return {k: v for k, v in params.items() if v is not None}


def _rows(response: dict[str, Any], key: str = "hits") -> dict[str, Any]:
    """Agent tools get list rows: short, with what is needed to cite and page."""
    out = {k: v for k, v in response.items() if k not in (key, "coverage", "freshness")}
    out[key] = [list_row(h) for h in response.get(key, [])]
    coverage = response.get("coverage") or {}
    if coverage.get("complete") is False:
        out["invalidFiles"] = len(coverage.get("issues", []))
    return out


def build(backend: Backend, name: str = "naturali") -> MCPServer:
    server: MCPServer = MCPServer(
        name,
        instructions=(
            "Knowledge records of one memory store. Use knowledge_grep for keywords, "
            "knowledge_lookup for an exact id/title/alias, knowledge_records for a complete "
            "inventory, the timeline/chronicle tools for dates, knowledge_search for semantic "
            "search over the project's documents and memories. Writes take a requestId; updates "
            "need the expectedRevision and expectedHash you last read."
        ),
    )

    def call(tool: str, **params: Any) -> dict[str, Any]:
        try:
            return backend.call(tool, _clean(**params))
        except BackendError as exc:
            raise ToolError(str(exc)) from exc

    @server.tool()
    def knowledge_grep(
        query: Query,
        mode: Literal["all", "any", "phrase"] = "all",
        kind: Kind | None = None,
        type: str | None = None,  # noqa: A002
        tag: str | None = None,
        lifecycle: Lifecycle = "active",
        limit: Limit = 20,
        offset: Offset = 0,
        timeField: TimeField | None = None,  # noqa: N803
        since: DateBound | None = None,
        until: DateBound | None = None,
        snapshot: Snapshot | None = None,
    ) -> dict[str, Any]:
        """Keyword search (BM25 over title, aliases, body). Every token must match unless
        mode is "any"; "phrase" wants them in order. Superseded wording returns the current
        record with "via"."""
        return _rows(
            call(
                "knowledge_grep",
                query=query,
                mode=mode,
                kind=kind,
                type=type,
                tag=tag,
                lifecycle=lifecycle,
                limit=limit,
                offset=offset,
                timeField=timeField,
                since=since,
                until=until,
                snapshot=snapshot,
            )
        )

    @server.tool()
    def knowledge_lookup(
        query: Annotated[str, Field(min_length=1, max_length=200)],
        kind: Kind | None = None,
        type: str | None = None,  # noqa: A002
        tag: str | None = None,
        lifecycle: Lifecycle = "active",
    ) -> dict[str, Any]:
        """Exact id (case-sensitive), full title or alias (never fuzzy): status found,
        ambiguous or missing."""
        return _rows(
            call(
                "knowledge_lookup", query=query, kind=kind, type=type, tag=tag, lifecycle=lifecycle
            )
        )

    @server.tool()
    def knowledge_records(
        kind: Kind | None = None,
        type: str | None = None,  # noqa: A002
        tag: str | None = None,
        lifecycle: Lifecycle = "active",
        limit: Annotated[int, Field(ge=1, le=500)] = 100,
        offset: Annotated[int, Field(ge=0)] = 0,
        snapshot: Snapshot | None = None,
    ) -> dict[str, Any]:
        """The exhaustive inventory of available records, by id (ranked search never proves
        an inventory complete)."""
        response = call(
            "knowledge_records",
            kind=kind,
            type=type,
            tag=tag,
            lifecycle=lifecycle,
            limit=limit,
            offset=offset,
            snapshot=snapshot,
        )
        response.pop("freshness", None)
        return response

    @server.tool()
    def knowledge_record(
        id: Annotated[str, Field(min_length=1, max_length=200)],  # noqa: A002
    ) -> dict[str, Any]:
        """One record whole: front matter, body, revision, sha256 and all evidence."""
        return call("knowledge_record", id=id)

    @server.tool()
    def knowledge_timeline(
        entity: str | None = None,
        kind: str | None = None,
        timeField: TimeField = "occurred_at",  # noqa: N803
        since: DateBound | None = None,
        until: DateBound | None = None,
        order: Literal["asc", "desc"] = "asc",
        eligibility: Literal["active", "include_inactive"] = "active",
        includeSources: bool = False,  # noqa: N803
        group: Literal["source"] | None = None,
        limit: Annotated[int, Field(ge=1, le=200)] = 50,
        offset: Annotated[int, Field(ge=0, le=10_000)] = 0,
        snapshot: Snapshot | None = None,
    ) -> dict[str, Any]:
        """Dated records; kind is the exact record.type (decision, event, meeting). group
        "source" with an entity gives one row per dated source."""
        return call(
            "knowledge_timeline",
            entity=entity,
            kind=kind,
            timeField=timeField,
            since=since,
            until=until,
            order=order,
            eligibility=eligibility,
            includeSources=includeSources,
            group=group,
            limit=limit,
            offset=offset,
            snapshot=snapshot,
        )

    @server.tool()
    def knowledge_chronicle_day(
        date: Annotated[str, Field(description="YYYY-MM-DD")],
        week: bool = False,
        timeZone: str = "UTC",  # noqa: N803
        kind: str | None = None,
        limit: Annotated[int, Field(ge=1, le=500)] = 100,
        offset: Annotated[int, Field(ge=0, le=10_000)] = 0,
        snapshot: Snapshot | None = None,
    ) -> dict[str, Any]:
        """One day, or its Monday–Sunday week, in an IANA time zone (UTC by default); kind
        is the exact record.type."""
        return call(
            "knowledge_chronicle_day",
            date=date,
            week=week,
            timeZone=timeZone,
            kind=kind,
            limit=limit,
            offset=offset,
            snapshot=snapshot,
        )

    @server.tool()
    def knowledge_chronicle_since(
        since: DateBound,
        until: DateBound | None = None,
        entity: str | None = None,
        kind: str | None = None,
        limit: Annotated[int, Field(ge=1, le=200)] = 50,
        offset: Annotated[int, Field(ge=0, le=10_000)] = 0,
        snapshot: Snapshot | None = None,
    ) -> dict[str, Any]:
        """What happened in an occurrence-time range, oldest first; kind is the exact
        record.type."""
        return call(
            "knowledge_chronicle_since",
            since=since,
            until=until,
            entity=entity,
            kind=kind,
            limit=limit,
            offset=offset,
            snapshot=snapshot,
        )

    @server.tool()
    def knowledge_chronicle_last_seen(
        entity: str,
        occurredOnOrBefore: DateBound | None = None,  # noqa: N803
    ) -> dict[str, Any]:
        """The latest dated context for an entity at or before a time (default now)."""
        return call(
            "knowledge_chronicle_last_seen", entity=entity, occurredOnOrBefore=occurredOnOrBefore
        )

    @server.tool()
    def knowledge_mutation(requestId: RequestId) -> dict[str, Any]:  # noqa: N803
        """A write's publication receipt: indexed, git.state, git.commit."""
        return call("knowledge_mutation", requestId=requestId)

    @server.tool()
    def knowledge_history(
        id: Annotated[str, Field(min_length=1, max_length=200)],  # noqa: A002
    ) -> dict[str, Any]:
        """A record's revisions with their receipts."""
        return call("knowledge_history", id=id)

    @server.tool()
    def knowledge_save(
        requestId: RequestId,
        record: dict[str, Any],  # noqa: N803
        id: str | None = None,
        expectedRevision: int | None = None,  # noqa: A002, N803
        expectedHash: Hash | None = None,
    ) -> dict[str, Any]:  # noqa: N803
        """Create a record (record: kind, type, title, aliases, tags, body, …), or update one:
        give its id with the expectedRevision and expectedHash you read."""
        return call(
            "knowledge_save",
            requestId=requestId,
            record=record,
            id=id,
            expectedRevision=expectedRevision,
            expectedHash=expectedHash,
        )

    @server.tool()
    def knowledge_correct(
        requestId: RequestId,
        id: str,
        expectedRevision: int,  # noqa: A002, N803
        expectedHash: Hash,
        replacement: dict[str, Any],  # noqa: N803
        reason: str,
    ) -> dict[str, Any]:
        """Supersede a claim or relationship with a corrected replacement."""
        return call(
            "knowledge_correct",
            requestId=requestId,
            id=id,
            expectedRevision=expectedRevision,
            expectedHash=expectedHash,
            replacement=replacement,
            reason=reason,
        )

    @server.tool()
    def knowledge_withdraw(
        requestId: RequestId,
        id: str,
        reason: str,  # noqa: A002, N803
        expectedRevision: int | None = None,  # noqa: N803
        expectedHash: Hash | None = None,
    ) -> dict[str, Any]:  # noqa: N803
        """Withdraw a record with a reason: it leaves every query and stays in history."""
        return call(
            "knowledge_withdraw",
            requestId=requestId,
            id=id,
            reason=reason,
            expectedRevision=expectedRevision,
            expectedHash=expectedHash,
        )

    @server.tool()
    def knowledge_resume() -> dict[str, Any]:
        """Finish interrupted writes and retry pending Git commits."""
        return call("knowledge_resume")

    @server.tool()
    def knowledge_search(
        query: Annotated[str, Field(min_length=1, max_length=2000)],
        limit: Annotated[int, Field(ge=1, le=100)] = 10,
        min_similarity: float | None = None,
        document_paths: list[str] | None = None,
    ) -> dict[str, Any]:
        """Semantic + keyword search over the project's documents and memories."""
        response = call(
            "knowledge_search",
            query=query,
            limit=limit,
            min_similarity=min_similarity,
            document_paths=document_paths,
        )
        return {"results": [_short(r) for r in response["results"]]}

    return server


def _short(result: dict[str, Any]) -> dict[str, Any]:
    keep = (
        "source_type",
        "score",
        "similarity_score",
        "path",
        "page",
        "title",
        "document_id",
        "chunk_id",
        "memory_id",
        "memory_store_name",
    )
    out = {k: result[k] for k in keep if k in result}
    out["content"] = (result.get("content") or "")[:600]
    return out
