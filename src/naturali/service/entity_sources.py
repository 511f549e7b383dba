"""How an entity reaches dated sources (meetings and other dated pages): by a relationship
whose other endpoint is the source, or by a claim about the entity that cites the source.
Shared by the entity's source-grouped timeline and by last seen."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from naturali.retrieval import timeline
from naturali.retrieval.dates import parse_record_value, record_dates, to_us
from naturali.retrieval.eligibility import AvailableRecord
from naturali.retrieval.timeline import DatedHit
from naturali.service.stores import OpenStore, StoreView


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


def linked_sources(
    opened: OpenStore, view: StoreView, entity: str, include_inactive: bool
) -> Linked:
    now_us = to_us(datetime.now().astimezone())
    linked = Linked({}, {}, [])
    for record_id, via in opened.state.entity_records(entity).items():
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
