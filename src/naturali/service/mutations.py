"""The one write path for knowledge records: save, correct, withdraw, resume (used by HTTP,
CLI, MCP and the memories API alike).

Order of a write, under the store's write lock (threads and processes): journal the intent in
state.sqlite → write each file atomically → record the receipt, history and guards → commit to
the vault's own Git repository. A failed Git step leaves ``git.state: "pending"`` and never
rolls the write back; the next write or ``resume`` retries it. An interrupted write is rolled
forward from the journal by the next write or ``resume``; files are never torn (temp file,
fsync, rename).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from naturali.errors import Conflict, InvalidRequest, NotFound
from naturali.ids import new_id
from naturali.model import User, utcnow
from naturali.ports.state import GuardRow, JournalEntry, PlannedWrite
from naturali.ports.storage import Storage
from naturali.retrieval.dates import date_issues
from naturali.retrieval.eligibility import Entry
from naturali.retrieval.keyword import Filters
from naturali.service import validation
from naturali.service.auth import Auth
from naturali.service.requests import CorrectRequest, SaveRequest, WithdrawRequest
from naturali.service.stores import StoreContext, StoreRegistry, View
from naturali.vault.files import atomic_write, remove_temp_files
from naturali.vault.git import GitError, VaultGit
from naturali.vault.record import KINDS, Record, RecordFormatError, render

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
Plan = tuple[list[PlannedWrite], list[GuardRow]]


class Mutations:
    def __init__(
        self,
        storage: Storage,
        auth: Auth,
        stores: StoreRegistry,
        git_binary: str = "git",
        git_enabled: bool = True,
    ) -> None:
        self._storage = storage
        self._auth = auth
        self._stores = stores
        self._git_binary = git_binary
        self._git_enabled = git_enabled
        # Called with (project_id, store_id) after each write: the composition root points it
        # at the background indexer, so what is written is embedded for the project search
        # off the writer's request and off every search.
        self.after_write: Callable[[str, str], None] | None = None

    # the operations ----------------------------------------------------------------------------
    def save(
        self, user: User, project_id: str, store_id: str, request: SaveRequest
    ) -> dict[str, Any]:
        ctx = self._open(user, project_id, store_id, "write")
        fields, body = _split(request.record, "record")

        def plan(view: View) -> Plan:
            now = utcnow()
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
            return [_write(current.scanned.path, Record(front, text))], []

        receipt = self._run(ctx, request.requestId, "save", request.model_dump(), plan)
        return self._indexed(project_id, store_id, receipt)

    def correct(
        self, user: User, project_id: str, store_id: str, request: CorrectRequest
    ) -> dict[str, Any]:
        ctx = self._open(user, project_id, store_id, "write")
        fields, body = _split(request.replacement, "replacement")

        def plan(view: View) -> Plan:
            original = _fenced(view, request.id, request.expectedRevision, request.expectedHash)
            if original.kind not in ("claim", "relationship"):
                raise InvalidRequest(
                    "only claims and relationships are corrected; save a new "
                    "revision of a page instead",
                    code="not_correctable",
                    param="id",
                )
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
            superseded = _write(original.scanned.path, Record(front, original.scanned.record.body))
            guard = GuardRow(
                original.id, revision, "superseded", replacement.record_id, request.reason, now
            )
            return [replacement, superseded], [guard]  # the replacement lands first

        receipt = self._run(ctx, request.requestId, "correct", request.model_dump(), plan)
        return self._indexed(project_id, store_id, receipt)

    def withdraw(
        self, user: User, project_id: str, store_id: str, request: WithdrawRequest
    ) -> dict[str, Any]:
        ctx = self._open(user, project_id, store_id, "write")

        def plan(view: View) -> Plan:
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
            return [_write(current.scanned.path, Record(front, current.scanned.record.body))], [
                guard
            ]

        receipt = self._run(ctx, request.requestId, "withdraw", request.model_dump(), plan)
        return self._indexed(project_id, store_id, receipt)

    def resume(self, user: User, project_id: str, store_id: str) -> dict[str, Any]:
        ctx = self._open(user, project_id, store_id, "write")
        with _store_lock(ctx):
            finished = self._recover(ctx)
            pending = ctx.state.journal_git_pending()
        return {"completed": finished, "gitPending": pending}

    def mutation(
        self, user: User, project_id: str, store_id: str, request_id: str
    ) -> dict[str, Any]:
        ctx = self._open(user, project_id, store_id, "read")
        entry = ctx.state.journal_get(request_id)
        if entry is None or entry.receipt is None:
            raise NotFound(
                f"no mutation with requestId {request_id!r}",
                code="mutation_not_found",
                param="requestId",
            )
        return self._with_indexed(ctx, entry.receipt)

    def history(self, user: User, project_id: str, store_id: str, record_id: str) -> dict[str, Any]:
        ctx = self._open(user, project_id, store_id, "read")
        revisions = ctx.state.history(record_id)
        if not revisions:
            raise NotFound(
                f"no history for record {record_id}", code="record_not_found", param="record_id"
            )
        for item in revisions:
            if item["receipt"] is not None:
                item["receipt"] = self._with_indexed(ctx, item["receipt"])
        return {"id": record_id, "revisions": revisions}

    # the write path ----------------------------------------------------------------------------
    def _open(self, user: User, project_id: str, store_id: str, need: Any) -> StoreContext:
        self._auth.require(user, project_id, need)
        if self._storage.get_memory_store(project_id, store_id) is None:
            raise NotFound(
                f"memory store {store_id} not found",
                code="memory_store_not_found",
                param="memory_store_id",
            )
        return self._stores.context(store_id)

    def _indexed(self, project_id: str, store_id: str, receipt: dict[str, Any]) -> dict[str, Any]:
        if self.after_write is not None:
            self.after_write(project_id, store_id)
        return receipt

    def _run(
        self,
        ctx: StoreContext,
        request_id: str,
        operation: str,
        args: dict[str, Any],
        plan: Callable[[View], Plan],
    ) -> dict[str, Any]:
        args_hash = hashlib.sha256(
            json.dumps(args, sort_keys=True, default=str).encode()
        ).hexdigest()
        with _store_lock(ctx):
            self._recover(ctx)
            existing = ctx.state.journal_get(request_id)
            if existing is not None:
                if existing.args_hash != args_hash or existing.operation != operation:
                    raise Conflict(
                        f"requestId {request_id!r} was used with other arguments",
                        code="request_id_reused",
                        param="requestId",
                    )
                assert existing.receipt is not None
                return self._with_indexed(ctx, existing.receipt)
            writes, guards = plan(ctx.view())
            entry = JournalEntry(
                request_id,
                operation,
                args_hash,
                tuple(writes),
                tuple(guards),
                "journaled",
                None,
                utcnow(),
            )
            ctx.state.journal_begin(entry)
            ctx.note_write()
            receipt = self._apply(ctx, entry)
            self._commit(ctx, [request_id])
        final = ctx.state.journal_get(request_id)
        return self._with_indexed(ctx, final.receipt if final and final.receipt else receipt)

    def _apply(self, ctx: StoreContext, entry: JournalEntry) -> dict[str, Any]:
        vault = ctx.store_dir / "vault"
        for write in entry.writes:
            atomic_write(vault / write.path, write.content.encode("utf-8"))
        receipt = {
            "requestId": entry.request_id,
            "operation": entry.operation,
            "at": utcnow(),
            "records": [
                {
                    "id": w.record_id,
                    "revision": w.revision,
                    "path": w.path,
                    "sha256": w.sha256,
                    "lifecycle": w.lifecycle,
                }
                for w in entry.writes
            ],
            "git": {"state": "pending", "commit": None},
        }
        ctx.state.journal_record(entry.request_id, receipt)
        return receipt

    def _commit(self, ctx: StoreContext, request_ids: list[str]) -> None:
        """Commit the record files these mutations and any earlier pending ones wrote, and
        nothing else (no temp file, no file edited by other means), in one commit."""
        earlier = [r for r in ctx.state.journal_git_pending() if r not in request_ids]
        pending = earlier + request_ids
        paths = sorted(
            {w.path for r in pending if (e := ctx.state.journal_get(r)) for w in e.writes}
        )
        if not self._git_enabled:
            ctx.state.journal_set_git(pending, {"state": "disabled", "commit": None})
            return
        git = VaultGit(ctx.store_dir / "vault", self._git_binary)
        try:
            commit = (
                git.commit(
                    f"naturali: {', '.join(pending[:5])}" + (" …" if len(pending) > 5 else ""),
                    paths,
                )
                or git.head()
            )
        except GitError as exc:
            ctx.state.journal_set_git(
                pending, {"state": "pending", "commit": None, "error": str(exc)[:300]}
            )
            return
        ctx.state.journal_set_git(pending, {"state": "committed", "commit": commit})

    def _recover(self, ctx: StoreContext) -> list[str]:
        """Roll forward writes a crash interrupted (the journal holds their full content),
        then retry pending Git commits."""
        finished = []
        incomplete = ctx.state.journal_incomplete()
        if incomplete:
            # A temp file can only be left by a write whose entry is still incomplete; the
            # store lock is held, so no live writer owns one.
            remove_temp_files(ctx.store_dir / "vault")
        for entry in incomplete:
            self._apply(ctx, entry)
            finished.append(entry.request_id)
        if finished or ctx.state.journal_git_pending():
            self._commit(ctx, finished)
        return finished

    def _create(
        self,
        view: View,
        record_id: str | None,
        fields: dict[str, Any],
        body: str | None,
        now: str,
        extra: dict[str, Any],
    ) -> PlannedWrite:
        kind = fields.get("kind")
        if kind not in KINDS:
            raise InvalidRequest(
                f"record.kind must be one of {', '.join(KINDS)}",
                code="invalid_record",
                param="record.kind",
            )
        record_id = record_id or new_id(PREFIX[str(kind)])
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
        return _write(f"{record_id}.md", Record(front, body or ""))

    def _with_indexed(self, ctx: StoreContext, receipt: dict[str, Any]) -> dict[str, Any]:
        """``indexed`` is false until a search has projected this mutation's files."""
        version = ctx.state.projection_version(Filters().scope(), "searched")
        return {**receipt, "indexed": version is not None and version[1] >= receipt["at"]}


@contextmanager
def _store_lock(ctx: StoreContext) -> Iterator[None]:
    """One writer per store across threads and processes (flock on its own descriptor)."""
    path = ctx.store_dir / "write.lock"
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _split(data: dict[str, Any], param: str) -> tuple[dict[str, Any], str | None]:
    fields = {k: v for k, v in data.items() if k != "body"}
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


def _fenced(
    view: View,
    record_id: str | None,
    revision: int | None,
    sha: str | None,
    *,
    require: bool = True,
) -> Entry:
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


def _write(path: str, record: Record) -> PlannedWrite:
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
