"""The records tools over a memory store's vault (docs/spec/retrieval-and-dates.md):
knowledge_grep, knowledge_lookup, knowledge_records, knowledge_record.

Markdown is authoritative: every call scans first (reusing what has not changed), and
knowledge_grep reconciles its scope's FTS5 projections before it matches.
"""

from __future__ import annotations

from dataclasses import replace

from naturali.contracts.records import (
    CompleteHit,
    Freshness,
    GrepResult,
    IndexState,
    InventoryRow,
    LookupResult,
    LookupStatus,
    RecordResult,
    RecordsResult,
)
from naturali.errors import NotFound
from naturali.model import User, utcnow
from naturali.ports.state import MatchMode, ProjectionRow, ProjectionTable, ProjectionUnavailable
from naturali.retrieval.records import citations
from naturali.retrieval.records.eligibility import AvailableRecord, current_of
from naturali.retrieval.records.keyword import Filters, fields_matched, query_tokens
from naturali.service.corpus.reading import (
    Reader,
    Reading,
    check_snapshot,
    coverage,
    filters_of,
    in_scope,
    selection,
    snapshot_of,
    stamped,
)
from naturali.service.memory.record_names import by_name, normalize_name
from naturali.service.memory.record_requests import GrepRequest, LookupRequest, RecordsRequest
from naturali.service.memory.stores import StoreView
from naturali.vault.dates import parse_range


class Records:
    def __init__(self, reader: Reader) -> None:
        self._reader = reader
        self._reconciled: dict[tuple[str, str, ProjectionTable], tuple[int, int, int]] = {}

    # knowledge_grep ----------------------------------------------------------------------------
    def grep(self, user: User, project_id: str, store_id: str, request: GrepRequest) -> GrepResult:
        """Keyword search (BM25 over title, aliases, body) of one store's records."""
        with self._reader.reading(user, project_id, store_id, request.asOf) as reading:
            return stamped(self._grep(reading, request), reading)

    def _grep(self, reading: Reading, request: GrepRequest) -> GrepResult:
        view = reading.view
        tokens = query_tokens(request.query)
        filters = filters_of(view, request.kind, request.type, request.tag, request.lifecycle)
        if request.since is not None or request.until is not None:
            since, until = parse_range(request.since, request.until)
            filters = replace(filters, time_field=request.timeField, since=since, until=until)
        searched, history, snapshot = selection(view, filters)
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
                coverage=coverage(view),
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
            coverage=coverage(view),
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
        with self._reader.reading(user, project_id, store_id, request.asOf) as reading:
            return stamped(self._lookup(reading.view, request), reading)

    def _lookup(self, view: StoreView, request: LookupRequest) -> LookupResult:
        filters = filters_of(view, request.kind, request.type, request.tag, request.lifecycle)
        scoped = [e for e in view.entries.values() if in_scope(e, filters)]
        by_id = [e for e in scoped if e.id == request.query]
        key = normalize_name(request.query)
        matches = by_id + [e for e in by_name(scoped, request.query) if e.id != request.query]
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
            coverage=coverage(view),
            freshness=Freshness(queried_at=utcnow(), scanned_at=view.scan.scanned_at),
        )

    # knowledge_records -------------------------------------------------------------------------
    def inventory(
        self, user: User, project_id: str, store_id: str, request: RecordsRequest
    ) -> RecordsResult:
        """knowledge_records: the exhaustive inventory of available records, by id."""
        with self._reader.reading(user, project_id, store_id, request.asOf) as reading:
            return stamped(self._inventory(reading.view, request), reading)

    def _inventory(self, view: StoreView, request: RecordsRequest) -> RecordsResult:
        filters = filters_of(view, request.kind, request.type, request.tag, request.lifecycle)
        selected = sorted(
            (e for e in view.entries.values() if in_scope(e, filters)), key=lambda e: e.id
        )
        snapshot = snapshot_of(filters.scope(), selected)
        check_snapshot(request.snapshot, snapshot)
        page = selected[request.offset : request.offset + request.limit]
        end = request.offset + len(page)
        return RecordsResult(
            records=[_inventory_row(e) for e in page],
            total=len(selected),
            offset=request.offset,
            next_offset=end if end < len(selected) else None,
            snapshot=snapshot,
            coverage=coverage(view),
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
        with self._reader.reading(user, project_id, store_id, as_of) as reading:
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
