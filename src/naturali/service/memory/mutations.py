"""The knowledge-record writes: save, correct, withdraw, resume, and reading their receipts
and history (used by HTTP, CLI, MCP and the memories API alike).

This module plans what a write changes (which files, which guards) and checks the caller's
fences; ``service/memory/write_engine.py`` carries the plan out durably.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from pydantic import BaseModel

from naturali.contracts.records import HistoryResult, Receipt, ResumeResult
from naturali.errors import Conflict, InvalidRequest, NotFound
from naturali.ids import new_id
from naturali.model import User, utcnow
from naturali.ports.state import GuardRow, PlannedWrite
from naturali.ports.storage import Storage
from naturali.retrieval.records.eligibility import AvailableRecord, declared_references
from naturali.service import validation
from naturali.service.memory.record_names import by_name
from naturali.service.memory.record_requests import CorrectRequest, SaveRequest, WithdrawRequest
from naturali.service.memory.stores import StoreRegistry, StoreView, require_store
from naturali.service.memory.write_engine import Plan, WriteEngine
from naturali.service.platform.auth import Auth
from naturali.vault.dates import date_issues
from naturali.vault.record import KINDS, Record, RecordFormatError, render, unknown_fields

MANAGED = {
    "format",
    "id",
    "revision",
    "lifecycle",
    "superseded_by",
    "supersedes",
    "recorded_at",
    "updated_at",
    "lifecycle_change",
}
PREFIX = {"page": "pg", "claim": "clm", "relationship": "rel"}


class MemoryStoreKey(NamedTuple):
    project_id: str
    store_id: str


@dataclass(frozen=True)
class Written:
    """A write's receipt and the files it wrote (none when it was answered from an earlier
    write's receipt)."""

    receipt: Receipt
    writes: tuple[PlannedWrite, ...]


