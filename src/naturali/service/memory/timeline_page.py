"""A timeline's answer: each dated hit as a row, a page of rows within the response budget
(24 KiB, at least one row) with the dated sources they cite, and the snapshot that later
pages of the same query must match."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any
from zoneinfo import ZoneInfo

from naturali.contracts.records import (
    DateValue,
    Freshness,
    IndexState,
    TimelineResult,
    TimelineRow,
)
from naturali.contracts.wire import WireModel
from naturali.model import utcnow
from naturali.retrieval.records import citations, timeline
from naturali.retrieval.records.timeline import DatedHit
from naturali.service.corpus.reading import coverage
from naturali.service.memory.stores import StoreView
from naturali.service.requests import Paged
from naturali.vault.dates import entity_links, from_us

BUDGET_BYTES = 24 * 1024
READY = IndexState(state="ready", lag=False)


def row(hit: DatedHit, zone: ZoneInfo | None = None) -> TimelineRow:
    entry, interval = hit.entry, hit.interval
    when = DateValue(
        field=hit.field,
        value=interval.written,
        date_only=interval.date_only,
        start=iso(interval.start),
        end=iso(interval.end if interval.date_only else interval.start),
    )
    if zone is not None:
        when.local = (
            interval.written
            if interval.date_only
            else from_us(interval.start).astimezone(zone).isoformat()
        )
    return TimelineRow(
        id=entry.id,
        kind=entry.kind,
        type=entry.type,
        title=entry.title,
        lifecycle=entry.lifecycle,
        summary=citations.summary(entry),
        date=when,
        entities=sorted(entity_links(entry.front)),
        path=entry.scanned.path,
        revision=entry.scanned.record.revision,
        sha256=entry.scanned.sha256,
        citation=citations.citation(entry),
    )


def page(
    view: StoreView,
    items: Sequence[Any],
    build: Callable[[Any], TimelineRow],
    page: tuple[int, int],
    extra: dict[str, Any],
    with_sources: bool = False,
) -> TimelineResult:
    """Rows from offset (built only for the page), as many as ``limit`` allows within the
    24 KiB budget (at least one); then deduplicated source summaries while they fit.
    ``extra`` holds the snapshot and, for a chronicle day, its window."""
    offset, limit = page
    result = TimelineResult(
        **extra,
        rows=[],
        total=len(items),
        offset=offset,
        next_offset=None,
        budget_truncated=False,
        index=READY,
        coverage=coverage(view),
        freshness=freshness(view),
    )
    size = _size(result)
    for item in items[offset : offset + limit]:
        row = build(item)
        cost = _size(row) + 2
        if result.rows and size + cost > BUDGET_BYTES:
            result.budget_truncated = True
            break
        result.rows.append(row)
        size += cost
    end = offset + len(result.rows)
    result.next_offset = end if end < len(items) else None
    if with_sources:
        _add_sources(view, result, size)
    return result


def _add_sources(view: StoreView, result: TimelineResult, size: int) -> None:
    result.sources, result.sources_truncated = [], False
    size += len(json.dumps({"sources": [], "sourcesTruncated": False}))
    for source in timeline.sources(view.entries, result.rows):
        cost = _size(source) + 2
        if size + cost > BUDGET_BYTES:
            result.sources_truncated = True
            break
        result.sources.append(source)
        size += cost


def freshness(view: StoreView) -> Freshness:
    return Freshness(queried_at=utcnow(), scanned_at=view.scan.scanned_at)


def _size(model: WireModel) -> int:
    """What a part adds to the response, measured as the budget always measured it."""
    return len(json.dumps(model.wire()))


def iso(value: int) -> str:
    return from_us(value).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def params(request: Paged) -> str:
    """What a snapshot covers besides the records: every filter, not the page asked for."""
    return request.model_dump_json(exclude={"offset", "limit", "snapshot"})


def pairs(hits: list[DatedHit]) -> list[tuple[str, str]]:
    return [(h.entry.id, h.entry.scanned.sha256) for h in hits]


def snapshot(pairs: list[tuple[str, str]], params: str) -> str:
    digest = hashlib.sha256(params.encode())
    for record_id, sha in pairs:
        digest.update(f"{record_id}:{sha};".encode())
    return digest.hexdigest()[:32]
