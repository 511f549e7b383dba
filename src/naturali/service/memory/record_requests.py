"""The records tools' request bodies (docs/spec/retrieval-and-dates.md): the filters a
search of a memory store takes, the date queries, the writes and the one-record reads —
validated once at the edge, as every request is (service/requests.py)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, StringConstraints, WithJsonSchema, field_validator

from naturali.service import validation
from naturali.service.memory.record_schema import RECORD_SCHEMA
from naturali.service.requests import Paged, Strict
from naturali.vault.record import RECORD_ID_PATTERN

Kind = Literal["page", "claim", "relationship"]
LifecycleFilter = Literal["active", "superseded", "all"]


def _instant(value: str) -> str:
    """An ISO timestamp with seconds and an explicit zone, as the UTC form the store's
    history is written in (``model.utcnow``)."""
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError("asOf must be an ISO timestamp, e.g. 2026-03-01T12:00:00Z") from None
    if moment.tzinfo is None or "T" not in value:
        raise ValueError("asOf needs a time and an explicit zone (Z or ±hh:mm)")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


Instant = Annotated[str, StringConstraints(min_length=1, max_length=64), AfterValidator(_instant)]


AS_OF = (
    "naturali extension: answer from the store as it stood at this instant (ISO timestamp "
    "with zone) — each record's revision and lifecycle current then, rebuilt from the "
    'store\'s history; the response echoes asOf. Unlike eligibility "include_inactive", a '
    "snapshot of a past time."
)


class AsOf(Strict):
    asOf: Instant | None = Field(None, description=AS_OF)


class RecordFilters(AsOf):
    kind: Kind | None = Field(None, description="Record kind: page, claim or relationship.")
    type: Annotated[str, StringConstraints(min_length=1, max_length=100)] | None = Field(
        None, description="Ontology type; aliases expand (company → organization)."
    )
    tag: Annotated[str, StringConstraints(min_length=1, max_length=256)] | None = Field(
        None, description="Exact, case-sensitive tag."
    )
    lifecycle: LifecycleFilter = Field(
        "active", description="active (default), superseded, or all (active plus superseded)."
    )


class GrepRequest(RecordFilters, Paged):
    """knowledge_grep: FTS5/BM25 over title, aliases and body (weights 8/6/1)."""

    query: Annotated[str, StringConstraints(min_length=1, max_length=500)] = Field(
        description="1–64 word tokens within 500 characters; punctuation separates tokens."
    )
    mode: Literal["all", "any", "phrase"] = Field(
        "all", description="all (every token), any, or phrase (in order, adjacent, one field)."
    )
    limit: int = Field(20, ge=1, le=50, description="1–50 results (default 20).")
    offset: int = Field(0, ge=0, le=500, description="0–500; follow nextOffset.")
    timeField: Literal["occurred_at", "recorded_at", "updated_at", "due_at"] = Field(
        "occurred_at", description="The date since/until filter on, applied before ranking."
    )
    since: Annotated[str, StringConstraints(min_length=1, max_length=64)] | None = None
    until: Annotated[str, StringConstraints(min_length=1, max_length=64)] | None = None


class LookupRequest(RecordFilters):
    """knowledge_lookup: exact id, full title or alias; found, ambiguous or missing."""

    query: Annotated[str, StringConstraints(min_length=1, max_length=200)] = Field(
        description="An id (case-sensitive) or a full title or alias (normalised, not fuzzy)."
    )

    @field_validator("query")
    @classmethod
    def _query_not_blank(cls, value: str) -> str:
        if not validation.has_visible(value):
            raise ValueError("query must not be blank")
        return value


class RecordsRequest(RecordFilters, Paged):
    """knowledge_records: the exhaustive inventory, by id."""

    limit: int = Field(100, ge=1, le=500, description="1–500 records (default 100).")
    offset: int = Field(0, ge=0, description="Follow nextOffset.")


TimeFieldName = Literal["occurred_at", "recorded_at", "updated_at", "due_at"]
DateText = Annotated[str, StringConstraints(min_length=1, max_length=64)]
RecordType = Annotated[str, StringConstraints(min_length=1, max_length=100)]


class TimelineRequest(Paged, AsOf):
    """knowledge_timeline (docs/spec/retrieval-and-dates.md, "Dates and Chronicle")."""

    entity: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = None
    kind: Annotated[str, StringConstraints(min_length=1, max_length=100)] | None = Field(
        None, description="Exact record.type (decision, event, meeting…), not the record kind."
    )
    timeField: TimeFieldName = "occurred_at"
    since: DateText | None = Field(None, description="YYYY-MM-DD or ISO timestamp with zone.")
    until: DateText | None = Field(None, description="Inclusive; a date covers its UTC day.")
    order: Literal["asc", "desc"] = "asc"
    eligibility: Literal["active", "include_inactive"] = "active"
    includeSources: bool = False
    group: Literal["source"] | None = None
    limit: int = Field(50, ge=1, le=200)
    offset: int = Field(0, ge=0, le=10_000)


class ChronicleDayRequest(Paged, AsOf):
    date: DateText = Field(description="YYYY-MM-DD")
    kind: RecordType | None = Field(
        None, description="Exact record.type (decision, event, meeting…), not the record kind."
    )
    week: bool = Field(False, description="The Monday–Sunday week of date instead.")
    timeZone: Annotated[str, StringConstraints(min_length=1, max_length=64)] = "UTC"
    limit: int = Field(100, ge=1, le=500)
    offset: int = Field(0, ge=0, le=10_000)


class ChronicleSinceRequest(Paged, AsOf):
    since: DateText
    until: DateText | None = None
    kind: RecordType | None = Field(
        None, description="Exact record.type (decision, event, meeting…), not the record kind."
    )
    entity: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = None
    limit: int = Field(50, ge=1, le=200)
    offset: int = Field(0, ge=0, le=10_000)


class LastSeenRequest(AsOf):
    entity: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    occurredOnOrBefore: DateText | None = None


RequestId = Annotated[
    str, StringConstraints(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._:-]+$")
]
RecordId = Annotated[str, StringConstraints(pattern=RECORD_ID_PATTERN)]
Reason = Annotated[str, StringConstraints(min_length=1, max_length=2000)]


# A record travels as a mapping (unknown keys survive); its schema says what the keys mean.
RecordMapping = Annotated[dict[str, Any], WithJsonSchema(RECORD_SCHEMA)]


class SaveRequest(Strict):
    """knowledge_save: create a record, or update one fenced by its revision and hash."""

    requestId: RequestId = Field(
        description="Client id of this mutation; repeating it returns the same receipt."
    )
    record: RecordMapping = Field(
        description="The record: front-matter fields (kind, type, title, dates, references by "
        "id, …) and its Markdown body; to update, only the fields that change."
    )
    id: RecordId | None = Field(None, description="The record to update (or to create).")
    expectedRevision: int | None = Field(default=None, ge=1)
    expectedHash: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")] | None = None


class CorrectRequest(Strict):
    """knowledge_correct: supersede a claim or relationship with a replacement."""

    requestId: RequestId
    id: RecordId
    expectedRevision: int = Field(ge=1)
    expectedHash: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
    replacement: RecordMapping = Field(
        description="The record that replaces it: its fields and body, as knowledge_save's."
    )
    reason: Reason


class WithdrawRequest(Strict):
    """knowledge_withdraw: take a record out of every query, with a reason (it stays in
    history)."""

    requestId: RequestId
    id: RecordId
    reason: Reason
    expectedRevision: int | None = Field(default=None, ge=1)
    expectedHash: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")] | None = None


class ResumeRequest(Strict):
    """knowledge_resume: finish interrupted writes and retry pending Git commits."""


class RecordRef(Strict):
    """knowledge_record and knowledge_history: one record by id."""

    id: Annotated[str, StringConstraints(min_length=1, max_length=200)]


class RecordAt(RecordRef, AsOf):
    """knowledge_record: one record by id, now or as it stood at ``asOf``."""


class MutationRef(Strict):
    """knowledge_mutation: one write's receipt by the requestId it was sent with."""

    requestId: RequestId
