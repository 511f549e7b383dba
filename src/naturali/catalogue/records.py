"""The records tools of a memory store (docs/spec/retrieval-and-dates.md) as operations of the
catalogue: the reads — grep, lookup, inventory, one record, the
timeline and chronicle — and the journaled writes with their receipts and history."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from naturali.catalogue.operation import STORE_BASE, Operation, Runner, Target
from naturali.contracts import records as results
from naturali.model import User
from naturali.service.memory import record_requests as records_req

if TYPE_CHECKING:
    from naturali.service.container import Services


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


RECORDS: tuple[Operation, ...] = (
    Operation(
        "knowledge_grep",
        (
            "Records of this store that contain given words (BM25 over title, aliases, body). "
            "Use it for names, codes and exact terms; knowledge_search finds by meaning across "
            'documents too. Every token must match unless mode is "any"; "phrase" wants them '
            "in order. Returns hits best first (id, title, kind, type, snippet, citation); "
            'superseded wording returns the current record with "via".'
        ),
        records_req.GrepRequest,
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
        records_req.LookupRequest,
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
        records_req.RecordsRequest,
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
        records_req.RecordAt,
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
        records_req.TimelineRequest,
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
        records_req.ChronicleDayRequest,
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
        records_req.ChronicleSinceRequest,
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
        records_req.LastSeenRequest,
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
        records_req.SaveRequest,
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
        records_req.CorrectRequest,
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
        records_req.WithdrawRequest,
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
        records_req.ResumeRequest,
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
        records_req.MutationRef,
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
        records_req.RecordRef,
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
