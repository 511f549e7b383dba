"""The record a save or a correction sends, as a typed schema for clients and agents: its
kinds, the ontology's types, its date fields and the fields that name other records by id.
The request keeps the record as a mapping — the write path checks it in one place
(``mutations._record_fields``) and unknown keys survive, as the records spec says — so this
model only says what the fields are; ``RECORD_SCHEMA`` is what OpenAPI and the MCP tools show."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from naturali.vault.ontology import DEFAULT_TYPES

_DATE = (
    "YYYY-MM-DD, or an ISO timestamp with seconds and a zone (2026-03-14T09:30:00Z). Leave a "
    "date you do not know out: never guess it, and never use today for when something happened."
)
_IDS = "Record ids (knowledge_lookup finds one by title), never names."


class RecordFields(BaseModel):
    """A knowledge record: a page (a person, a project, a meeting …), a claim (a fact, a
    decision, a commitment …) or a relationship between two records. References name records
    by id: save a person's page first, then name its id in a claim's ``entities``. Fields
    naturali does not read are kept, and the receipt's warnings name them (``date`` →
    ``occurred_at``). ``id``, ``revision``, ``lifecycle``, ``supersedes`` and the recording
    times are the store's own: to replace a claim, use knowledge_correct."""

    model_config = ConfigDict(extra="allow", title="Record")

    kind: Literal["page", "claim", "relationship"] | None = Field(
        None,
        description="Required to create. page: a thing with a name; claim: a statement; "
        "relationship: a link from one record to another (from/to).",
    )
    type: str | None = Field(
        None,
        description=f"The ontology type: {', '.join(DEFAULT_TYPES)} (a store's ontology.yaml "
        "may add more; aliases such as company → organization resolve).",
        examples=["decision"],
    )
    title: str | None = Field(None, description="A short, unique name.", examples=["Use Postgres"])
    summary: str | None = Field(None, description="One line: what the record says.")
    body: str | None = Field(None, description="Markdown text: the whole of what is known.")
    aliases: list[str] | None = Field(None, description="Other names lookup finds it by.")
    tags: list[str] | None = Field(None, description="Labels grep can filter on.")
    entities: list[str] | None = Field(None, description="The pages it is about. " + _IDS)
    owner: str | None = Field(None, description="Who owns a commitment. " + _IDS)
    from_: str | None = Field(None, alias="from", description="A relationship's source. " + _IDS)
    to: str | None = Field(None, description="A relationship's target. " + _IDS)
    occurred_at: str | None = Field(
        None, description="When it happened or was said. " + _DATE, examples=["2026-03-14"]
    )
    fields: dict[str, Any] | None = Field(
        None, description="A page's structured fields: a meeting's date is fields.occurred_at."
    )
    due_at: str | None = Field(None, description="A commitment's deadline. " + _DATE)
    valid_until: str | None = Field(None, description="When it stops holding. " + _DATE)
    sources: list[str] | None = Field(
        None, description="Records or document ids it was learnt from."
    )
    evidence: list[dict[str, Any]] | None = Field(
        None,
        description="Locators that verify it: {source: a record or document id, page, line, "
        "quote}.",
    )


RECORD_SCHEMA: dict[str, Any] = RecordFields.model_json_schema(by_alias=True)
