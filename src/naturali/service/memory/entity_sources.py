"""How an entity reaches dated sources (meetings and other dated pages): by a relationship
whose other endpoint is the source, or by a claim about the entity that cites the source.
Shared by the entity's source-grouped timeline and by last seen."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from naturali.contracts.records import SourceRef, TimelineRow
from naturali.retrieval.records import timeline
from naturali.retrieval.records.eligibility import AvailableRecord
from naturali.retrieval.records.timeline import DatedHit
from naturali.service.corpus.reading import Reading
from naturali.service.memory.stores import StoreView
from naturali.vault.dates import parse_record_value, record_dates


def is_current(entry: AvailableRecord, include_inactive: bool, now_us: int) -> bool:
    """Active and not expired; include_inactive adds superseded and expired (withdrawn
    records are never in the view)."""
    if include_inactive:
        return True
    if entry.lifecycle != "active":
        return False
    expiry = parse_record_value(entry.front.get("valid_until") or entry.front.get("expires_at"))
    return expiry is None or expiry.end > now_us


@dataclass
class Linked:
    """What connects an entity to dated sources: relationship notes and sourced claims by
    source id, and the entity's dated claims that no source places."""

    notes: dict[str, AvailableRecord]
    claims: dict[str, list[AvailableRecord]]
    own_rows: list[DatedHit]

    @property
    def sources(self) -> list[str]:
        """Every source linked to the entity, by relationship or sourced claim."""
        return sorted(set(self.notes) | set(self.claims))


def linked_sources(reading: Reading, entity: str, include_inactive: bool) -> Linked:
    view, now_us = reading.view, reading.now_us()
    linked = Linked({}, {}, [])
    for record_id, via in reading.state.entity_records(entity).items():
        entry = view.entries.get(record_id)
        if entry is None or not is_current(entry, include_inactive, now_us):
            continue
        if entry.kind == "relationship" and via == "endpoint":
            other = {str(entry.front.get("from")), str(entry.front.get("to"))} - {entity}
            for source in other:
                if timeline.dated(view.entries, source) is not None:
                    linked.notes.setdefault(source, entry)
        elif entry.kind == "claim" and via in ("entity", "owner"):
            claim_date = record_dates(entry.kind, entry.front).get("occurred_at")
            placed = False
            for source in timeline.sources_of(entry):
                source_date = timeline.dated(view.entries, source)
                if source_date is None:
                    continue
                if claim_date is not None and not claim_date.overlaps(
                    source_date.start, source_date.end
                ):
                    continue  # dated outside its source's date: keeps its own row
                linked.claims.setdefault(source, []).append(entry)
                placed = True
            if not placed and claim_date is not None:
                linked.own_rows.append(DatedHit(entry, "occurred_at", claim_date))
    return linked


def source_hits(view: StoreView, linked: Linked) -> list[DatedHit]:
    """The dated sources connected to an entity, each as a hit dated by the source."""
    hits = []
    for source in linked.sources:
        source_date = timeline.dated(view.entries, source)
        assert source_date is not None
        hits.append(DatedHit(view.entries[source], "occurred_at", source_date))
    return hits


def source_rows(
    reading: Reading,
    entity: str,
    bounds: tuple[int | None, int | None],
    include_inactive: bool,
    as_row: Callable[[DatedHit], TimelineRow],
) -> list[TimelineRow]:
    """group "source": one row per dated source connected to the entity by a relationship or
    a sourced claim, dated by the source; other dated claims keep their own rows."""
    view, (start, end) = reading.view, bounds
    linked = linked_sources(reading, entity, include_inactive)
    rows = []
    for hit in source_hits(view, linked):
        if not hit.interval.overlaps(start, end):
            continue
        source = hit.entry.id
        row = as_row(hit)
        note = linked.notes.get(source)
        event = next((c for c in timeline.event_claims(view.entries, source)), None)
        summary_from = note or event
        row.source = SourceRef(id=source, title=hit.entry.title, type=hit.entry.type)
        row.note_record = note.id if note else None
        row.event_claim = event.id if event and not note else None
        if summary_from:
            row.summary = summary_from.scanned.record.body.strip()
        row.claims = len(linked.claims.get(source, []))
        row.links = timeline.links(summary_from, view.entries) if summary_from else []
        rows.append(row)
    rows += [as_row(h) for h in linked.own_rows if h.interval.overlaps(start, end)]
    return rows
