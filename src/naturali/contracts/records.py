"""Result models of the records tools, the date tools and the writes
(docs/spec/retrieval-and-dates.md). Python names are snake_case; the wire names are the
spec's camelCase, generated as aliases."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from naturali.contracts.wire import WireModel


class Snippet(WireModel):
    field: str
    text: str
    start: int
    end: int
    match_located: bool
    line_start: int | None = None
    line_end: int | None = None


class Citation(WireModel):
    id: str
    path: str
    revision: int
    sha256: str


class Evidence(WireModel):
    """A locator that verifies: ``source`` is an available record or a document id. ``page``,
    ``line`` and ``quote`` are shown as the record's front matter spells them."""

    source: str
    page: Any = None
    line: Any = None
    quote: Any = None


class Via(WireModel):
    """The superseded record whose wording matched a replacement hit."""

    id: str
    revision: int
    title: str | None = None
    path: str | None = None
    sha256: str | None = None


class CompleteHit(WireModel):
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
    assertion_origin: Any = None
    path: str
    revision: int
    sha256: str
    snippet: Snippet
    evidence: list[Evidence]
    evidence_truncated: bool
    citation: Citation
    via: Via | None = None


class ListRow(WireModel):
    """The short row agent tools receive for a hit: enough to cite and to open the record."""

    id: str
    kind: str
    type: str
    title: str
    path: str
    score: float | None
    snippet: str
    via: Via | None = None


def list_row(hit: CompleteHit) -> ListRow:
    """The short row agent tools receive for a complete hit."""
    row = ListRow(
        id=hit.id,
        kind=hit.kind,
        type=hit.type,
        title=hit.title,
        path=hit.path,
        score=hit.score,
        snippet=hit.snippet.text[:200],
    )
    if hit.via is not None:
        row.via = Via(id=hit.via.id, revision=hit.via.revision)
    return row


class IndexState(WireModel):
    state: Literal["ready", "unavailable"]
    lag: bool


class Issue(WireModel):
    path: str
    message: str


class Coverage(WireModel):
    complete: bool
    issues: list[Issue]


class Freshness(WireModel):
    queried_at: str
    scanned_at: str
    indexed_at: str | None = None


class GrepResult(WireModel):
    query: str
    mode: str
    hits: list[CompleteHit]
    total: int | None
    offset: int
    next_offset: int | None
    snapshot: str
    index: IndexState
    coverage: Coverage
    freshness: Freshness
    as_of: str | None = None  # asOf, when the call asked for a past instant


LookupStatus = Literal["found", "ambiguous", "missing"]


class LookupResult(WireModel):
    query: str
    status: LookupStatus
    hits: list[CompleteHit]
    coverage: Coverage
    freshness: Freshness
    as_of: str | None = None  # asOf, when the call asked for a past instant


class InventoryRow(WireModel):
    id: str
    kind: str
    type: str
    title: str
    lifecycle: str
    tags: list[str]
    path: str
    revision: int
    sha256: str


class RecordsResult(WireModel):
    records: list[InventoryRow]
    total: int
    offset: int
    next_offset: int | None
    snapshot: str
    coverage: Coverage
    freshness: Freshness
    as_of: str | None = None  # asOf, when the call asked for a past instant


class RecordResult(InventoryRow):
    summary: str
    front_matter: dict[str, Any]
    body: str
    evidence: list[Evidence]
    citation: Citation
    freshness: Freshness
    as_of: str | None = None  # asOf, when the call asked for a past instant


class DateValue(WireModel):
    field: str
    value: str
    date_only: bool
    start: str
    end: str
    local: str | None = None


class SourceRef(WireModel):
    id: str
    title: str
    type: str


class TimelineRow(WireModel):
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
    source: SourceRef | None = None
    note_record: str | None = None
    event_claim: str | None = None
    claims: int | None = None
    links: list[str] | None = None


class SourceSummary(WireModel):
    """A source the page's rows cite, listed once (``includeSources``), with the date it
    occurred as written (null when it has none)."""

    id: str
    type: str
    title: str
    date: str | None
    summary: str


class TimelineResult(WireModel):
    """knowledge_timeline and both chronicle tools (the chronicle day adds its window)."""

    rows: list[TimelineRow]
    total: int | None = Field(description="null when the date index is unavailable (retry)")
    offset: int
    next_offset: int | None
    budget_truncated: bool
    snapshot: str | None
    index: IndexState
    coverage: Coverage
    freshness: Freshness
    sources: list[SourceSummary] | None = None
    sources_truncated: bool | None = None
    date: str | None = None
    week: bool | None = None
    time_zone: str | None = None
    from_: str | None = Field(default=None, alias="from")
    to: str | None = None
    as_of: str | None = None  # asOf, when the call asked for a past instant


class LastSeenResult(WireModel):
    entity: str
    occurred_on_or_before: str
    found: bool | None = Field(description="null when the date index is unavailable (retry)")
    last_seen: TimelineRow | None
    index: IndexState
    coverage: Coverage
    freshness: Freshness
    as_of: str | None = None  # asOf, when the call asked for a past instant


class ReceiptRecord(WireModel):
    id: str
    revision: int
    path: str
    sha256: str
    lifecycle: str


class GitState(WireModel):
    state: str
    commit: str | None
    error: str | None = None


class Receipt(WireModel):
    """A write's publication receipt: what was written, whether it is indexed, Git's state."""

    request_id: str
    operation: str
    at: str
    records: list[ReceiptRecord]
    git: GitState
    indexed: bool
    warnings: list[str] = Field(
        default_factory=list,
        description="What the write kept but no query reads (an unknown front-matter key, "
        "with the field it may have meant).",
    )


class ResumeResult(WireModel):
    completed: list[str]
    git_pending: list[str]


class Revision(WireModel):
    revision: int
    request_id: str
    operation: str
    lifecycle: str
    path: str
    sha256: str
    at: str
    receipt: Receipt | None


class HistoryResult(WireModel):
    id: str
    revisions: list[Revision]
