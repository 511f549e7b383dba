"""Dates and chronicle (docs/spec/retrieval-and-dates.md, "Dates and Chronicle"): timeline,
chronicle day / since / last seen, over the temporal projections of a store's state.sqlite."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from naturali.contracts.records import (
    IndexState,
    LastSeenResult,
    TimelineResult,
)
from naturali.errors import InvalidRequest
from naturali.model import User
from naturali.ports.state import ProjectionUnavailable, TemporalRow
from naturali.retrieval.records import timeline
from naturali.retrieval.records.eligibility import AvailableRecord
from naturali.retrieval.records.timeline import DatedHit
from naturali.service.corpus.reading import Reader, Reading, check_snapshot, coverage, stamped
from naturali.service.memory import timeline_page
from naturali.service.memory.entity_sources import (
    is_current,
    linked_sources,
    source_hits,
    source_rows,
)
from naturali.service.memory.record_names import entity_id
from naturali.service.memory.record_requests import (
    ChronicleDayRequest,
    ChronicleSinceRequest,
    LastSeenRequest,
    TimelineRequest,
)
from naturali.service.memory.stores import StoreView
from naturali.vault.dates import (
    Interval,
    entity_links,
    parse_bound,
    parse_range,
    record_dates,
    to_us,
)

_UNAVAILABLE = IndexState(state="unavailable", lag=True)


class IndexUnavailable(Exception):
    def __init__(self, view: StoreView) -> None:
        super().__init__("the date index is unavailable")
        self.view = view


FINGERPRINT = "temporal-v1:occurred,recorded,updated,due:entities,owner,endpoints,sources,self"


class Dates:
    def __init__(self, reader: Reader) -> None:
        self._reader = reader
        self._reconciled: dict[str, tuple[int, int, int]] = {}
        self._date_cache: dict[str, dict[str, Interval]] = {}

    # shared ------------------------------------------------------------------------------------
    @contextmanager
    def _reading(
        self, user: User, project_id: str, store_id: str, as_of: str | None
    ) -> Iterator[Reading]:
        """The store (now, or at ``as_of``) with its temporal projection reconciled; a
        projection that cannot be read or written (a locked state.sqlite) is
        ``IndexUnavailable``."""
        with self._reader.reading(user, project_id, store_id, as_of) as reading:
            try:
                self._reconcile(reading)
            except ProjectionUnavailable as exc:
                raise IndexUnavailable(reading.view) from exc
            yield reading

    def _unavailable(self, view: StoreView, offset: int) -> TimelineResult:
        """A failed retrieval, as knowledge_grep reports one: 200, ``index.state``
        "unavailable", ``total`` null. Retry."""
        return TimelineResult(
            rows=[],
            total=None,
            offset=offset,
            next_offset=None,
            budget_truncated=False,
            snapshot=None,
            index=_UNAVAILABLE,
            coverage=coverage(view),
            freshness=timeline_page.freshness(view),
        )

    def _reconcile(self, reading: Reading) -> None:
        view, key = reading.view, reading.cache_key
        marker = (view.scan.generation, view.guards_version)
        cached = self._reconciled.get(key) if key else None
        if cached is not None and cached[:2] == marker:
            return
        wanted = {e.id: _projected_hash(e, view) for e in view.entries.values()}

        def load(record_id: str) -> TemporalRow:
            entry = view.entries[record_id]
            dates = self._dated(view, entry)
            links = {record_id: "self", **entity_links(entry.front)}
            return TemporalRow(
                record_id,
                wanted[record_id],
                tuple((f, i.start, i.end, i.date_only) for f, i in dates.items()),
                tuple(links.items()),
            )

        counter, _ = reading.state.reconcile_temporal(wanted, load, FINGERPRINT)
        if key:
            self._reconciled[key] = (*marker, counter)

    def _dates(self, entry: AvailableRecord) -> dict[str, Interval]:
        """A record's parsed dates, cached per file content."""
        cached = self._date_cache.get(entry.scanned.sha256)
        if cached is None:
            if len(self._date_cache) > 200_000:
                self._date_cache.clear()
            cached = self._date_cache[entry.scanned.sha256] = record_dates(entry.kind, entry.front)
        return cached

    def _dated(self, view: StoreView, entry: AvailableRecord) -> dict[str, Interval]:
        """A record's dates; a source-event claim with no occurrence date of its own takes
        its source's, since it stands for that meeting on occurrence timelines."""
        own = self._dates(entry)
        source = _event_source(entry, view)
        if source is None:
            return own
        inherited = timeline.dated(view.entries, source)
        return {**own, "occurred_at": inherited} if inherited is not None else own

    def _hits(
        self,
        reading: Reading,
        field: str,
        start: int | None,
        end: int | None,
        entity: str | None,
        *,
        kind: str | None = None,
        include_inactive: bool = False,
    ) -> list[DatedHit]:
        view, now_us = reading.view, reading.now_us()
        hits = []
        for record_id, _, _ in reading.state.temporal_range(field, start, end, entity):
            entry = view.entries.get(record_id)
            if entry is None or not is_current(entry, include_inactive, now_us):
                continue
            if kind is not None and str(entry.front.get("type") or "") != kind:
                continue
            interval = self._dated(view, entry).get(field)
            if interval is not None:
                hits.append(DatedHit(entry, field, interval))
        if field == "occurred_at" and kind != "meeting":
            hits = timeline.source_events_replace_meetings(hits)
        return hits

    # knowledge_timeline ------------------------------------------------------------------------
    def timeline(
        self, user: User, project_id: str, store_id: str, request: TimelineRequest
    ) -> TimelineResult:
        """knowledge_timeline: dated records in a range, or one row per dated source of an
        entity (``group`` "source")."""
        if request.group == "source":
            if request.entity is None:
                raise InvalidRequest(
                    'group "source" needs an entity', code="missing_entity", param="entity"
                )
            if request.kind is not None:
                raise InvalidRequest(
                    'group "source" takes no kind filter', code="invalid_kind", param="kind"
                )
            if request.timeField != "occurred_at":
                raise InvalidRequest(
                    'group "source" uses occurrence time only',
                    code="invalid_time_field",
                    param="timeField",
                )
        start, end = parse_range(request.since, request.until)
        try:
            with self._reading(user, project_id, store_id, request.asOf) as reading:
                return stamped(self._timeline(reading, request, start, end), reading)
        except IndexUnavailable as exc:
            return self._unavailable(exc.view, request.offset)

    def _timeline(
        self, reading: Reading, request: TimelineRequest, start: int | None, end: int | None
    ) -> TimelineResult:
        view = reading.view
        include = request.eligibility == "include_inactive"
        params = timeline_page.params(request)
        descending = request.order == "desc"
        entity = entity_id(view, request.entity)
        if request.group == "source":
            assert entity is not None
            rows = source_rows(reading, entity, (start, end), include, timeline_page.row)
            rows.sort(key=lambda r: (r.date.start, r.id), reverse=descending)
            extra = {"snapshot": timeline_page.snapshot([(r.id, r.sha256) for r in rows], params)}
            check_snapshot(request.snapshot, extra["snapshot"])
            return timeline_page.page(
                view,
                rows,
                lambda r: r,
                (request.offset, request.limit),
                extra,
                request.includeSources,
            )
        hits = self._hits(
            reading,
            request.timeField,
            start,
            end,
            entity,
            kind=request.kind,
            include_inactive=include,
        )
        hits.sort(key=lambda h: (h.interval.start, h.entry.id), reverse=descending)
        extra = {"snapshot": timeline_page.snapshot(timeline_page.pairs(hits), params)}
        check_snapshot(request.snapshot, extra["snapshot"])
        return timeline_page.page(
            view,
            hits,
            timeline_page.row,
            (request.offset, request.limit),
            extra,
            request.includeSources,
        )

    # chronicle ---------------------------------------------------------------------------------
    def chronicle_day(
        self, user: User, project_id: str, store_id: str, request: ChronicleDayRequest
    ) -> TimelineResult:
        """What occurred on one day, or its Monday–Sunday week, in an IANA time zone."""
        zone = _zone(request.timeZone)
        try:
            day = date.fromisoformat(request.date)
        except ValueError:
            raise InvalidRequest(
                f"date must be a real YYYY-MM-DD, got {request.date!r}",
                code="invalid_date",
                param="date",
            ) from None
        if len(request.date) != 10:
            raise InvalidRequest("date must be YYYY-MM-DD", code="invalid_date", param="date")
        try:
            first = day - timedelta(days=day.weekday()) if request.week else day
            last = first + timedelta(days=7 if request.week else 1)
            start = to_us(datetime(first.year, first.month, first.day, tzinfo=zone))
            end = to_us(datetime(last.year, last.month, last.day, tzinfo=zone))
        except (OverflowError, ValueError):
            raise InvalidRequest(
                f"date {request.date!r} is out of the range of dates (years 1 to 9999)",
                code="invalid_date",
                param="date",
            ) from None
        try:
            with self._reading(user, project_id, store_id, request.asOf) as reading:
                hits = self._hits(reading, "occurred_at", start, end, None, kind=request.kind)
        except IndexUnavailable as exc:
            return self._unavailable(exc.view, request.offset)
        view = reading.view
        hits.sort(key=lambda h: (h.interval.start, h.entry.id))
        snapshot = timeline_page.snapshot(timeline_page.pairs(hits), timeline_page.params(request))
        check_snapshot(request.snapshot, snapshot)
        extra = {
            "date": request.date,
            "week": request.week,
            "time_zone": request.timeZone,
            "from": first.isoformat(),
            "to": (last - timedelta(days=1)).isoformat(),
            "snapshot": snapshot,
        }
        page = timeline_page.page(
            view, hits, lambda h: timeline_page.row(h, zone), (request.offset, request.limit), extra
        )
        return stamped(page, reading)

    def chronicle_since(
        self, user: User, project_id: str, store_id: str, request: ChronicleSinceRequest
    ) -> TimelineResult:
        """What happened in an occurrence-time range, oldest first."""
        start, end = parse_range(request.since, request.until)
        try:
            with self._reading(user, project_id, store_id, request.asOf) as reading:
                entity = entity_id(reading.view, request.entity)
                hits = self._hits(reading, "occurred_at", start, end, entity, kind=request.kind)
        except IndexUnavailable as exc:
            return self._unavailable(exc.view, request.offset)
        view = reading.view
        hits.sort(key=lambda h: (h.interval.start, h.entry.id))
        extra = {
            "snapshot": timeline_page.snapshot(
                timeline_page.pairs(hits), timeline_page.params(request)
            )
        }
        check_snapshot(request.snapshot, extra["snapshot"])
        page = timeline_page.page(
            view, hits, timeline_page.row, (request.offset, request.limit), extra
        )
        return stamped(page, reading)

    def last_seen(
        self, user: User, project_id: str, store_id: str, request: LastSeenRequest
    ) -> LastSeenResult:
        """The latest dated context of an entity at or before a time (default now)."""
        bound = request.occurredOnOrBefore
        end = (
            parse_bound(bound, "occurredOnOrBefore", upper=True)
            if bound
            else to_us(datetime.now().astimezone()) + 1
        )
        try:
            with self._reading(user, project_id, store_id, request.asOf) as reading:
                result = self._last_seen(reading, request, end)
        except IndexUnavailable as exc:
            return LastSeenResult(
                entity=request.entity,
                occurred_on_or_before=bound or timeline_page.iso(end - 1),
                found=None,
                last_seen=None,
                index=_UNAVAILABLE,
                coverage=coverage(exc.view),
                freshness=timeline_page.freshness(exc.view),
            )
        return stamped(result, reading)

    def _last_seen(self, reading: Reading, request: LastSeenRequest, end: int) -> LastSeenResult:
        view, bound = reading.view, request.occurredOnOrBefore
        # What the entity's own timeline shows: its dated records, and the dated sources a
        # relationship or a sourced claim connects it to (as group "source" lists them).
        entity = entity_id(view, request.entity)
        linked = linked_sources(reading, entity, include_inactive=False)
        hits = [
            h
            for h in self._hits(reading, "occurred_at", None, end, entity)
            + source_hits(view, linked)
            if (h.entry.id != entity or h.entry.kind != "page") and h.interval.overlaps(None, end)
        ]
        latest = max(hits, key=lambda h: (h.interval.start, h.entry.id), default=None)
        return LastSeenResult(
            entity=request.entity,
            occurred_on_or_before=bound or timeline_page.iso(end - 1),
            found=latest is not None,
            last_seen=timeline_page.row(latest) if latest else None,
            index=timeline_page.READY,
            coverage=coverage(view),
            freshness=timeline_page.freshness(view),
        )


def _event_source(entry: AvailableRecord, view: StoreView) -> str | None:
    """The source whose date a source-event claim without ``occurred_at`` takes."""
    if entry.kind != "claim" or entry.front.get("source_event") is not True:
        return None
    if "occurred_at" in record_dates(entry.kind, entry.front):
        return None
    return next((s for s in timeline.sources_of(entry) if s in view.entries), None)


def _projected_hash(entry: AvailableRecord, view: StoreView) -> str:
    """What the temporal row of a record depends on: its file, and for a source-event claim
    that takes its source's date, the source's file too."""
    source = _event_source(entry, view)
    if source is None:
        return entry.scanned.sha256
    return f"{entry.scanned.sha256}+{view.entries[source].scanned.sha256}"


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidRequest(
            f"unknown IANA time zone {name!r}", code="invalid_time_zone", param="timeZone"
        ) from None
