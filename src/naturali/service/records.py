"""The records tools over a memory store's vault (docs/spec/retrieval-and-dates.md):
knowledge_grep, knowledge_lookup, knowledge_records, knowledge_record.

Markdown is authoritative: every call scans first (reusing what has not changed), and
knowledge_grep reconciles its scope's FTS5 projections before it matches.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TypeVar, overload

from naturali.contracts.records import (
    CompleteHit,
    Coverage,
    Freshness,
    GrepResult,
    IndexState,
    InventoryRow,
    Issue,
    LastSeenResult,
    LookupResult,
    LookupStatus,
    RecordResult,
    RecordsResult,
    TimelineResult,
)
from naturali.errors import Conflict, NotFound
from naturali.model import User, utcnow
from naturali.ports.state import (
    MatchMode,
    ProjectionRow,
    ProjectionTable,
    ProjectionUnavailable,
    StateStore,
)
from naturali.ports.storage import Storage
from naturali.retrieval import citations
from naturali.retrieval.eligibility import AvailableRecord, current_of
from naturali.retrieval.keyword import Filters, fields_matched, query_tokens
from naturali.service.auth import Auth
from naturali.service.requests import (
    GrepRequest,
    LookupRequest,
    RecordsRequest,
)
from naturali.service.stores import OpenStore, StoreRegistry, StoreView, require_store
from naturali.vault.dates import parse_range, to_us


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


class Records:
    def __init__(self, storage: Storage, auth: Auth, stores: StoreRegistry) -> None:
        self._storage = storage
        self._auth = auth
        self._stores = stores
        self._reconciled: dict[tuple[str, str, ProjectionTable], tuple[int, int, int]] = {}

    # shared ------------------------------------------------------------------------------------
    def open_view(self, user: User, project_id: str, store_id: str) -> tuple[OpenStore, StoreView]:
        """Check the caller may read the store, then scan it: its context and view."""
        self._auth.require(user, project_id, "read")
        require_store(self._storage, project_id, store_id)
        opened = self._stores.context(store_id)
        return opened, opened.view()

    @contextmanager
    def reading(
        self, user: User, project_id: str, store_id: str, as_of: str | None
    ) -> Iterator[Reading]:
        """What one records or dates call reads: the store now (scanned), or as it stood at
        ``as_of`` (rebuilt from its history, its projections in a scratch state)."""
        opened, view = self.open_view(user, project_id, store_id)
        if as_of is None:
            yield Reading(view, opened.state, str(opened.store_dir))
            return
        with self._stores.scratch() as scratch:
            yield Reading(opened.view_at(as_of), scratch, None, as_of)

    @staticmethod
    def _filters(
        view: StoreView, kind: str | None, type_: str | None, tag: str | None, lifecycle: str
    ) -> Filters:
        resolved = view.ontology.resolve(type_) if type_ is not None else None
        return Filters(kind, resolved, tag, lifecycle)  # type: ignore[arg-type]

    @staticmethod
    def _in_scope(entry: AvailableRecord, filters: Filters) -> bool:
        lifecycles = (
            ("active", "superseded") if filters.lifecycle == "all" else (filters.lifecycle,)
        )
        return entry.lifecycle in lifecycles and filters.accepts(entry)

    @staticmethod
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

    @staticmethod
    def _snapshot(scope: str, entries: list[AvailableRecord]) -> str:
        """Identifies the (id, content hash) set a query saw: an order-free sum of per-record
        tokens (computed once per parse), so it costs one addition per record."""
        total = sum(e.scanned.token for e in entries) & ((1 << 128) - 1)
        return hashlib.sha256(f"{scope}:{len(entries)}:{total:032x}".encode()).hexdigest()[:32]

    def _selection(
        self, view: StoreView, filters: Filters
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
            searched = [e for e in view.entries.values() if self._in_scope(e, filters)]
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
        result = (searched, history, self._snapshot(key, searched + history))
        view.selections[key] = result
        return result

    # knowledge_grep ----------------------------------------------------------------------------
    def grep(self, user: User, project_id: str, store_id: str, request: GrepRequest) -> GrepResult:
        """Keyword search (BM25 over title, aliases, body) of one store's records."""
        with self.reading(user, project_id, store_id, request.asOf) as reading:
            return stamped(self._grep(reading, request), reading)

    def _grep(self, reading: Reading, request: GrepRequest) -> GrepResult:
        view = reading.view
        tokens = query_tokens(request.query)
        filters = self._filters(view, request.kind, request.type, request.tag, request.lifecycle)
        if request.since is not None or request.until is not None:
            since, until = parse_range(request.since, request.until)
            filters = replace(filters, time_field=request.timeField, since=since, until=until)
        searched, history, snapshot = self._selection(view, filters)
        check_snapshot(request.snapshot, snapshot)
        queried_at = utcnow()
        try:
            direct, earlier, indexed_at = self._match(
                reading, filters, searched, history, tokens, request.mode
            )
        except ProjectionUnavailable:
            return GrepResult(
                query=request.query,
                mode=request.mode,
                hits=[],
                total=None,
                offset=request.offset,
                next_offset=None,
                snapshot=snapshot,
                index=IndexState(state="unavailable", lag=True),
                coverage=self.coverage(view),
                freshness=Freshness(
                    queried_at=queried_at, scanned_at=view.scan.scanned_at, indexed_at=None
                ),
            )
        ranked = self._rank(view, direct, earlier)
        page = ranked[request.offset : request.offset + request.limit]
        end = request.offset + len(page)
        return GrepResult(
            query=request.query,
            mode=request.mode,
            hits=self._hits(view, page, tokens, request.mode),
            total=len(ranked),
            offset=request.offset,
            next_offset=end if end < len(ranked) else None,
            snapshot=snapshot,
            index=IndexState(state="ready", lag=False),
            coverage=self.coverage(view),
            freshness=Freshness(
                queried_at=queried_at, scanned_at=view.scan.scanned_at, indexed_at=indexed_at
            ),
        )

    def _match(
        self,
        reading: Reading,
        filters: Filters,
        searched: list[AvailableRecord],
        history: list[AvailableRecord],
        tokens: list[str],
        mode: MatchMode,
    ) -> tuple[list[tuple[str, float]], list[tuple[str, float]], str]:
        """Direct and superseded matches, with the projections reconciled first."""
        scope, view = filters.scope(), reading.view
        indexed_at = self._reconcile(reading, scope, "searched", searched)
        if filters.lifecycle == "active":
            indexed_at = max(indexed_at, self._reconcile(reading, scope, "history", history))
        direct = reading.state.match(scope, "searched", tokens, mode)
        earlier = reading.state.match(scope, "history", tokens, mode) if history else []
        if mode == "phrase":
            # FTS5 keeps a column's aliases in one text, where a phrase could run from one
            # alias into the next; a phrase matches within one value.
            direct, earlier = (
                [(i, score) for i, score in found if fields_matched(view.entries[i], tokens, mode)]
                for found in (direct, earlier)
            )
        return direct, earlier, indexed_at

    @staticmethod
    def _hits(
        view: StoreView,
        page: list[tuple[AvailableRecord, float | None, AvailableRecord | None]],
        tokens: list[str],
        mode: MatchMode,
    ) -> list[CompleteHit]:
        known = set(view.entries)
        return [
            citations.complete_hit(
                entry,
                score,
                ["superseded"] if via else fields_matched(entry, tokens, mode),
                tokens,
                known,
                via,
                phrase=mode == "phrase",
            )
            for entry, score, via in page
        ]

    @staticmethod
    def _rank(
        view: StoreView, direct: list[tuple[str, float]], earlier: list[tuple[str, float]]
    ) -> list[tuple[AvailableRecord, float | None, AvailableRecord | None]]:
        """Direct matches by BM25 then id; then the current replacements of matching
        superseded records, by the earlier record's BM25 then id, each record once."""
        out: list[tuple[AvailableRecord, float | None, AvailableRecord | None]] = []
        seen: set[str] = set()
        for record_id, score in direct:
            seen.add(record_id)
            out.append((view.entries[record_id], score, None))
        for record_id, _ in earlier:
            old = view.entries[record_id]
            current = current_of(old, view.entries)
            if current is None or current.id in seen:
                continue
            seen.add(current.id)
            out.append((current, None, old))
        return out

    def _reconcile(
        self,
        reading: Reading,
        scope: str,
        table: ProjectionTable,
        entries: list[AvailableRecord],
    ) -> str:
        """Bring one projection in line with ``entries``. When neither the scan nor the guards
        nor the stored projection changed since we last did it, there is nothing to do."""
        view, state = reading.view, reading.state
        key = (reading.cache_key or "", scope, table)
        stored = state.projection_version(scope, table)
        cached = self._reconciled.get(key) if reading.cache_key else None
        if stored is not None and cached == (view.scan.generation, view.guards_version, stored[0]):
            return stored[1]
        wanted = {e.id: e.scanned.sha256 for e in entries}

        def load(record_id: str) -> ProjectionRow:
            e = view.entries[record_id]
            return ProjectionRow(
                e.id, e.scanned.sha256, e.title, "\n".join(e.aliases), e.scanned.record.body
            )

        counter, indexed_at, _ = state.reconcile(scope, table, wanted, load)
        if reading.cache_key:
            self._reconciled[key] = (view.scan.generation, view.guards_version, counter)
        return indexed_at

    # knowledge_lookup --------------------------------------------------------------------------
    def lookup(
        self, user: User, project_id: str, store_id: str, request: LookupRequest
    ) -> LookupResult:
        """Exact id (case-sensitive), full title or alias, never fuzzy."""
        with self.reading(user, project_id, store_id, request.asOf) as reading:
            return stamped(self._lookup(reading.view, request), reading)

    def _lookup(self, view: StoreView, request: LookupRequest) -> LookupResult:
        filters = self._filters(view, request.kind, request.type, request.tag, request.lifecycle)
        in_scope = [e for e in view.entries.values() if self._in_scope(e, filters)]
        by_id = [e for e in in_scope if e.id == request.query]
        key = normalize_name(request.query)
        matches = by_id + [e for e in by_name(in_scope, request.query) if e.id != request.query]
        status: LookupStatus = (
            "missing" if not matches else "found" if len(matches) == 1 else "ambiguous"
        )
        known = set(view.entries)
        return LookupResult(
            query=request.query,
            status=status,
            hits=[
                citations.complete_hit(e, None, _lookup_fields(e, request.query, key), None, known)
                for e in matches
            ],
            coverage=self.coverage(view),
            freshness=Freshness(queried_at=utcnow(), scanned_at=view.scan.scanned_at),
        )

    # knowledge_records -------------------------------------------------------------------------
    def inventory(
        self, user: User, project_id: str, store_id: str, request: RecordsRequest
    ) -> RecordsResult:
        """knowledge_records: the exhaustive inventory of available records, by id."""
        with self.reading(user, project_id, store_id, request.asOf) as reading:
            return stamped(self._inventory(reading.view, request), reading)

    def _inventory(self, view: StoreView, request: RecordsRequest) -> RecordsResult:
        filters = self._filters(view, request.kind, request.type, request.tag, request.lifecycle)
        selected = sorted(
            (e for e in view.entries.values() if self._in_scope(e, filters)), key=lambda e: e.id
        )
        snapshot = self._snapshot(filters.scope(), selected)
        check_snapshot(request.snapshot, snapshot)
        page = selected[request.offset : request.offset + request.limit]
        end = request.offset + len(page)
        return RecordsResult(
            records=[_inventory_row(e) for e in page],
            total=len(selected),
            offset=request.offset,
            next_offset=end if end < len(selected) else None,
            snapshot=snapshot,
            coverage=self.coverage(view),
            freshness=Freshness(queried_at=utcnow(), scanned_at=view.scan.scanned_at),
        )

    # knowledge_record --------------------------------------------------------------------------
    def record(
        self,
        user: User,
        project_id: str,
        store_id: str,
        record_id: str,
        as_of: str | None = None,
    ) -> RecordResult:
        """One available record whole, with all its evidence locators (at ``as_of``, its
        revision current then)."""
        with self.reading(user, project_id, store_id, as_of) as reading:
            return stamped(self._record(reading.view, record_id), reading)

    def _record(self, view: StoreView, record_id: str) -> RecordResult:
        entry = view.entries.get(record_id)
        excluded = view.excluded.get(record_id)
        if excluded is not None:
            raise NotFound(
                f"record {record_id} is not available: {excluded.reason}",
                code="record_unavailable",
                param="record_id",
            )
        if entry is None:
            raise NotFound(
                f"record {record_id} not found or not available",
                code="record_not_found",
                param="record_id",
            )
        located = citations.evidence(entry, set(view.entries))
        return RecordResult(
            **_inventory_row(entry).model_dump(),
            summary=citations.summary(entry),
            front_matter=entry.front,
            body=entry.scanned.record.body,
            evidence=located,
            citation=citations.citation(entry),
            freshness=Freshness(queried_at=utcnow(), scanned_at=view.scan.scanned_at),
        )


