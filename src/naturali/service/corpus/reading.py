"""A consistent reading of a memory store's records for one records or dates call: the
store opened for a reader (now, or as of a past instant), the filters and selection a call
searches, the snapshot that pages must keep, and whether every record was read."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from naturali.contracts.records import (
    Coverage,
    GrepResult,
    Issue,
    LastSeenResult,
    LookupResult,
    RecordResult,
    RecordsResult,
    TimelineResult,
)
from naturali.errors import Conflict
from naturali.model import User
from naturali.ports.state import StateStore
from naturali.ports.storage import Storage
from naturali.retrieval.records.eligibility import AvailableRecord, current_of
from naturali.retrieval.records.keyword import Filters
from naturali.service.memory.stores import StoreRegistry, StoreView, require_store
from naturali.service.platform.auth import Auth
from naturali.vault.dates import to_us


@dataclass(frozen=True)
class Reading:
    """A store's records as one call sees them, and the state holding their projections;
    ``cache_key`` names that state for reuse across calls (None: a scratch state, asOf)."""

    view: StoreView
    state: StateStore
    cache_key: str | None
    as_of: str | None = None

    def now_us(self) -> int:
        """The instant "current" is judged at (expiry): ``as_of``, else now."""
        moment = datetime.now().astimezone()
        if self.as_of is not None:
            moment = datetime.fromisoformat(self.as_of)
        return to_us(moment)


Answer = TypeVar(
    "Answer", GrepResult, LookupResult, RecordsResult, RecordResult, TimelineResult, LastSeenResult
)


def stamped(result: Answer, reading: Reading) -> Answer:
    """The result, saying which past instant it answers from when asOf asked for one."""
    if reading.as_of is not None:
        result.as_of = reading.as_of
    return result


class Reader:
    """Opens a store for one records or dates call, after checking the caller may read it."""

    def __init__(self, storage: Storage, auth: Auth, stores: StoreRegistry) -> None:
        self._storage = storage
        self._auth = auth
        self._stores = stores

    @contextmanager
    def reading(
        self, user: User, project_id: str, store_id: str, as_of: str | None
    ) -> Iterator[Reading]:
        """What one records or dates call reads: the store now (scanned), or as it stood at
        ``as_of`` (rebuilt from its history, its projections in a scratch state)."""
        require_store(self._storage, project_id, store_id)
        with self._stores.opened(store_id) as opened:
            if as_of is None:
                yield Reading(opened.view(), opened.state, str(opened.store_dir))
                return
            with self._stores.scratch() as scratch:
                yield Reading(opened.view_at(as_of), scratch, None, as_of)


def filters_of(
    view: StoreView, kind: str | None, type_: str | None, tag: str | None, lifecycle: str
) -> Filters:
    """A call's record filters, its type resolved through the store's ontology."""
    resolved = view.ontology.resolve(type_) if type_ is not None else None
    return Filters(kind, resolved, tag, lifecycle)  # type: ignore[arg-type]


def in_scope(entry: AvailableRecord, filters: Filters) -> bool:
    lifecycles = ("active", "superseded") if filters.lifecycle == "all" else (filters.lifecycle,)
    return entry.lifecycle in lifecycles and filters.accepts(entry)


def coverage(view: StoreView) -> Coverage:
    """Whether every record of the vault was read and is available: the issues of files
    that were not read, and of records excluded for a reference (never a silent gap)."""
    issues = [Issue(path=i.path, message=i.message) for i in view.scan.issues] + [
        Issue(path="ontology.yaml", message=m) for m in view.ontology.issues
    ]
    issues += [
        Issue(path=e.path, message=f"record {e.id} is excluded: {e.reason}")
        for e in sorted(view.excluded.values(), key=lambda e: e.path)
    ]
    return Coverage(complete=not issues, issues=issues)


def snapshot_of(scope: str, entries: list[AvailableRecord]) -> str:
    """Identifies the (id, content hash) set a query saw: an order-free sum of per-record
    tokens (computed once per parse), so it costs one addition per record."""
    total = sum(e.scanned.token for e in entries) & ((1 << 128) - 1)
    return hashlib.sha256(f"{scope}:{len(entries)}:{total:032x}".encode()).hexdigest()[:32]


def selection(
    view: StoreView, filters: Filters
) -> tuple[list[AvailableRecord], list[AvailableRecord], str]:
    """The records a filter set searches, the superseded records whose chain reaches one of
    them, and the snapshot of both; computed once per scan and filter set."""
    key = filters.scope()
    cached = view.selections.get(key)
    if cached is not None:
        return cached
    if filters == Filters():  # the default: every active record, no per-record filter
        searched = [e for e in view.entries.values() if e.lifecycle == "active"]
    else:
        searched = [e for e in view.entries.values() if in_scope(e, filters)]
    history: list[AvailableRecord] = []
    if filters.lifecycle == "active":
        wanted = {e.id for e in searched}
        history = [
            e
            for e in view.entries.values()
            if e.lifecycle == "superseded"
            and (cur := current_of(e, view.entries)) is not None
            and cur.id in wanted
        ]
    result = (searched, history, snapshot_of(key, searched + history))
    view.selections[key] = result
    return result


def check_snapshot(given: str | None, current: str) -> None:
    """A page asked for with the snapshot of an earlier page must see the same records."""
    if given is not None and given != current:
        raise Conflict(
            "the records changed since that snapshot; restart from offset 0 without it",
            code="snapshot_changed",
            param="snapshot",
        )