class Mutations:
    def __init__(
        self, storage: Storage, auth: Auth, stores: StoreRegistry, engine: WriteEngine
    ) -> None:
        self._storage = storage
        self._auth = auth
        self._stores = stores
        self._engine = engine
        # Called with (project_id, store_id) after each write: the composition root points it
        # at the background indexer, so what is written is embedded for the project search
        # off the writer's request and off every search.
        self.after_write: Callable[[str, str, tuple[PlannedWrite, ...]], None] | None = None

    # the operations ----------------------------------------------------------------------------
    def save(self, user: User, project_id: str, store_id: str, request: SaveRequest) -> Receipt:
        """Create a record, or a new revision of one (fenced by expectedRevision and
        expectedHash)."""
        require_store(self._storage, project_id, store_id)
        return self.save_in(MemoryStoreKey(project_id, store_id), request).receipt

    def save_in(self, store: MemoryStoreKey, request: SaveRequest) -> Written:
        """``save`` for a caller that authorized and found the store already (the memories
        API): the receipt and the records as written, for indexing without reading them back."""
        creating = request.expectedRevision is None
        fields, body = _record_fields(request.record, "record", creating=creating)
        warnings = unknown_fields(fields, "record")

        def plan(view: StoreView) -> Plan:
            now = utcnow()
            _check_references(view, fields, request.id, "record")
            if request.expectedRevision is None:
                return [self._create(view, request.id, fields, body, now, {})], []
            current = _fenced(view, request.id, request.expectedRevision, request.expectedHash)
            front = {
                **current.front,
                **fields,
                "revision": current.scanned.record.revision + 1,
                "updated_at": now,
            }
            text = body if body is not None else current.scanned.record.body
            return [_planned_write(current.scanned.path, Record(front, text))], []

        return self._write(store, request.requestId, "save", request, plan, warnings)

    def correct(
        self, user: User, project_id: str, store_id: str, request: CorrectRequest
    ) -> Receipt:
        """Supersede a claim or relationship with a corrected replacement."""
        require_store(self._storage, project_id, store_id)
        return self.correct_in(MemoryStoreKey(project_id, store_id), request).receipt

    def correct_in(self, store: MemoryStoreKey, request: CorrectRequest) -> Written:
        """``correct`` for a caller that authorized and found the store already."""
        fields, body = _record_fields(request.replacement, "replacement", creating=False)

        def plan(view: StoreView) -> Plan:
            original = _fenced(view, request.id, request.expectedRevision, request.expectedHash)
            if original.kind not in ("claim", "relationship"):
                raise InvalidRequest(
                    "only claims and relationships are corrected; save a new "
                    "revision of a page instead",
                    code="not_correctable",
                    param="id",
                )
            _check_references(view, fields, None, "replacement")
            now = utcnow()
            replacement = self._create(
                view,
                None,
                {"kind": original.kind, **fields},
                body,
                now,
                {"supersedes": original.id},
            )
            revision = original.scanned.record.revision + 1
            front = {
                **original.front,
                "revision": revision,
                "lifecycle": "superseded",
                "superseded_by": replacement.record_id,
                "lifecycle_change": request.reason,
                "updated_at": now,
            }
            superseded = _planned_write(
                original.scanned.path, Record(front, original.scanned.record.body)
            )
            guard = GuardRow(
                original.id, revision, "superseded", replacement.record_id, request.reason, now
            )
            return [replacement, superseded], [guard]  # the replacement lands first

        return self._write(store, request.requestId, "correct", request, plan)

    def withdraw(
        self, user: User, project_id: str, store_id: str, request: WithdrawRequest
    ) -> Receipt:
        """Withdraw a record with a reason: it leaves every query and stays in history."""
        require_store(self._storage, project_id, store_id)
        return self.withdraw_in(MemoryStoreKey(project_id, store_id), request).receipt

    def withdraw_in(self, store: MemoryStoreKey, request: WithdrawRequest) -> Written:
        """``withdraw`` for a caller that authorized and found the store already."""

        def plan(view: StoreView) -> Plan:
            current = _fenced(
                view, request.id, request.expectedRevision, request.expectedHash, require=False
            )
            now = utcnow()
            revision = current.scanned.record.revision + 1
            front = {
                **current.front,
                "revision": revision,
                "lifecycle": "withdrawn",
                "lifecycle_change": request.reason,
                "updated_at": now,
            }
            guard = GuardRow(current.id, revision, "withdrawn", None, request.reason, now)
            record = Record(front, current.scanned.record.body)
            return [_planned_write(current.scanned.path, record)], [guard]

        return self._write(store, request.requestId, "withdraw", request, plan)

    def resume(self, user: User, project_id: str, store_id: str) -> ResumeResult:
        """Finish interrupted writes and retry pending Git commits."""
        require_store(self._storage, project_id, store_id)
        with self._stores.opened(store_id) as opened:
            completed, pending = self._engine.resume(opened)
        return ResumeResult(completed=completed, git_pending=pending)

    def mutation(self, user: User, project_id: str, store_id: str, request_id: str) -> Receipt:
        """A write's publication receipt: indexed, git.state, git.commit."""
        require_store(self._storage, project_id, store_id)
        with self._stores.opened(store_id) as opened:
            receipt = self._engine.receipt(opened, request_id)
        if receipt is None:
            raise NotFound(
                f"no mutation with requestId {request_id!r}",
                code="mutation_not_found",
                param="requestId",
            )
        return receipt

    def history(self, user: User, project_id: str, store_id: str, record_id: str) -> HistoryResult:
        """A record's revisions with their receipts."""
        require_store(self._storage, project_id, store_id)
        with self._stores.opened(store_id) as opened:
            revisions = self._engine.history(opened, record_id)
        if not revisions:
            raise NotFound(
                f"no history for record {record_id}", code="record_not_found", param="record_id"
            )
        return HistoryResult(id=record_id, revisions=revisions)

    # planning ----------------------------------------------------------------------------
    def _write(
        self,
        store: MemoryStoreKey,
        request_id: str,
        operation: str,
        request: BaseModel,
        plan: Callable[[StoreView], Plan],
        warnings: Sequence[str] = (),
    ) -> Written:
        # An earlier write with this requestId answers from its receipt and writes nothing.
        with self._stores.opened(store.store_id) as opened:
            made = self._engine.write(opened, request_id, operation, request, plan, warnings)
        written = Written(*made)
        if self.after_write is not None:
            self.after_write(store.project_id, store.store_id, written.writes)
        return written

    def _create(
        self,
        view: StoreView,
        record_id: str | None,
        fields: dict[str, Any],
        body: str | None,
        now: str,
        extra: dict[str, Any],
    ) -> PlannedWrite:
        record_id = record_id or new_id(PREFIX[str(fields["kind"])])
        target = (view.scan_root / f"{record_id}.md").resolve()
        if target.parent != view.scan_root.resolve():
            raise InvalidRequest(
                "id must be a plain record id, not a path", code="invalid_id", param="id"
            )
        if (
            record_id in view.scan.records
            or record_id in view.scan.duplicates
            or record_id in view.guarded
        ):
            raise Conflict(f"record {record_id} already exists", code="record_exists", param="id")
        front = {
            "format": "knowledge-record-v1",
            "id": record_id,
            "revision": 1,
            **fields,
            "lifecycle": "active",
            **extra,
            "recorded_at": now,
            "updated_at": now,
        }
        return _planned_write(f"{record_id}.md", Record(front, body or ""))


