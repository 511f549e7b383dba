"""Timeline building blocks over eligible records: source events, sources, links."""

from __future__ import annotations

import re
from dataclasses import dataclass

from naturali.contracts.records import SourceSummary, TimelineRow
from naturali.retrieval.records import citations
from naturali.retrieval.records.eligibility import AvailableRecord
from naturali.vault.dates import Interval, record_dates

_LINK = re.compile(r"\[\[([^\]|#]+)(?:[|#][^\]]*)?\]\]|\]\(([^)\s]+)\)")


@dataclass(frozen=True)
class DatedHit:
    entry: AvailableRecord
    field: str
    interval: Interval


def sources_of(entry: AvailableRecord) -> list[str]:
    value = entry.front.get("sources")
    return [str(s) for s in value] if isinstance(value, list) else []


def source_events_replace_meetings(hits: list[DatedHit]) -> list[DatedHit]:
    """A claim with ``source_event: true`` stands for its source meeting on occurrence
    timelines: the meeting page's own row gives way to it."""
    replaced = {
        source
        for h in hits
        if h.entry.kind == "claim" and h.entry.front.get("source_event") is True
        for source in sources_of(h.entry)
    }
    return [h for h in hits if not (h.entry.kind == "page" and h.entry.id in replaced)]


def links(entry: AvailableRecord, entries: dict[str, AvailableRecord]) -> list[str]:
    found = []
    for match in _LINK.finditer(entry.scanned.record.body):
        target = (match.group(1) or match.group(2) or "").strip()
        if target in entries and target not in found:
            found.append(target)
    return found


def sources(entries: dict[str, AvailableRecord], rows: list[TimelineRow]) -> list[SourceSummary]:
    """The sources the rows cite or stand for, each once, in the rows' order."""
    seen: list[str] = []
    for row in rows:
        entry = entries.get(row.id)
        for source in sources_of(entry) if entry else []:
            if source in entries and source not in seen:
                seen.append(source)
        if row.source is not None and row.source.id not in seen:
            seen.append(row.source.id)
    out = []
    for source_id in seen:
        entry = entries[source_id]
        dated = record_dates(entry.kind, entry.front).get("occurred_at")
        out.append(
            SourceSummary(
                id=entry.id,
                type=entry.type,
                title=entry.title,
                date=dated.written if dated else None,
                summary=citations.summary(entry),
            )
        )
    return out


def dated(entries: dict[str, AvailableRecord], record_id: str) -> Interval | None:
    entry = entries.get(record_id)
    if entry is None:
        return None
    return record_dates(entry.kind, entry.front).get("occurred_at")


def event_claims(entries: dict[str, AvailableRecord], source: str) -> list[AvailableRecord]:
    return sorted(
        (
            e
            for e in entries.values()
            if e.kind == "claim" and e.front.get("source_event") is True and source in sources_of(e)
        ),
        key=lambda e: e.id,
    )
