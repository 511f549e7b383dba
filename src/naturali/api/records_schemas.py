"""Response models of the records, dates and write routes (OpenAPI documentation; the
routes return them with unset fields left out, exactly as the service builds them)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Snippet(_Open):
    field: str
    text: str
    start: int
    end: int
    matchLocated: bool  # noqa: N815
    lineStart: int | None = None  # noqa: N815
    lineEnd: int | None = None  # noqa: N815


class Citation(_Open):
    id: str
    path: str
    revision: int
    sha256: str


class Via(_Open):
    id: str
    revision: int
    title: str | None = None
    path: str | None = None
    sha256: str | None = None


class CompleteHit(_Open):
    id: str
    kind: str
    type: str
    title: str
    aliases: list[str]
    tags: list[str]
    summary: str
    lifecycle: str
    matches: list[str]
    score: float | None
    attribution: Any = None
    assertionOrigin: Any = None  # noqa: N815
    path: str
    revision: int
    sha256: str
    snippet: Snippet
    evidence: list[dict[str, Any]]
    evidenceTruncated: bool  # noqa: N815
    citation: Citation
    via: Via | None = None


class IndexState(_Open):
    state: str
    lag: bool


class Issue(_Open):
    path: str
    message: str


class Coverage(_Open):
    complete: bool
    issues: list[Issue]


class Freshness(_Open):
    queriedAt: str  # noqa: N815
    scannedAt: str  # noqa: N815
    indexedAt: str | None = None  # noqa: N815


class GrepResponse(_Open):
    query: str
    mode: str
    hits: list[CompleteHit]
    total: int | None
    offset: int
    nextOffset: int | None  # noqa: N815
    snapshot: str
    index: IndexState
    coverage: Coverage
    freshness: Freshness


class LookupResponse(_Open):
    query: str
    status: str
    hits: list[CompleteHit]
    coverage: Coverage
    freshness: Freshness


class InventoryRow(_Open):
    id: str
    kind: str
    type: str
    title: str
    lifecycle: str
    tags: list[str]
    path: str
    revision: int
    sha256: str


class RecordsResponse(_Open):
    records: list[InventoryRow]
    total: int
    offset: int
    nextOffset: int | None  # noqa: N815
    snapshot: str
    coverage: Coverage
    freshness: Freshness


class RecordResponse(InventoryRow):
    summary: str
    frontMatter: dict[str, Any]  # noqa: N815
    body: str
    evidence: list[dict[str, Any]]
    citation: Citation
    freshness: Freshness


class DateValue(_Open):
    field: str
    value: str
    dateOnly: bool  # noqa: N815
    start: str
    end: str
    local: str | None = None


class TimelineRow(_Open):
    id: str
    kind: str
    type: str
    title: str
    lifecycle: str
    summary: str
    date: DateValue
    entities: list[str]
    path: str
    revision: int
    sha256: str
    citation: Citation
    source: dict[str, Any] | None = None
    noteRecord: str | None = None  # noqa: N815
    eventClaim: str | None = None  # noqa: N815
    claims: int | None = None
    links: list[str] | None = None


class TimelineResponse(_Open):
    rows: list[TimelineRow]
    total: int | None = Field(description="null when the date index is unavailable (retry)")
    offset: int
    nextOffset: int | None  # noqa: N815
    budgetTruncated: bool  # noqa: N815
    snapshot: str | None
    index: IndexState
    coverage: Coverage
    freshness: Freshness
    sources: list[dict[str, Any]] | None = None
    sourcesTruncated: bool | None = None  # noqa: N815


class LastSeenResponse(_Open):
    entity: str
    occurredOnOrBefore: str  # noqa: N815
    found: bool | None = Field(description="null when the date index is unavailable (retry)")
    lastSeen: TimelineRow | None  # noqa: N815
    index: IndexState
    coverage: Coverage
    freshness: Freshness


class ReceiptRecord(_Open):
    id: str
    revision: int
    path: str
    sha256: str
    lifecycle: str


class GitState(_Open):
    state: str
    commit: str | None
    error: str | None = None


class Receipt(_Open):
    requestId: str  # noqa: N815
    operation: str
    at: str
    records: list[ReceiptRecord]
    git: GitState
    indexed: bool


class ResumeResponse(_Open):
    completed: list[str]
    gitPending: list[str]  # noqa: N815


class Revision(_Open):
    revision: int
    requestId: str  # noqa: N815
    operation: str
    lifecycle: str
    path: str
    sha256: str
    at: str
    receipt: Receipt | None


class HistoryResponse(_Open):
    id: str
    revisions: list[Revision]