def _record_fields(
    data: dict[str, Any], param: str, *, creating: bool
) -> tuple[dict[str, Any], str | None]:
    """A record as a request gives it, checked in this one place (its kind when it makes a
    record or names one, its dates, no field naturali manages, each field's limits, its
    body): its front matter fields and its body. ``render`` holds the file format's own
    invariants, which every record file meets however it was written."""
    fields = {k: v for k, v in data.items() if k != "body"}
    if (creating or "kind" in fields) and fields.get("kind") not in KINDS:
        raise InvalidRequest(
            f"{param}.kind must be one of {', '.join(KINDS)}",
            code="invalid_record",
            param=f"{param}.kind",
        )
    # A date no timeline could place would silently never appear on one: refuse it here.
    for kind in ("claim", "page"):  # dates at the top level, and pages' fields.occurred_at
        for name, message in date_issues(kind, fields):
            if name.split(".")[0] in fields:
                raise InvalidRequest(message, code="invalid_date", param=f"{param}.{name}")
    managed = sorted(MANAGED & fields.keys())
    if managed:
        raise InvalidRequest(
            f"{param}.{managed[0]} is managed by naturali and cannot be set",
            code="managed_field",
            param=f"{param}.{managed[0]}",
        )
    validation.record_fields(fields, param)
    body = data.get("body")
    if body is not None:
        validation.text(body, f"{param}.body")
    return fields, body


def _check_references(
    view: StoreView, fields: dict[str, Any], record_id: str | None, param: str
) -> None:
    """A record whose entities, endpoints or dependencies name no available record would be
    excluded from every query the moment it was written (and an owner that names none would
    tie it to nobody): refused, naming the field and the value, rather than kept unseen."""
    for key, ref in declared_references(fields):
        if ref == record_id or ref in view.entries:
            continue
        named = [e.id for e in by_name(view.entries.values(), ref)]
        hint = (
            f"; records are named by id: {ref!r} is the title or alias of {', '.join(named)}"
            if named
            else "; save that record first, or name it by its id (knowledge_lookup finds one)"
        )
        raise InvalidRequest(
            f"{param}.{key} names {ref!r}, which is no available record of this store{hint}",
            code="unresolved_reference",
            param=f"{param}.{key}",
        )


def _fenced(
    view: StoreView,
    record_id: str | None,
    revision: int | None,
    sha: str | None,
    *,
    require: bool = True,
) -> AvailableRecord:
    if record_id is None:
        raise InvalidRequest(
            "id is required with expectedRevision", code="missing_field", param="id"
        )
    entry = view.entries.get(record_id)
    if entry is None or entry.lifecycle != "active":
        raise NotFound(f"no active record {record_id}", code="record_not_found", param="id")
    if require and (revision is None or sha is None):
        raise InvalidRequest(
            "expectedRevision and expectedHash are required",
            code="missing_field",
            param="expectedRevision",
        )
    if revision is not None and revision != entry.scanned.record.revision:
        raise Conflict(
            f"record {record_id} is at revision {entry.scanned.record.revision}, not {revision}",
            code="revision_conflict",
            param="expectedRevision",
        )
    if sha is not None and sha != entry.scanned.sha256:
        raise Conflict(
            f"record {record_id} changed (hash {entry.scanned.sha256})",
            code="hash_conflict",
            param="expectedHash",
        )
    return entry


def _planned_write(path: str, record: Record) -> PlannedWrite:
    try:
        text = render(record)
    except (RecordFormatError, ValueError, TypeError) as exc:
        raise InvalidRequest(
            f"invalid record: {exc}", code="invalid_record", param="record"
        ) from exc
    return PlannedWrite(
        path,
        text,
        record.id,
        record.revision,
        record.lifecycle,
        hashlib.sha256(text.encode("utf-8")).hexdigest(),
    )