def check_snapshot(given: str | None, current: str) -> None:
    """A page asked for with the snapshot of an earlier page must see the same records."""
    if given is not None and given != current:
        raise Conflict(
            "the records changed since that snapshot; restart from offset 0 without it",
            code="snapshot_changed",
            param="snapshot",
        )


def normalize_name(text: str) -> str:
    """NFKC, lowercase, trimmed, whitespace collapsed; never fuzzy."""
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def by_name(entries: Iterable[AvailableRecord], name: str) -> list[AvailableRecord]:
    """The records whose full title or an alias is ``name`` once both are normalised, by id:
    exact lookup's rule, shared by every tool that takes a record by name."""
    key = normalize_name(name)
    return sorted(
        (
            e
            for e in entries
            if normalize_name(e.title) == key or key in {normalize_name(a) for a in e.aliases}
        ),
        key=lambda e: e.id,
    )


def _lookup_fields(entry: AvailableRecord, query: str, key: str) -> list[str]:
    if entry.id == query:
        return ["id"]
    return ["title"] if normalize_name(entry.title) == key else ["aliases"]


def _inventory_row(entry: AvailableRecord) -> InventoryRow:
    return InventoryRow(
        id=entry.id,
        kind=entry.kind,
        type=entry.type,
        title=entry.title,
        lifecycle=entry.lifecycle,
        tags=entry.tags,
        path=entry.scanned.path,
        revision=entry.scanned.record.revision,
        sha256=entry.scanned.sha256,
    )


@overload
def entity_id(view: StoreView, entity: str) -> str: ...
@overload
def entity_id(view: StoreView, entity: None) -> None: ...
@overload
def entity_id(view: StoreView, entity: str | None) -> str | None: ...


def entity_id(view: StoreView, entity: str | None) -> str | None:
    """The record an entity filter names: its id, else the one record whose full title or
    alias it is (exact lookup's normalisation). Two or more such records are a 409 naming
    them; a name no record has is kept as given (it matches what declares it verbatim)."""
    if entity is None or entity in view.entries:
        return entity
    named = by_name(view.entries.values(), entity)
    if len(named) > 1:
        raise Conflict(
            f"entity {entity!r} is ambiguous: it is the title or alias of "
            f"{', '.join(e.id for e in named)}; name one by its id",
            code="ambiguous_entity",
            param="entity",
        )
    return named[0].id if named else entity
